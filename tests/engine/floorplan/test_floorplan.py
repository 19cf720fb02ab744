"""The floorplan of a small MM 4 x 4 array on the U250's SLRs (SCIP, pyomo): caps and crossing
capacities respected, DRAM-facing instances in their bank's SLR, the instances adding up to the
model's resources, the clock rule's monotonicity and the CLI's table, JSON and one-line refusal
(the smallest cap reported for a cap with no floorplan: test_cli_clock_and_cap.py)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from engine.cli.main import main
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.floorplan.clock import clock_rule, estimate_clock, quick_clock
from engine.floorplan.netlist import build_netlist
from engine.floorplan.solve import FloorplanError, crossing_fifos, export_floorplan, floorplan, least_cap
from engine.models.device import RESOURCE_NAMES, Slr, load_device
from engine.models.evaluate import PerformanceModel

PARAMS = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4}


@pytest.fixture(scope="module")
def small(bundled_path):
    space = compile_kernel(bundled_path, defines=["I=64", "J=64", "K=64"])
    device = load_device()
    model = PerformanceModel(space, space.design("i-j__i-j.k"), device)
    packs = model.inferred_packing({k: [v] for k, v in PARAMS.items()})
    values = PARAMS | {k: int(v[0]) for k, v in packs.items()}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    return descriptor, values, device, model.evaluate(PARAMS)


@pytest.fixture(scope="module")
def bundled_path():
    from engine.resources import RESOURCES
    return str(RESOURCES / "kernels" / "mm.c")


def tiny_device(device, share: float):
    """The U250 with each SLR offering `share` of its resources (a small design then fills it)."""
    slrs = tuple(Slr({r: max(1, int(s.resources[r] * share)) for r in RESOURCE_NAMES}, s.banks) for s in device.slrs)
    return dataclasses.replace(device, slrs=slrs)


def test_instances_add_up_to_the_models_resources(small):
    descriptor, values, device, evaluation = small
    net = build_netlist(descriptor, values, device)
    assert len([n for n in net.instances if n[0] == "PE"]) == 16
    for r in RESOURCE_NAMES:
        assert net.total(r) == pytest.approx(float(evaluation[r]))


def test_every_slr_within_the_cap_and_every_crossing_within_capacity(small):
    descriptor, values, device, _ = small
    net = build_netlist(descriptor, values, device)
    # SLRs of 5% of the U250's: the 4 x 4 array (320 DSP) must spread over several of them
    device = tiny_device(device, 0.05)
    plan = floorplan(net, device, cap=0.7)
    assert set(plan.slr_of) == set(net.instances)
    for s in range(len(device.slrs)):
        for r, u in plan.utilisation(s).items():
            assert plan.used[s][r] <= 0.7 * device.slrs[s].resources[r] + 1e-6, (s, r, u)
    assert len({plan.slr_of[n] for n in net.instances if n[0] == "PE"}) > 1
    for b in plan.boundaries:
        assert b.wires <= b.capacity
    # the DRAM-facing instances sit in their bank's SLR: A, B, C on ports 0, 1, 2 -> DDR[0..2] -> SLR0..2
    assert {n[0]: plan.slr_of[n] for n in net.pinned} == {"A_L3_in": 0, "B_L3_in": 1, "C_L3_out": 2}
    # only chains cross: never a PE and its level-1 module; PE chains along the other loop only where
    # a cut steps inside a line (once per boundary and array)
    d = net.space_loops.index(plan.cut_along)
    crossing = [f for f, _, _ in crossing_fifos(net, plan)]
    assert sum(f.width_bits * abs(plan.slr_of[f.source] - plan.slr_of[f.target]) for f in crossing) == \
        plan.crossing_wires == sum(b.wires for b in plan.boundaries)
    assert crossing and not [f for f in crossing if f.pattern == "to_pe"]
    steps = [f for f in crossing if f.pattern == "pe_chain" and f.source[1][d] == f.target[1][d]]
    assert len(steps) <= len(plan.boundaries) * len({f.array for f in net.fifos if f.pattern == "pe_chain"})


@pytest.mark.parametrize("slr, crossing, device", [(0.5, 0.2, 0.4), (0.8, 0.5, 0.6), (0.9, 0.9, 0.7),
                                                   (0.95, 1.2, 0.9)])
def test_more_utilisation_never_raises_the_clock(slr, crossing, device):
    base_fp, base_plain = clock_rule(300, slr, crossing, device, 256, False)
    for more in (clock_rule(300, slr + 0.05, crossing, device, 256, False),
                 clock_rule(300, slr, crossing + 0.2, device, 256, False),
                 clock_rule(300, slr, crossing, device + 0.1, 256, False),
                 clock_rule(300, slr, crossing, device, 512, False)):
        assert more[0] <= base_fp and more[1] <= base_plain
    assert base_plain <= base_fp <= 300


def test_a_design_that_fits_one_slr_closes_the_same_without_floorplan(small):
    descriptor, values, device, _ = small
    clock = estimate_clock(descriptor, values, device)
    assert clock.floorplanned_mhz == clock.unfloorplanned_mhz == device.clock_mhz
    assert "fits one SLR" in clock.unfloorplanned_reason and "not a Vivado result" in clock.note


def test_cli_prints_the_table_and_json(bundled, capsys):
    args = ["floorplan", str(bundled("mm")), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--design", "i-j__i-j.k"]
    args += [f"--param={k}={v}" for k, v in PARAMS.items()]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "PE x16" in out and "estimated clock, floorplanned:" in out and "not a Vivado result" in out
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = [i for s in data["slrs"] for i in s["instances"]]
    assert len(names) == len(set(names)) == 47 and "PE(0,0)" in names and "A_L3_in" in names
    assert data["clock"]["floorplanned_mhz"] > 0


def test_cli_refuses_a_cap_outside_0_1_in_one_line(bundled, capsys):
    args = ["floorplan", str(bundled("mm")), "--preset", "tiny", "--design", "i-j__i-j.k", "--cap", "1.5"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--cap" in err and "(0, 1]" in err


def test_a_design_larger_than_the_slrs_is_refused_and_estimated_unroutable(small):
    descriptor, values, device, _ = small
    net = build_netlist(descriptor, values, device)
    device = tiny_device(device, 0.01)  # 4 x 28 DSP for 320
    with pytest.raises(FloorplanError, match=r"does not fit the SLRs: the best floorplan fills one to \d+%"):
        floorplan(net, device, cap=1.0)
    clock = estimate_clock(descriptor, values, device, net=net)
    assert clock.plan is None and clock.floorplanned_mhz == clock.unfloorplanned_mhz == 0
    assert "will not route" in clock.floorplanned_reason


def test_the_quick_estimate_solves_nothing_and_is_never_below_the_floorplanned_one(small):
    descriptor, values, device, _ = small
    net = build_netlist(descriptor, values, device)
    device = tiny_device(device, 0.05)
    quick = estimate_clock(descriptor, values, device, net=net, quick=True)
    full = estimate_clock(descriptor, values, device, net=net)
    assert quick.plan is None and full.plan is not None and "no floorplan solved" in quick.floorplanned_reason
    assert quick.floorplanned_mhz >= full.floorplanned_mhz
    assert quick.unfloorplanned_mhz >= full.unfloorplanned_mhz


def test_a_cap_below_the_arithmetic_bound_names_the_bound_and_its_resource(small):
    """SLRs of 100 DSP each for the array's 320: no split is within 0.7 (even is 80%); the error says
    the smallest cap is the bound and why, and that cap floorplans."""
    descriptor, values, device, _ = small
    net = build_netlist(descriptor, values, device)
    slrs = tuple(Slr({**s.resources, "DSP": 100}, s.banks) for s in device.slrs)
    device = dataclasses.replace(device, slrs=slrs)
    assert least_cap(net, device) == pytest.approx(net.total("DSP") / 400) == pytest.approx(0.8)
    with pytest.raises(FloorplanError, match=r"within --cap 0.7; the smallest cap that works is 0\.80: the design "
                                             r"takes 80\.0% of the DSP all SLRs offer the kernel") as info:
        floorplan(net, device, cap=0.7)
    assert "\n" not in str(info.value)
    plan = floorplan(net, device, cap=info.value.smallest_cap)
    assert all(plan.used[s]["DSP"] <= 80 + 1e-6 for s in range(4))


def test_the_search_estimate_and_the_export_read_one_rule_over_the_default_cap(small):
    """SLRs of 100 DSP for the array's 320 (bound 0.8): the export floorplans at the smallest cap that
    works (export_floorplan), the solved estimate reads that floorplan, and the search's quick_clock
    gives the same clock from the resource totals alone (not the plain build's)."""
    descriptor, values, device, evaluation = small
    net = build_netlist(descriptor, values, device)
    device = dataclasses.replace(device, slrs=tuple(Slr({**s.resources, "DSP": 100}, s.banks) for s in device.slrs))
    with pytest.raises(FloorplanError):
        export_floorplan(net, device, relax=False)
    plan = export_floorplan(net, device)
    assert plan.cap == pytest.approx(0.8)
    solved = estimate_clock(descriptor, values, device, net=net)
    assert solved.plan is not None and solved.plan.cap == plan.cap
    widest = np.array([solved.widest_pe_fifo_bits])
    quick = quick_clock(device, {r: np.array([float(evaluation[r])]) for r in RESOURCE_NAMES}, widest)
    assert quick[0] == solved.floorplanned_mhz == device.clock_mhz > solved.unfloorplanned_mhz
