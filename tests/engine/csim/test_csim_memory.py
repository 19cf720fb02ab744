"""Plain `systolic csim` is bounded (engine/csim/__init__.py): its host buffers are estimated before
anything is built and a project over the memory limit is refused in one line (exit 2); the compiled
program runs under the limit, a run that reaches it (words piling up in the FIFOs of a sequential C
simulation) is a failure that says so; the summary line comes first and the details only with
--verbose."""
from __future__ import annotations

import json

import pytest

import engine.csim as csim
from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.csim.harness import GUARD_WORDS, host_bytes
from engine.export import export_project
from engine.export.interface import kernel_interface
from engine.resources import KERNELS


def _export(tmp_path, size, params):
    space = compile_kernel(KERNELS / "mm.c", defines={"I": str(size), "J": str(size), "K": str(size)})
    return export_project(space, space.design("i-j__i-j.k"), params, tmp_path / f"mm{size}", floorplan="none")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return _export(tmp_path_factory.mktemp("memory"), 16, {"i_t1": 8, "j_t1": 8, "k_t1": 8, "i_t2": 4, "j_t2": 4,
                                                          "k_t2": 4})


def test_the_host_buffers_are_the_arrays_their_padded_words_and_the_serialized_buffers(small):
    design = json.loads((small / "design.json").read_text())
    descriptor, values = design["descriptor"], design["values"]
    interface = kernel_interface(descriptor, values)
    arrays = sum(4 * 16 * 16 for _ in descriptor["kernel"]["arrays"])  # three float 16 x 16 arrays
    padded = sum(4 * p.padded_elements for p in interface.ports)
    serial = sum((d["words"] + GUARD_WORDS) * d["word_bytes"] for d in design["dram"].values())
    assert all(d["layout"] == "serialized" for d in design["dram"].values())
    assert host_bytes(descriptor, interface, design["dram"]) == arrays + padded + serial


def test_a_project_over_the_limit_is_refused_in_one_line_before_anything_is_built(small, capsys, monkeypatch):
    monkeypatch.setattr(csim, "MEMORY_LIMIT", 1000)
    monkeypatch.setattr(csim, "compile_program", lambda *a, **k: pytest.fail("built over the limit"))
    assert main(["csim", str(small)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "host buffers need" in captured.err and "memory limit" in captured.err and "1000" not in captured.err


def test_the_summary_line_comes_first_and_the_details_only_with_verbose(small, capsys):
    assert main(["csim", str(small)]) == 0
    quiet = capsys.readouterr().out.splitlines()
    assert len(quiet) == 1 and quiet[0].startswith("PASS")
    assert main(["csim", str(small), "--verbose"]) == 0
    verbose = capsys.readouterr().out.splitlines()
    assert verbose[0] == quiet[0] and len(verbose) == 3
    assert verbose[1].startswith("host buffers:") and "memory limit 2.00 GB" in verbose[1]
    assert verbose[2].startswith("command: ") and "g++" in verbose[2]


def test_the_program_runs_under_the_limit_and_a_run_that_reaches_it_says_so(tmp_path, monkeypatch):
    """MM 128^3: host buffers of about 1 MB, but the FIFOs of the sequential simulation hold far more."""
    project = _export(tmp_path, 128, {"i_t1": 32, "j_t1": 32, "k_t1": 128, "i_t2": 4, "j_t2": 4, "k_t2": 16})
    monkeypatch.setattr(csim, "MEMORY_LIMIT", 25_000_000)
    result = csim.run_csim(project)
    assert not result.passed and result.host_bytes < csim.MEMORY_LIMIT
    assert result.summary.startswith("FAIL: the simulation needed more than its 25.0 MB memory limit")
    monkeypatch.setattr(csim, "MEMORY_LIMIT", 2_000_000_000)
    assert csim.run_csim(project).passed
