"""The simulator moves the words of local arrays between neighbouring PEs (descriptor 1.3
`local_arrays[].channels`, e.g. LU's U_tmp along j and L_tmp along i), as the exported PE does:
one word where the channel's `receive_when` / `send_when` guard holds at a PE's point."""
from __future__ import annotations

import shutil

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.export.project import export_project
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import simulate
from engine.sim.hardware import build_network
from engine.sim.kernel import run


def _lu(n: int, design_id: str):
    space = compile_kernel(KERNELS / "lu.c", defines=[f"N={n}"])
    design = space.design(design_id)
    model = shared_model(space, design, load_device("u250"))
    whole = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
    report = evaluate_configuration(model, whole)
    return space, design, whole, build_descriptor(space, design, model.architecture), report["params"]


def _points(guard: str, fixed: dict, loop: str, n: int) -> int:
    """Brute force: the values of `loop` in 0..n-1 where the C condition holds."""
    text = guard.replace("&&", " and ").replace("||", " or ")
    return sum(bool(eval(text, {}, {**fixed, loop: v})) for v in range(n))


def test_lu_channels_carry_one_word_per_guarded_point():
    """[j,i] at N = 6: PE (j, i) runs k = 0..5; the FIFO from PE (j, i) to its neighbour along a
    channel's loop carries the points of the receiving PE where `receive_when` holds, which are as
    many as the sender's points where `send_when` holds."""
    n = 6
    _, _, _, descriptor, values = _lu(n, "j-i__k-j-i")
    channels = {a["name"]: ch for a in descriptor["local_arrays"] for ch in a["channels"]}
    assert set(channels) == {"U_tmp", "L_tmp"}
    net = build_network(descriptor, values)
    outcome = run(net.threads, net.fifos, 10**6)
    assert outcome.deadlock is None and not outcome.over_budget
    chain = [f for f in net.fifos if net.fifo_kind[id(f)].endswith("pe_chain")]
    assert len(chain) == 2 * n * (n - 1)
    moved = 0
    for f in chain:
        source, target = (part[len("PE("):-1] for part in f.name.split(" ")[0].split("->"))
        array = f.name.split(" ")[1]
        ch = channels[array]
        src = dict(zip(("j", "i"), map(int, source.split(","))))
        dst = dict(zip(("j", "i"), map(int, target.split(","))))
        sent, received = _points(ch["send_when"], src, "k", n), _points(ch["receive_when"], dst, "k", n)
        assert f.written == f.read == sent == received, (f.name, f.written, sent, received)
        moved += f.written
    assert moved > 0


@pytest.mark.parametrize("n, design_id", [pytest.param(12, "j__k-j-i", marks=pytest.mark.slow), (12, "i__k-j-i"),
                                          pytest.param(16, "j__k-j-i", marks=pytest.mark.slow)])
def test_lu_1d_simulator_follows_the_timed_csim(tmp_path, n, design_id):
    """j__k-j-i is slow here (a timed g++ build each): at N = 12 the default suite checks the same
    export, simulator against timed C simulation within 5%, in tests/engine/export/
    test_guarded_band_export.py::test_lu_simulator_and_timed_csim_follow_the_model[j__k-j-i];
    N = 16 runs the same design through the same code at a larger size."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    space, design, whole, descriptor, values = _lu(n, design_id)
    simulated = simulate(descriptor, values).cycles
    export_project(space, design, whole, tmp_path / "project", floorplan="none")
    timed = run_timed_csim(tmp_path / "project")
    assert timed.passed, timed.csim
    assert abs(simulated / timed.cycles - 1) <= 0.05, (simulated, timed.cycles)


@pytest.mark.parametrize("n", [12, pytest.param(16, marks=pytest.mark.slow)])  # 16: 17 s, with the benchmarks
def test_lu_2d_simulator_follows_the_timed_csim(tmp_path, n):
    """A's chain passes the whole block through every member, each keeping one element a row: the
    simulator follows the exported loader's order (was 429 against 486 cycles at N = 12)."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    space, design, whole, descriptor, values = _lu(n, "j-i__k-j-i")
    simulated = simulate(descriptor, values).cycles
    export_project(space, design, whole, tmp_path / "project", floorplan="none")
    timed = run_timed_csim(tmp_path / "project")
    assert timed.passed, timed.csim
    assert abs(simulated / timed.cycles - 1) <= 0.05, (simulated, timed.cycles)
