"""`systolic network ... --arrays N`: N arrays of the project's designs pipelining a network, each
within its share of the device, together within the device, exported and passing C simulation."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.models.device import load_device
from engine.network.arrays import slice_sizes
from engine.resources import KERNELS

NETWORK = '''{"name": "four", "workloads": [
  {"name": "a", "params": {"i": 3, "o": 16, "r": 16, "c": 16, "p": 3, "q": 3}},
  {"name": "b", "params": {"i": 16, "o": 32, "r": 16, "c": 16, "p": 3, "q": 3}},
  {"name": "c", "params": {"i": 32, "o": 32, "r": 8, "c": 8, "p": 3, "q": 3}},
  {"name": "d", "params": {"i": 32, "o": 64, "r": 4, "c": 4, "p": 3, "q": 3}}]}'''
DESIGNS = ["o-h__o-h-w.i-p-q", "o-w__o-h-w.i-p-q"]


def arguments(tmp_path: Path, *extra) -> list[str]:
    network = tmp_path / "four.json"
    network.write_text(NETWORK)
    return ["network", str(KERNELS / "cnn.c"), str(network), "--samples", "300", "--method", "evolution",
            "--design", DESIGNS[0], "--design", DESIGNS[1], "--single-designs", "2", "--seed", "3",
            "--db", str(tmp_path / "runs.sqlite"), *extra]


@pytest.mark.parametrize("spec", ["0", "two", "3-", "1,-2"])
def test_a_bad_array_count_is_one_line_and_exit_2(tmp_path, capsys, spec):
    assert main(arguments(tmp_path, "--arrays", spec)) == 2
    assert f"'{spec}': expected a count of arrays" in capsys.readouterr().err


def test_more_arrays_than_layers_and_export_without_arrays_are_refused(tmp_path, capsys):
    assert main(arguments(tmp_path, "--arrays", "5")) == 2
    assert "four has 4 layers, and each array needs one" in capsys.readouterr().err
    assert main(arguments(tmp_path, "--export-arrays")) == 2
    assert "--export-arrays needs --arrays N" in capsys.readouterr().err


def test_a_slice_cuts_long_loops_to_their_tile_and_may_keep_short_ones_whole():
    define_of = {"o": "O", "p": "P"}
    params = {"o_t1": 12, "p_t1": 2}
    assert slice_sizes({"O": 64, "P": 3}, params, define_of) == {"O": 12, "P": 2}
    assert slice_sizes({"O": 64, "P": 3}, params, define_of, whole_below=2) == {"O": 12, "P": 3}
    assert slice_sizes({"O": 8, "P": 3}, params, define_of) == {"O": 8, "P": 2}


@pytest.mark.slow
def test_two_and_three_arrays_fit_the_device_beat_or_match_one_and_pass_c_simulation(tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert main(arguments(tmp_path, "--workers", "2", "--arrays", "1-3", "--export-arrays", "--json",
                          "-o", str(out_dir))) == 0
    out = json.loads(capsys.readouterr().out)
    plans = {m["arrays"]: m for m in out["multi_array"]}
    assert set(plans) == {1, 2, 3}
    device = load_device("u250")
    for n, m in plans.items():
        assert m["fits"]
        stages = m["stages"]
        assert [l for s in stages for l in s["layers"]] == ["a", "b", "c", "d"]
        assert sum(s["share"] for s in stages) <= 1 + 1e-9
        for s in stages:  # each array within its share of every resource
            for r, used in s["resources"].items():
                assert used <= device.budget(r) * s["share"] + 1e-6
        assert m["interval_cycles"] == max(s["latency_cycles"] for s in stages)
        assert m["network_gops"] == pytest.approx(m["speedup"] * m["single_array_gops"])
        for e in m["exports"]:
            assert Path(e["exported"], "src", "kernel_kernel.cpp").is_file()
            assert e["csim_passed"], e["csim"]
            # the array is floorplanned as `systolic export` does; its slice is only simulated
            assert Path(e["exported"], "floorplan.tcl").is_file()
            assert not Path(e["slice_exported"], "floorplan.tcl").exists()
            assert "floorplan" not in json.loads(Path(e["slice_exported"], "design.json").read_text())
    assert plans[2]["network_gops"] >= 0.9 * plans[1]["network_gops"]
    assert (out_dir / "arrays.csv").is_file()
