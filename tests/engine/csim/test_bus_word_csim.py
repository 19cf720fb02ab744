"""Serialized outputs in full bus words pass C simulation (engine/export/dram_layout.py): the serialize
stage packs the storer's words into 512-bit words, the harness's `deserialize_<port>` reads them back
in the storer's order, and a zero-filled tail (words not a multiple of the bus word) neither loses a
result nor writes past the buffer (its guard words). The timed C simulation sees the port's bus words:
one DRAM write per bus word, in bursts."""
from __future__ import annotations

import json

import pytest

from engine.compiler.design_space import compile_kernel
from engine.csim import run_csim, run_timed_csim
from engine.export import export_project
from engine.resources import KERNELS

# the cases of tests/engine/export/test_bus_word_outputs.py, which checks their code
MM = ("mm", {"I": "64", "J": "64", "K": "64"}, "i-j__i-j.k",
      {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4})  # C in 4-float words
TAIL = ("mm", {"I": "60", "J": "45", "K": "70"}, "i-j__i-j.k",  # 2,700 one-float words: 168 bus words and 12
        {"i_t1": 15, "j_t1": 15, "k_t1": 14, "i_t2": 3, "j_t2": 5, "k_t2": 2})
CNN = ("cnn", {"O": "8", "I": "8", "H": "8", "W": "8", "P": "3", "Q": "3"}, "o-h__o-h-w.i-p-q",
       {"o_t1": 4, "h_t1": 4, "w_t1": 8, "i_t1": 4, "p_t1": 3, "q_t1": 3, "o_t2": 2, "h_t2": 2, "w_t2": 4, "i_t2": 2})


def _export(case, tmp_path):
    kernel, defines, design, params = case
    space = compile_kernel(KERNELS / f"{kernel}.c", defines=defines)
    out = export_project(space, space.design(design), params, tmp_path / kernel, allow_over_budget=True,
                         floorplan="none")
    return out, json.loads((out / "design.json").read_text())


def _output(design: dict) -> str:
    return next(p for p, d in design["dram"].items() if d["kind"] == "write")


@pytest.mark.parametrize("case", [MM, TAIL, CNN], ids=["mm", "mm-tail", "cnn"])
def test_outputs_in_bus_words_pass_c_simulation(case, tmp_path):
    project, design = _export(case, tmp_path)
    assert "store_words" in design["dram"][_output(design)]
    result = run_csim(project, seed=3)
    assert result.passed, result.summary + "\n" + result.log[-2000:]


def test_the_timed_simulation_writes_one_bus_word_per_dram_word(tmp_path, timed_cache):
    project, design = _export(TAIL, tmp_path)
    port = _output(design)
    timed = run_timed_csim(project, cache=timed_cache)
    assert timed.passed and timed.complete
    written = json.loads(json.dumps(timed.as_dict()))["dram"][f"{port} (write)"]
    assert written["words"] == design["dram"][port]["words"]
    assert written["mean_burst"] > 8
