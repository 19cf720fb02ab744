"""The issue's bad input, each one line and exit 2: `systolic floorplan` with a cap no floorplan meets
(naming the smallest cap) and a design no cap up to 1 places (floorplan and export); a device file
whose SLRs add up to more than the device (floorplan, model, export, search); `--clock` not positive
or above the device's maximum (model, export; search, certify and network in
tests/engine/cli/test_clock_options.py). And `systolic model --clock`: throughput at that clock."""
from __future__ import annotations

import json
import re

import pytest

from engine.cli.main import main

CONFIG = ["--design", "i-j__i-j.k", "--param", "i_t1=16", "--param", "j_t1=16", "--param", "k_t1=16",
          "--param", "i_t2=4", "--param", "j_t2=4", "--param", "k_t2=4"]


@pytest.fixture
def small_slrs(bundled, tmp_path):
    """The U250 file with SLRs of 5% of their resources: the 4 x 4 array must spread over them."""
    data = json.loads((bundled("mm").parent.parent / "devices" / "u250.json").read_text())
    for die in data["slrs"]["dies"]:
        die["resources"] = {r: max(1, int(v * 0.05)) for r, v in die["resources"].items()}
    path = tmp_path / "small_slrs.json"
    path.write_text(json.dumps(data))
    return path


def test_a_cap_no_floorplan_meets_is_one_line_with_the_smallest_cap(bundled, small_slrs, capsys):
    args = ["floorplan", str(bundled("mm")), "-D", "I=64", "-D", "J=64", "-D", "K=64", *CONFIG,
            "--device", str(small_slrs)]
    assert main(args + ["--cap", "0.3"]) == 2
    err = capsys.readouterr().err
    found = re.fullmatch(r"error: no floorplan keeps every SLR within --cap 0\.3; the smallest cap that works is "
                         r"(\d\.\d\d)(: the design takes [^\n]*)?\n", err)
    assert found, err
    assert main(args + ["--cap", found.group(1), "--json"]) == 0  # the named cap works
    data = json.loads(capsys.readouterr().out)
    assert max(u for s in data["slrs"] for u in s["utilisation"].values()) <= float(found.group(1)) + 1e-6
    assert all(b["wires"] <= b["capacity"] for b in data["boundaries"])


def test_model_reports_the_throughput_at_the_given_clock(bundled, capsys):
    args = ["model", str(bundled("mm")), "--preset", "small", *CONFIG[:2]] + [
        "--param", "i_t1=8", "--param", "j_t1=8", "--param", "k_t1=8", "--param", "i_t2=4", "--param", "j_t2=4",
        "--param", "k_t2=4", "--json"]
    assert main(args) == 0
    at_300 = json.loads(capsys.readouterr().out)
    assert main(args + ["--clock", "150"]) == 0
    at_150 = json.loads(capsys.readouterr().out)
    assert at_150["latency_cycles"] == at_300["latency_cycles"]
    assert at_150["throughput_gops"] == pytest.approx(at_300["throughput_gops"] / 2, rel=1e-6)


@pytest.mark.parametrize("clock, phrase", [("0", "must be a positive number of MHz"),
                                           ("-5", "must be a positive number of MHz"),
                                           ("fast", "expected a clock in MHz"),
                                           ("600", "at most 500 MHz, the fastest kernel clock")])
def test_a_bad_clock_is_refused_in_one_line(bundled, capsys, clock, phrase):
    assert main(["model", str(bundled("mm")), "--preset", "tiny", *CONFIG[:2], "--param", "i_t1=2", "--param",
                 "j_t1=2", "--param", "k_t1=2", "--param", "i_t2=1", "--param", "j_t2=1", "--param", "k_t2=1",
                 "--clock", clock]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and phrase in err and "--clock" in err


@pytest.fixture
def oversized_slrs(bundled, tmp_path):
    """The U250 file whose SLR0 offers 9,000 DSP: the SLRs add up to more than the device's 12,288."""
    data = json.loads((bundled("mm").parent.parent / "devices" / "u250.json").read_text())
    data["slrs"]["dies"][0]["resources"]["DSP"] = 9000
    path = tmp_path / "oversized_slrs.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("command", ["floorplan", "model", "export", "search"])
def test_a_device_whose_slrs_add_up_to_more_than_it_is_one_line(bundled, oversized_slrs, tmp_path, capsys, command):
    args = [command, str(bundled("mm")), "--preset", "tiny", "--device", str(oversized_slrs)]
    if command == "search":
        args += ["--design", "i-j__i-j.k", "--samples", "10", "--no-store"]
    else:
        args += [*CONFIG[:2], "--param", "i_t1=2", "--param", "j_t1=2", "--param", "k_t1=2", "--param", "i_t2=1",
                 "--param", "j_t2=1", "--param", "k_t2=1"]
    if command == "export":
        args += ["-o", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(oversized_slrs) in err and "the SLRs' DSP add up to 17631, more than" in err
    assert not (tmp_path / "out").exists()


def test_a_design_no_cap_can_place_is_one_line_with_the_smallest_share(bundled, small_slrs, capsys, tmp_path):
    """SLRs of 1% of the U250's for the 4 x 4 array's 320 DSP: no cap up to 1 works; the floorplan and
    the export (even without --cap, which relaxes only up to 1) say how full the best floorplan is."""
    data = json.loads(small_slrs.read_text())
    for die in data["slrs"]["dies"]:
        die["resources"] = {r: max(1, v // 5) for r, v in die["resources"].items()}
    tiny = tmp_path / "tiny_slrs.json"
    tiny.write_text(json.dumps(data))
    common = [str(bundled("mm")), "-D", "I=64", "-D", "J=64", "-D", "K=64", *CONFIG, "--device", str(tiny)]
    for args in (["floorplan", *common, "--cap", "1"], ["export", *common, "-o", str(tmp_path / "out")]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert re.fullmatch(r"error: the design does not fit the SLRs: the best floorplan fills one to \d+% of a "
                            r"resource \(--cap is at most 1\)[^\n]*\n", err), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("clock", ["0", "-1", "nan", "inf", "501"])
def test_export_refuses_a_clock_not_positive_or_above_the_maximum_in_one_line(bundled, tmp_path, capsys, clock):
    out = tmp_path / "out"
    assert main(["export", str(bundled("mm")), "--preset", "tiny", *CONFIG[:2], "--param", "i_t1=2", "--param",
                 "j_t1=2", "--param", "k_t1=2", "--param", "i_t2=1", "--param", "j_t2=1", "--param", "k_t2=1",
                 "-o", str(out), "--clock", clock]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--clock" in err
    assert ("at most 500 MHz" if clock == "501" else "positive number of MHz") in err
    assert not out.exists()
