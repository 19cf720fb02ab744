"""`--clock` on search, certify and network, and `systolic search --clock estimated`: throughput at the
given clock (the same cycles), a clock above the device's maximum refused in one line (exit 2), and
the estimated mode choosing by each configuration's own estimated clock (engine/floorplan/clock.py
quick_clock, vectorised), printed beside the choice at the device's clock."""
from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli.main import main
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.floorplan import MAX_CAP, estimate_clock
from engine.floorplan.clock import clock_rule, quick_clock
from engine.floorplan.solve import floorplans_within_max_cap
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.space import SearchSpace

SEARCH = ["search", str(KERNELS / "mm.c"), "--preset", "small", "--design", "i-j__i-j.k", "--samples", "300",
          "--no-store"]


def test_search_reports_throughput_at_the_given_clock(capsys):
    """(The cycles may differ: a DRAM bank moves more bytes per cycle of a slower clock.)"""
    for clock in (300, 150):
        assert main([*SEARCH, "--json", "--clock", str(clock)]) == 0
        best = json.loads(capsys.readouterr().out)["best"]
        assert best["throughput_gops"] == pytest.approx(2 * 64**3 / (best["latency_cycles"] / (clock * 1e6)) / 1e9)


@pytest.mark.parametrize("argv", [
    [*SEARCH, "--clock", "501"],
    ["certify", str(KERNELS / "mm.c"), "--preset", "tiny", "--design", "i-j__i-j.k", "--clock", "501"],
    ["network", str(KERNELS / "cnn.c"), "vgg16", "--clock", "501"],
])
def test_a_clock_above_the_device_maximum_is_one_line(argv, capsys, tmp_path):
    assert main(argv + (["--db", str(tmp_path / "runs.sqlite")] if argv[0] == "network" else [])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--clock 501 MHz" in err and "at most 500 MHz" in err


@pytest.mark.parametrize("command", ["search", "certify", "network"])
def test_a_clock_that_is_not_positive_is_one_line(command, capsys):
    assert main([command, str(KERNELS / "mm.c"), "--clock", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--clock" in err and "positive number of MHz" in err


def test_estimated_clock_matches_the_model_rule_per_configuration():
    """quick_clock over a batch = estimate_clock(quick=True)'s floorplanned estimate one configuration
    at a time, the clock of the build the export makes: it floorplans a design over the default cap
    at the smallest cap that works (engine/floorplan/solve.py export_floorplan), so 8,320 DSP (72% of
    what the SLRs offer) is floorplanned and estimated at the target clock, not as a plain build."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "1024", "J": "1024", "K": "1024"})
    device = load_device()
    model = PerformanceModel(space, space.design("i-j__i-j.k"), device)
    search = SearchSpace(model, clock="estimated")
    configs = [dict(i_t1=104, j_t1=128, k_t1=64, i_t2=2, j_t2=32, k_t2=8),   # 8,320 DSP: beyond the 0.7 cap
               dict(i_t1=150, j_t1=128, k_t1=64, i_t2=6, j_t2=16, k_t2=8),   # 8,000 DSP: within it
               dict(i_t1=64, j_t1=64, k_t1=64, i_t2=4, j_t2=4, k_t2=4)]     # small: one SLR
    arrays = {n: np.array([c[n] for c in configs]) for n in search.names}
    batch = search.evaluate(arrays)
    clocks = search.clock_mhz(arrays, batch.resources)
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    for k, config in enumerate(configs):
        values = {**config, **{n: int(v) for n, v in model.inferred_packing(config).items()}}
        quick = estimate_clock(descriptor, values, device, quick=True)
        assert clocks[k] == pytest.approx(quick.floorplanned_mhz)
        assert batch.objective[k] == pytest.approx(batch.latency[k] * device.clock_mhz / clocks[k])
    assert batch.feasible.all()
    assert clocks[0] == clocks[1] == clocks[2] == device.clock_mhz


def test_quick_clock_follows_the_export_rule_to_the_largest_cap():
    """Past SLR_KNEE the floorplanned estimate slows (the export still floorplans, at a larger cap);
    past MAX_CAP no floorplan exists: 0 MHz, and the search takes the configuration as infeasible."""
    device = load_device()
    offered = {r: sum(s.resources[r] for s in device.slrs) for r in device.slrs[0].resources}
    shares = np.array([0.5, 0.723, 0.9, 1.05])
    resources = {r: shares * v if r == "DSP" else np.zeros(4) for r, v in offered.items()}
    clocks = quick_clock(device, resources, np.full(4, 256))
    expected, _ = clock_rule(device.clock_mhz, shares[:3], 0.0, shares[:3], 256, True)
    assert clocks[:3] == pytest.approx(expected) and clocks[0] == clocks[1] == device.clock_mhz > clocks[2] > 0
    assert clocks[3] == 0 and not floorplans_within_max_cap(1.05) and floorplans_within_max_cap(MAX_CAP)


def test_search_clock_estimated_prints_both_choices(capsys):
    assert main([*SEARCH, "--clock", "estimated"]) == 0
    out = capsys.readouterr().out
    assert "not a Vivado result" in out
    assert "chosen at 300 MHz" in out and "chosen at its estimated clock" in out
