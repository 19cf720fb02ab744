"""`systolic export --floorplan auto|none --cap --clock`: a cap no floorplan meets is one line naming the
smallest cap that works (exit 2, nothing written) and that cap then exports (without --cap the export
takes the smallest cap that works and says so); `--clock` becomes the
Makefile's --kernel_frequency and is stated in README.md and design.json; a clock above the device's
maximum is one line, exit 2."""
from __future__ import annotations

import json
import re

from engine.cli.main import main

CONFIG = ["--preset", "small", "--design", "i-j__i-j.k", "--param", "i_t1=8", "--param", "j_t1=8", "--param",
          "k_t1=8", "--param", "i_t2=4", "--param", "j_t2=4", "--param", "k_t2=4"]


def test_a_cap_no_floorplan_meets_names_the_smallest_and_writes_nothing(bundled, tmp_path, capsys):
    out = tmp_path / "mm"
    assert main(["export", str(bundled("mm")), *CONFIG, "-o", str(out), "--cap", "0.001"]) == 2
    err = capsys.readouterr().err
    found = re.fullmatch(r"error: no floorplan keeps every SLR within --cap 0\.001; the smallest cap that works is "
                         r"(\d\.\d\d)(?:: the design takes [^\n]*)? "
                         r"\(--floorplan none exports it without a floorplan\)\n", err)
    assert found, err
    assert not out.exists()
    assert main(["export", str(bundled("mm")), *CONFIG, "-o", str(out), "--cap", found.group(1)]) == 0
    fp = json.loads((out / "design.json").read_text())["floorplan"]
    assert fp["cap"] == float(found.group(1)) and (out / "floorplan.tcl").is_file()


def test_clock_is_the_kernel_frequency_of_the_build(bundled, tmp_path, capsys):
    out = tmp_path / "mm"
    assert main(["export", str(bundled("mm")), *CONFIG, "-o", str(out), "--floorplan", "none", "--clock", "250"]) == 0
    assert re.search(r"^FREQ_MHZ \?= 250$", (out / "Makefile").read_text(), re.M)
    assert "--kernel_frequency $(FREQ_MHZ)" in (out / "Makefile").read_text()
    design = json.loads((out / "design.json").read_text())
    assert design["report"]["device"]["clock_mhz"] == 250
    assert "built at 250 MHz" in (out / "README.md").read_text()
    assert not (out / "floorplan.tcl").exists()


def test_a_clock_above_the_device_maximum_is_one_line(bundled, tmp_path, capsys):
    out = tmp_path / "mm"
    assert main(["export", str(bundled("mm")), *CONFIG, "-o", str(out), "--clock", "501"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--clock 501 MHz" in err and "at most 500 MHz" in err
    assert not out.exists()


def test_without_a_cap_the_export_takes_the_smallest_that_works_and_says_so(bundled, tmp_path, capsys,
                                                                               monkeypatch):
    """The tuner fills a design to the device budget, which rarely splits evenly over the SLRs: the
    default export must not refuse the design it recommends (a default cap no floorplan meets here)."""
    import engine.export.project as project
    monkeypatch.setattr(project, "DEFAULT_CAP", 0.001)
    out = tmp_path / "mm"
    assert main(["export", str(bundled("mm")), *CONFIG, "-o", str(out)]) == 0
    note = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    found = re.fullmatch(r"note: no floorplan keeps every SLR within the default cap 0\.001: floorplanned at "
                         r"(\d\.\d+), the smallest that works \(--cap chooses, --floorplan none skips it\)", note[0])
    assert found, note
    fp = json.loads((out / "design.json").read_text())["floorplan"]
    assert fp["cap"] == float(found.group(1)) and (out / "floorplan.tcl").is_file()
