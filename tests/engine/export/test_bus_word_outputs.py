"""Serialized outputs in full bus words (engine/export/dram_layout.py): a write-only port in the
serialized layout whose storer's word is narrower than the bus is written by a serialize stage in
WORD_BITS-bit words at one incrementing index, the tail zero-padded; the width is the one rule of
engine/compiler/architecture/dram_runs.py, and kernel0's port type, the m_axi depth, kernel_kernel.h
and design.json agree on it. The natural layout, ports read back and storers whose word already fills
the bus keep the port's word."""
from __future__ import annotations

import json
import re

import pytest

from engine.compiler.architecture.dram_runs import serialized_store_words
from engine.compiler.design_space import compile_kernel
from engine.compiler.tuning import WORD_BITS
from engine.export import export_project
from engine.resources import KERNELS

MM = ("mm", {"I": "64", "J": "64", "K": "64"}, "i-j__i-j.k",
      {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4})  # C in 4-float words
TAIL = ("mm", {"I": "60", "J": "45", "K": "70"}, "i-j__i-j.k",  # 2,700 one-float words: 168 bus words and 12
        {"i_t1": 15, "j_t1": 15, "k_t1": 14, "i_t2": 3, "j_t2": 5, "k_t2": 2})
CNN = ("cnn", {"O": "8", "I": "8", "H": "8", "W": "8", "P": "3", "Q": "3"}, "o-h__o-h-w.i-p-q",
       {"o_t1": 4, "h_t1": 4, "w_t1": 8, "i_t1": 4, "p_t1": 3, "q_t1": 3, "o_t2": 2, "h_t2": 2, "w_t2": 4, "i_t2": 2})
PASSES = ("mm", {"I": "64", "J": "64", "K": "64"}, "j-k__j-k.i",  # C read back, serialized (in row order)
          {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4})


def _export(case, tmp_path, layout="serialized"):
    kernel, defines, design, params = case
    space = compile_kernel(KERNELS / f"{kernel}.c", defines=defines)
    out = export_project(space, space.design(design), params, tmp_path / f"{kernel}-{layout}", layout=layout,
                         allow_over_budget=True, floorplan="none")
    return out, json.loads((out / "design.json").read_text())


def _output(design: dict) -> str:
    return next(p for p, d in design["dram"].items() if d["kind"] == "write")


@pytest.mark.parametrize("case", [MM, TAIL, CNN], ids=["mm", "mm-tail", "cnn"])
def test_a_serialized_output_is_written_in_full_bus_words_by_its_serialize_stage(case, tmp_path):
    project, design = _export(case, tmp_path)
    port = _output(design)
    dram = design["dram"][port]
    code = (project / "src" / "kernel_kernel.cpp").read_text()
    header = (project / "src" / "kernel_kernel.h").read_text()
    bits = 8 * {"float": 4}[design["descriptor"]["kernel"]["arrays"][port]["dtype"]]
    lanes = int(re.search(rf"typedef packed<{port}_t, (\d+)> {port}_word;", header).group(1))
    pieces = serialized_store_words(lanes, bits)
    assert pieces > 1 and 8 * dram["word_bytes"] == WORD_BITS == pieces * lanes * bits
    assert dram["store_words"] == pieces and dram["access"] == f"{port}[n]"
    # the storer's words: the model's off-chip count of the array, padded to whole bus words
    stored = design["report"]["offchip_elements"][port] // lanes
    assert dram["words"] == -(-stored // pieces)
    assert f"typedef packed<{port}_t, {pieces * lanes}> {port}_bus_word;" in header
    assert f"#define {port}_DRAM_WORD {port}_bus_word" in header
    assert f"#define {port}_DRAM_WORDS {dram['words']}L" in header
    assert re.search(rf"extern \"C\" void kernel0\(.*\b{port}_bus_word \*{port}\)", code)
    assert re.search(rf"port={port} .*depth={dram['words']} ", code)
    stage = re.search(rf"static void (\w+_serialize)\({port}_bus_word \*{port}, "
                      rf"hls::stream<{port}_word> &from_storer\)", code)
    assert stage and f"for (ap_uint<{dram['words'].bit_length()}> n = 0; n < {dram['words']}; n++)" in code
    assert f"#pragma HLS pipeline II={pieces}" in code and f"  {port}[n] = word;" in code
    assert ("past the run: zero" in code) == (stored % pieces != 0)
    assert "to_bus.write(value);" in code and f"{stage.group(1)}({port}, {port}_to_bus);" in code


def test_the_natural_layout_and_ports_read_back_keep_the_ports_word(tmp_path):
    _, natural = _export(MM, tmp_path, "natural")
    assert natural["dram"]["C"]["word_bytes"] == 16 and "store_words" not in natural["dram"]["C"]
    project, passes = _export(PASSES, tmp_path)
    c = passes["dram"]["C"]
    assert c["kind"] == "read and write" and c["layout"] == "serialized" and "store_words" not in c
    assert "_serialize(" not in (project / "src" / "kernel_kernel.cpp").read_text()
