"""`systolic export`: from a kernel and parameters or from a stored run (rank K), the default output
name, and bad input as one `error:` line with exit status 2. The kernel sources are a stand-in here
(their generator has its own tests); everything around them is real."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.cli.main import main
from engine.export import project
from engine.search.progress import Candidate, DesignResult, ExplorationResult, TracePoint
from engine.search.store import RunStore

from kernel_snippets import VALID_MM

MM = ["--design", "i-j__i-j.k", "--param", "i_t1=4", "--param", "j_t1=4", "--param", "k_t1=8",
      "--param", "i_t2=2", "--param", "j_t2=2", "--param", "k_t2=4"]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_DB", str(tmp_path / "default" / "runs.sqlite"))
    monkeypatch.setattr(project, "kernel_export", lambda descriptor, values, report=None, **_: ({
        "kernel_kernel.cpp": f"// stand-in kernel for {descriptor['design']['id']}\n",
        "kernel_kernel.h": "// stand-in header\n"}, {}))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "my mm (v2).c"
    path.write_text(VALID_MM)
    return path


def _one_error_line(capsys, *phrases):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    for phrase in phrases:
        assert phrase in err, err
    return err


def _design_json(folder):
    return json.loads((folder / "design.json").read_text())


def test_export_from_a_kernel_with_a_sanitised_default_name(kernel, tmp_path, capsys):
    assert main(["export", str(kernel), *MM]) == 0
    out = tmp_path / "my_mm_v2-i-j__i-j.k"
    data = _design_json(out)
    assert data["descriptor"]["design"]["id"] == "i-j__i-j.k"
    assert data["values"]["i_t1"] == 4 and data["values"]["k_t2"] == 4
    assert "stand-in kernel for i-j__i-j.k" in (out / "src" / "kernel_kernel.cpp").read_text()
    assert f"to {out.name}" in capsys.readouterr().out


def test_output_platform_and_force(kernel, tmp_path, capsys):
    out = tmp_path / "proj"
    assert main(["export", str(kernel), *MM, "-o", str(out), "--platform", "xilinx_u250_xdma_201830_2"]) == 0
    assert "PLATFORM ?= xilinx_u250_xdma_201830_2" in (out / "Makefile").read_text()
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["export", str(kernel), *MM, "-o", str(out)]) == 2
    _one_error_line(capsys, "not empty", "--force")
    assert main(["export", str(kernel), *MM, "-o", str(out), "--force"]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert "PLATFORM ?= xilinx_u250_gen3x16_xdma_4_1_202210_1" in (out / "Makefile").read_text()


def test_over_budget_only_with_permission(kernel, tmp_path, capsys):
    # 32 x 32 PEs of 8 lanes: over the DSP budget and over every SLR (64 x 64 took 20 s more to floorplan)
    big = ["--design", "i-j__i-j.k", "-D", "N=64", "--param", "i_t1=32", "--param", "j_t1=32", "--param", "k_t1=64",
           "--param", "i_t2=1", "--param", "j_t2=1", "--param", "k_t2=8", "-o", "big"]
    assert main(["export", str(kernel), *big]) == 2
    _one_error_line(capsys, "over the device budget", "DSP", "--allow-over-budget")
    assert not (tmp_path / "big").exists()
    # over the device, it has no floorplan either: the default --floorplan auto refuses it, naming the way out
    assert main(["export", str(kernel), *big, "--allow-over-budget"]) == 2
    _one_error_line(capsys, "does not fit the SLRs", "--floorplan none")
    assert not (tmp_path / "big").exists()
    assert main(["export", str(kernel), *big, "--allow-over-budget", "--floorplan", "none"]) == 0
    assert _design_json(tmp_path / "big")["over_budget"] is True
    assert "Over the device budget" in (tmp_path / "big" / "README.md").read_text()


def _save_run(db, kernel_path, kernel_text, sizes, options=None):
    fast = Candidate({"i_t1": 4, "j_t1": 4, "k_t1": 8, "i_t2": 2, "j_t2": 2, "k_t2": 4}, 900.0, 80.0, 8.0, 5.0)
    slow = Candidate({"i_t1": 8, "k_t1": 8, "j_t1": 2, "i_t2": 1, "j_t2": 2}, 4000.0, 40.0, 8.0, 1.0)
    result = ExplorationResult("mm", "random", 0, (
        DesignResult("i-k__i-j.k", "random", 10, 0.1, slow, (TracePoint(10, 0.1, 4000.0),)),
        DesignResult("i__i-j.k", "random", 10, 0.1, None, (), (), (), "exhausted"),
        DesignResult("i-j__i-j.k", "random", 10, 0.1, fast, (TracePoint(10, 0.1, 900.0),))))
    with RunStore(db) as store:
        return store.save(kernel_path=str(kernel_path), kernel_text=kernel_text, sizes=sizes, device="u250",
                          method="random", seed=0, budget={"samples": 30}, result=result, options=options)


def test_export_a_stored_run_by_rank(kernel, tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    run_id = _save_run(db, kernel, kernel.read_text(), {"N": 8})
    assert main(["export", "--run", str(run_id), "--db", str(db), "-o", "best"]) == 0
    best = _design_json(tmp_path / "best")
    assert best["descriptor"]["design"]["id"] == "i-j__i-j.k" and best["values"]["k_t1"] == 8
    assert main(["export", "--run", str(run_id), "--rank", "2", "--db", str(db)]) == 0
    second = _design_json(tmp_path / "my_mm_v2-i-k__i-j.k")
    assert second["descriptor"]["design"]["id"] == "i-k__i-j.k" and second["values"]["j_t1"] == 2
    assert f"(run {run_id}, rank 2)" in capsys.readouterr().out
    assert main(["export", "--run", str(run_id), "--rank", "3", "--db", str(db)]) == 2
    _one_error_line(capsys, f"run {run_id} has 2 design(s) with a feasible configuration, no rank 3")


def test_a_stored_run_exports_from_its_kernel_text_when_the_file_changed(kernel, tmp_path):
    db = tmp_path / "runs.sqlite"
    text = "#ifndef DATA_T\n#define DATA_T float\n#endif\n" + kernel.read_text().replace(
        "#define N 8", "#define N 6").replace("float A", "DATA_T A")
    run_id = _save_run(db, kernel, text, {"N": 12}, options={"defines": ["N=10", "DATA_T=double"]})
    kernel.unlink()
    assert main(["export", "--run", str(run_id), "--db", str(db), "-o", "gone"]) == 0
    descriptor = _design_json(tmp_path / "gone")["descriptor"]
    assert descriptor["kernel"]["sizes"] == {"N": 12}  # the stored sizes win over the text's #define
    assert descriptor["kernel"]["name"] == "my mm (v2)"
    assert descriptor["kernel"]["arrays"]["A"]["dtype"] == "double"  # the run's -D options are kept


def _run_main(argv):
    return main(["export", *argv])


@pytest.mark.parametrize("argv, phrases", [
    ([], ["give a kernel file", "--run"]),
    (["KERNEL", "--param", "i_t1=4"], ["--design is required"]),
    (["KERNEL", *[a if not a.startswith("i_t2=") else "i_t2=3" for a in MM]], ["i_t2=3 must divide i_t1=4"]),
    (["KERNEL", *MM, "--param", "i_t1=8"], ["--param i_t1 is given twice (i_t1=4 and i_t1=8)"]),
    (["KERNEL", "--design", "nope", "--param", "i_t1=4"], ["nope"]),
    (["KERNEL", *MM, "--param", "x=y"], ["bad --param 'x=y'"]),
    (["KERNEL", *MM, "-o", "with space"], ["characters make or Vitis cannot handle", "with_space"]),
    (["KERNEL", *MM, "--rank", "2"], ["--rank needs --run"]),
    (["--run", "1", "KERNEL"], ["--run exports a stored run", "KERNEL"]),
    (["--run", "1", "--design", "i__i-j.k"], ["drop --design"]),
    (["--run", "7"], ["no stored run 7"]),
    (["KERNEL", *MM, "--device", "nowhere"], ["unknown device 'nowhere'"]),
    (["KERNEL", *MM, "-o", "KERNEL/sub"], ["cannot create", "is a file, not a folder"]),
    (["KERNEL", *MM, "-D", "ZZZ=4"], ["-D ZZZ=4: the kernel does not use 'ZZZ'"]),
    (["KERNEL", *MM, "-D", "N=3000000000"], ["2^31"]),
])
def test_bad_input_is_one_line_and_exit_2(kernel, capsys, argv, phrases):
    argv = [a.replace("KERNEL", str(kernel)) for a in argv]
    assert _run_main(argv) == 2
    _one_error_line(capsys, *phrases)
    assert capsys.readouterr().out == ""


def test_error_as_a_process_has_no_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "engine.cli.main", "export", str(tmp_path / "missing.c"),
                             "--design", "x"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_simulate_first_exports_a_deadlock_free_configuration(kernel, tmp_path, capsys):
    assert main(["export", str(kernel), *MM, "-o", str(tmp_path / "ok"), "--simulate"]) == 0
    out = capsys.readouterr().out
    assert "no deadlock" in out and (tmp_path / "ok" / "design.json").is_file()


def test_simulate_first_refuses_a_configuration_that_deadlocks(kernel, tmp_path, capsys, monkeypatch):
    # FIFOs that hold nothing: C simulation (unbounded streams) would pass, the board would hang
    from engine.compiler import topology

    monkeypatch.setattr(topology, "fifo_depth", lambda fifo, values, descriptor: 0)
    assert main(["export", str(kernel), *MM, "-o", str(tmp_path / "hangs"), "--simulate"]) == 2
    _one_error_line(capsys, "not exported", "deadlock", "wait cycle")
    assert not (tmp_path / "hangs").exists()
