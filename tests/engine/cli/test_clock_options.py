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
from engine.floorplan import estimate_clock
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
    """quick_clock over a batch = estimate_clock(quick=True) one configuration at a time: the
    floorplanned estimate where the SLRs' utilisation bound is within the cap, the plain one beyond."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "1024", "J": "1024", "K": "1024"})
    device = load_device()
    model = PerformanceModel(space, space.design("i-j__i-j.k"), device)
    search = SearchSpace(model, clock="estimated")
    configs = [dict(i_t1=104, j_t1=128, k_t1=64, i_t2=2, j_t2=32, k_t2=8),   # 8,320 DSP: beyond the cap
               dict(i_t1=150, j_t1=128, k_t1=64, i_t2=6, j_t2=16, k_t2=8),   # 8,000 DSP: within it
               dict(i_t1=64, j_t1=64, k_t1=64, i_t2=4, j_t2=4, k_t2=4)]     # small: one SLR
    arrays = {n: np.array([c[n] for c in configs]) for n in search.names}
    batch = search.evaluate(arrays)
    clocks = search.clock_mhz(arrays, batch.resources)
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    for k, config in enumerate(configs):
        values = {**config, **{n: int(v) for n, v in model.inferred_packing(config).items()}}
        quick = estimate_clock(descriptor, values, device, quick=True)
        within = quick.device_utilisation <= 0.7
        assert clocks[k] == pytest.approx(quick.floorplanned_mhz if within else quick.unfloorplanned_mhz)
        assert batch.objective[k] == pytest.approx(batch.latency[k] * device.clock_mhz / clocks[k])
    assert clocks[0] < 250 <= clocks[1] == clocks[2] == device.clock_mhz


def test_search_clock_estimated_prints_both_choices(capsys):
    assert main([*SEARCH, "--clock", "estimated"]) == 0
    out = capsys.readouterr().out
    assert "not a Vivado result" in out
    assert "chosen at 300 MHz" in out and "chosen at its estimated clock" in out
