"""A word a PE's pipelined loop sends to the next PE leaves at the stage of the iteration where its
value is computed, not at the iteration's issue (engine/compiler/architecture/pe.py
`pipelined_ready`), charged alike by the timed C simulation, the simulator and the model.

LU's array along k and j (AutoSA's configuration): V, passed down k, is the multiply-subtract of
L_tmp, which the PE divided one iteration earlier (i = k). HLS gives every iteration the same
schedule, so the multiply waits for the division less one II and V leaves 16 - 1 + 4 + 8 = 27
cycles into its iteration; each PE down a column of the array adds that to the wavefront.
"""
from __future__ import annotations

import re
import shutil

import pytest

from engine.compiler.architecture.build import OPERATORS
from engine.compiler.architecture.pe import pipelined_ready, send_stages
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export.project import export_project
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim.dram import DramModel
from engine.sim.hardware import build_network
from engine.sim.segments import IO_LATENCY
from engine.sim import simulate
from engine.sim.kernel import Fifo, Op, Segment, Thread, run

FLOAT = OPERATORS["float"]
V_STAGE = FLOAT["div"]["latency"] - 1 + FLOAT["mul"]["latency"] + FLOAT["add"]["latency"]  # 27
N = 8


def _lu(design_id: str = "k-j__k-j-i"):
    space = compile_kernel(KERNELS / "lu.c", defines=[f"N={N}"])
    design = space.design(design_id)
    model = shared_model(space, design, load_device("u250"))
    params = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
    report = evaluate_configuration(model, params)
    return space, design, params, report, build_descriptor(space, design, model.architecture)


def test_a_value_read_from_the_iteration_before_waits_for_its_writers_stage():
    statements = [  # b = a / c (one iteration), then d = b(previous iteration) * e
        {"name": "S0", "target": "b", "inputs": [], "from": {"a": 16, "c": 16}},
        {"name": "S1", "target": "b", "inputs": [], "from": {"b": 0}},
        {"name": "S2", "target": "d", "inputs": ["S1"], "from": {"b": 4, "e": 4}},
    ]
    assert pipelined_ready(statements, {}, 1)["d"] == 4  # same-iteration chain only
    assert pipelined_ready(statements, {"b": 1}, 1)["d"] == 16 - 1 + 4
    assert pipelined_ready(statements, {"b": 4}, 2)["d"] == 16 - 8 + 4  # 8 cycles later
    assert pipelined_ready(statements, {"b": 8}, 2)["d"] == 4  # 16 cycles later: the division is done
    # a cycle through carried reads longer than its iterations allow: the same-iteration stages
    loop = [{"name": "S0", "target": "x", "inputs": [], "from": {"x": 16}}]
    assert pipelined_ready(loop, {"x": 1}, 1) == pipelined_ready(loop, {}, 1)


def test_lu_sends_v_after_the_division_and_the_multiply_subtract():
    _, _, _, report, descriptor = _lu()
    stages = send_stages(descriptor, {**report["params"]})
    assert stages == {"V": V_STAGE, "U_tmp": 0}
    pe = next(m for m in descriptor["topology"]["modules"] if m["kind"] == "pe")
    assert pe["pipeline_depth"] == V_STAGE + 2  # the last iteration completes that late too


def test_a_written_tokens_delay_adds_to_its_arrival():
    def arrival(delay: int) -> int:
        f = Fifo("f", 2)
        writer = Thread("w", "w", [Segment(1, writes=(Op(f, 1, delay=delay),), latency=IO_LATENCY)])
        reader = Thread("r", "r", [Segment(1, reads=(Op(f, 1),), depth=1)])
        run([writer, reader], [f], 10_000)
        return reader.end
    assert arrival(27) - arrival(0) == 27


def test_simulator_and_model_charge_the_stage_on_every_hop_down_a_column():
    _, _, _, report, descriptor = _lu()
    net = build_network(descriptor, report["params"], DramModel())
    run(net.threads, net.fifos, 10**9)
    end = {th.name: th.end for th in net.threads}
    # V crosses N - 1 PEs from PE(0, N-1) to PE(N-1, N-1): 7 x 14 before (IO_LATENCY a hop)
    assert end[f"PE({N - 1},{N - 1})"] - end[f"PE(0,{N - 1})"] >= (N - 1) * (V_STAGE + IO_LATENCY)
    simulated = max(end.values())
    assert abs(report["latency_cycles"] - simulated) <= 0.05 * simulated


@pytest.mark.slow
def test_timed_csim_charges_the_stage_on_every_hop_down_a_column(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    from engine.csim import run_timed_csim
    space, design, params, report, _ = _lu()
    export_project(space, design, params, tmp_path / "project", floorplan="none")
    timed = run_timed_csim(tmp_path / "project")
    assert timed.passed
    end = {p.name: p.end for p in timed.processes if re.fullmatch(r"PE\(\d+,\d+\)", p.name)}
    assert end[f"PE({N - 1},{N - 1})"] - end[f"PE(0,{N - 1})"] >= (N - 1) * (V_STAGE + IO_LATENCY)  # 14 before
    assert abs(timed.cycles - report["latency_cycles"]) <= 0.05 * timed.cycles


def test_every_lu_design_model_follows_the_simulator():
    """The model reads the same stages and the same II (a recurrence through two carried arrays
    makes it an `smax` of ceilings: `j__k-j-i` and `i__k-j-i`) as the simulator."""
    space = compile_kernel(KERNELS / "lu.c", defines=["N=12"])
    device = load_device("u250")
    for design in space.designs:
        model = shared_model(space, design, device)
        params = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
        report = evaluate_configuration(model, params)
        simulated = simulate(build_descriptor(space, design, model.architecture), report["params"]).cycles
        assert abs(report["latency_cycles"] - simulated) <= 0.05 * simulated, design.id
