"""`systolic csim DIR`: exit 0 only on PASS, 1 on a mismatch or a build failure (with the first
mismatch or the compiler's messages, and the g++ command), 2 for a directory that is not an exported
project, always without a traceback."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from engine.cli import csim
from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.export.project import export_project
from engine.csim import CsimResult
from engine.resources import KERNELS

CONFIG = {"i_t1": 16, "j_t1": 12, "k_t1": 16, "i_t2": 4, "j_t2": 3, "k_t2": 4}  # j_t1 does not divide 64


def _one_error_line(capsys, *phrases):
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith("error: ")
    for phrase in phrases:
        assert phrase in captured.err, captured.err


@pytest.fixture(scope="module")
def mm_project(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    return export_project(space, space.design("i-j__i-j.k"), CONFIG, tmp_path_factory.mktemp("csim") / "mm",
                          floorplan="none")


def test_missing_directory(tmp_path, capsys):
    assert main(["csim", str(tmp_path / "nowhere")]) == 2
    _one_error_line(capsys, "nowhere is not a directory")


def test_a_directory_that_is_not_a_project(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernel_kernel.cpp").write_text("")
    assert main(["csim", str(tmp_path)]) == 2
    _one_error_line(capsys, "has no design.json", "not an exported project")


def test_a_mismatch_report_is_printed_in_full(tmp_path, capsys, monkeypatch):
    for name in ("design.json", "src/kernel_kernel.cpp", "src/kernel_kernel.h"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    failed = CsimResult(passed=False, summary="FAIL: 3 of 4096 elements differ", log="",
                        mismatch="C[0][5]: expected 1.5, got 0", command="g++ -O1 harness.cpp && ./a.out 0")
    monkeypatch.setattr(csim, "run_csim", lambda folder, **kw: failed)
    assert main(["csim", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["FAIL: 3 of 4096 elements differ", "C[0][5]: expected 1.5, got 0", "reproduce: g++ -O1 harness.cpp && ./a.out 0"]


def test_an_exported_design_passes(mm_project, capsys):
    assert main(["csim", str(mm_project)]) == 0
    assert "PASS" in capsys.readouterr().out


def test_a_kernel_that_does_not_compile_fails_with_the_command(mm_project, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(mm_project, broken)
    source = broken / "src" / "kernel_kernel.cpp"
    source.write_text(source.read_text() + "\nthis is not C++;\n")
    assert main(["csim", str(broken)]) == 1
    out = capsys.readouterr().out
    assert "reproduce: " in out and "g++" in out


def test_a_kernel_that_computes_nothing_fails_with_the_first_mismatch(mm_project, tmp_path, capsys):
    broken = tmp_path / "idle"
    shutil.copytree(mm_project, broken)
    declaration = re.search(r'extern "C" void kernel0\((.*)\);', (broken / "src" / "kernel_kernel.h").read_text())
    (broken / "src" / "kernel_kernel.cpp").write_text(
        f'#include "kernel_kernel.h"\nextern "C" void kernel0({declaration.group(1)}) {{}}\n')
    assert main(["csim", str(broken)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and re.search(r"C\[\d+\]\[\d+\]", out) and "expected" in out
    assert "reproduce: " in out and "g++" in out


@pytest.fixture
def cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "csim-cache"))


def test_timed_prints_one_summary_line_and_the_table_only_when_verbose(mm_project, capsys, cache):
    assert main(["csim", str(mm_project), "--timed"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert re.match(r"timed C simulation: [\d,]+ cycles; model [\d,]+ cycles \([+-]\d+\.\d%\), bottleneck PE; "
                    r"values PASS; slowest process \S+; slowest DRAM port \w+ \((read|write)\): [\d,]+ words", out)
    assert main(["csim", str(mm_project), "--timed", "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert verbose.splitlines()[0] == out.strip() and "values: PASS" in verbose and "<- slowest" in verbose
    for name in ("A_L3_in", "PE(0,0)", "C_L3_out"):
        assert re.search(rf"^{re.escape(name)} +[\d,]+ +[\d,]+ +[\d,]+ +[\d,]+ +[\d,]+", verbose, re.MULTILINE), name
    for port in ("A (read)", "B (read)", "C (write)"):
        assert re.search(rf"^DRAM {re.escape(port)} +[\d,]+ words +[\d,]+ bursts", verbose, re.MULTILINE), port


def test_the_time_limit_reaches_both_simulations(tmp_path, capsys, monkeypatch):
    seen = {}
    passed = CsimResult(passed=True, summary="PASS: 1 elements of C match", log="", mismatch=None, command="")
    monkeypatch.setattr(csim, "run_csim", lambda folder, **kw: seen.setdefault("plain", kw) and passed)
    assert main(["csim", str(tmp_path), "--time-limit", "42.5"]) == 0
    assert seen["plain"]["time_limit"] == 42.5

    def timed(folder, **kw):
        seen["timed"] = kw
        raise csim.TimedCsimError("stopped here")
    monkeypatch.setattr(csim, "run_timed_csim", timed)
    assert main(["csim", str(tmp_path), "--timed", "--time-limit", "7"]) == 1
    assert seen["timed"]["time_limit"] == 7
    capsys.readouterr()


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf"])
def test_a_time_limit_that_is_not_a_positive_number_is_one_line(tmp_path, capsys, value):
    assert main(["csim", str(tmp_path), "--time-limit", value]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "--time-limit" in captured.err and "positive number of seconds" in captured.err


def test_the_help_states_the_default_time_limit(capsys):
    assert main(["csim", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--time-limit SECONDS" in text and f"default {csim.RUN_TIMEOUT_S}" in text and "--verbose" in text


def test_timed_json_is_one_object_with_every_process(mm_project, capsys, cache):
    assert main(["csim", str(mm_project), "--timed", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] and data["complete"] and data["cycles"] > 0 and data["model_latency"] > 0
    assert data["slowest"] in data["processes"] or data["slowest"].split("/")[0] in data["processes"]
    assert all({"busy", "stall_in", "stall_out", "end", "iterations"} <= set(p) for p in data["processes"].values())


def test_timed_on_an_export_that_no_longer_builds_is_one_line_and_exit_1(mm_project, tmp_path, capsys, cache):
    broken = tmp_path / "broken"
    shutil.copytree(mm_project, broken)
    source = broken / "src" / "kernel_kernel.cpp"
    source.write_text(source.read_text() + "\nthis is not C++;\n")
    assert main(["csim", str(broken), "--timed"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "kernel_kernel.cpp:" in captured.err and "error" in captured.err and "build folder kept" in captured.err


def test_timed_on_a_directory_that_is_not_a_project(tmp_path, capsys):
    assert main(["csim", str(tmp_path), "--timed"]) == 2
    _one_error_line(capsys, "has no design.json")


def test_json_without_timed_is_refused(tmp_path, capsys):
    assert main(["csim", str(tmp_path), "--json"]) == 2
    _one_error_line(capsys, "--json prints the timing of --timed")
    assert main(["csim", str(tmp_path), "--verbose"]) == 2  # plain csim's --verbose (its details): not a project
    _one_error_line(capsys, "has no design.json")
