"""The model's drain path (engine/models/symbolic.py): a drain module's transfers start once the PEs'
first event is computed, sent, and summed along a reduction chain of PEs to the PE whose results
leave it. Checked against the cycle simulator, which agrees with the timed C simulation of the export
on this design (bench/bench_fidelity.py, docs/sim.md item 7)."""
from __future__ import annotations

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import DramModel, simulate


def test_a_drain_waits_for_the_first_event_summed_along_the_pes_reduction_chain():
    """MM j-k__i-k.j: k is a space loop, so each PE's drain adds its results to the previous PE's
    along k, and C leaves from the last PE of each k row; C_L2_out's head sends 36 words an event,
    more than the PEs' 30 cycles, so its five events run back to back after the first one is in.
    The simulator's passes take 470 cycles each; the model said 425 (its drain started one PE block
    after the prologue, not after the first event's computation, send and 11 hops along k)."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "60", "J": "50", "K": "70", "DATA_T": "int8_t"})
    model = PerformanceModel(space, space.design("j-k__i-k.j"), load_device())
    params = {"i_t1": 6, "j_t1": 12, "k_t1": 12, "j_t2": 4, "i_t2": 1}
    latency = evaluate_configuration(model, params)["latency_cycles"]
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    simulated = simulate(descriptor, values, dram=DramModel(model.device.dram_ports())).cycles
    assert simulated == 60 * 470
    assert abs(latency / simulated - 1) < 0.02


def test_a_collecting_drain_sends_once_the_last_pe_of_the_reduction_chain_has_its_box_in():
    """MM j-k__i-j.k 64^3, the tuner's best (one output tile): C is summed along k from PE to PE, each
    PE 17 cycles (a 16-element word and a hop) after the one before, and C_L2_out's head collects the
    box of the last PE of its k chain before it sends the 8 instances' 256 words. The model had the
    head send from when the first PE's results were out: 1,457 cycles against the simulator's 1,603
    (timed C simulation of the export 1,589)."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "64", "J": "64", "K": "64"})
    model = PerformanceModel(space, space.design("j-k__i-j.k"), load_device())
    params = {"i_t1": 64, "i_t2": 16, "j_t1": 64, "j_t2": 8, "k_t1": 8}
    latency = evaluate_configuration(model, params)["latency_cycles"]
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    simulated = simulate(descriptor, values, dram=DramModel(model.device.dram_ports())).cycles
    assert simulated == 1603
    assert abs(latency / simulated - 1) < 0.01
