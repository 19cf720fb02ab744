"""A DRAM-facing storer that streams (no box collected, no block gathered) is one pipelined loop a
run: the exporter writes its tile, PE and box loops as one perfect nest, which HLS flattens
(engine/export/io_modules.py `_drain`). Its port then paces the words from the first one on and
catches up on an event's words that come after a stall, as the timed C simulation of the export
runs it: the simulator runs it as one segment, and the model's epilogue passes the last event's words
at the loop's own II (the port-paced whole is the storer's own path). docs/sim.md item 9."""
from __future__ import annotations

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import DramModel, simulate
from engine.sim.hardware import build_network

# partial results of fo read back pass by pass through a natural port: one-beat bursts, 65/16 cycles a
# word; 2 o tiles (events) a pass, 5 x 4 words each
PARAMS = {"o_t1": 5, "h_t1": 4, "w_t1": 1, "i_t1": 2, "p_t1": 3, "q_t1": 3, "o_t2": 1, "h_t2": 1, "w_t2": 1,
          "q_t2": 1}


@pytest.fixture(scope="module")
def prepared():
    space = compile_kernel(KERNELS / "cnn.c", defines={"O": "10", "I": "4", "H": "4", "W": "2", "P": "3", "Q": "3"})
    model = PerformanceModel(space, space.design("h-i__h-w-i-p-q.o"), load_device())
    values = {**PARAMS, **{k: int(v) for k, v in model.inferred_packing(PARAMS).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    return model, descriptor, values


def test_the_storer_is_one_paced_loop_a_pass(prepared):
    model, descriptor, values = prepared
    dram = DramModel(model.device.dram_ports())
    pass_view = {**descriptor, "io_groups": descriptor["passes"]["reload"]["io_groups"],
                 "topology": descriptor["passes"]["reload"]["topology"], "port_io_groups": descriptor["io_groups"]}
    threads = {t.name: t for t in build_network(pass_view, values, dram).threads}
    segments = list(threads["fo_L3_out"].segments)
    assert len(segments) == 1 and segments[0].n == 2 * 5 * 4
    assert segments[0].pace == pytest.approx(65 / 16)


def test_model_and_simulator_see_the_storer_catch_up(prepared):
    """Timed C simulation of the export 3,956 cycles (bench/bench_fidelity.py --config, the case in
    tests/engine/csim/fidelity_cases.py READ_BACK); paced per event, the model said 4,181 and the
    simulator 4,184 (4 passes of 1,046)."""
    model, descriptor, values = prepared
    simulated = simulate(descriptor, values, dram=DramModel(model.device.dram_ports()))
    assert simulated.cycles == 4 * 988
    latency = evaluate_configuration(model, PARAMS)["latency_cycles"]
    assert abs(latency / simulated.cycles - 1) < 0.01
