"""The export's DRAM layouts (engine/export/dram_layout.py), read back from the generated code: in the
serialized layout every DRAM loop touches one incrementing word index (the whole run of a loader or
storer, in its loop order, is 0, 1, ..., words - 1), in the natural layout the innermost DRAM loop
walks the words of one row segment; every m_axi pragma states the device's AXI settings and the
port's words; design.json and the README record the layout; a layout no export has is refused in
one line with nothing written."""
from __future__ import annotations

import itertools
import json
import re

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.export import export_project
from engine.models.device import DEVICES, load_device
from engine.models.dram import LAYOUTS
from engine.resources import KERNELS

MM = (KERNELS / "mm.c", {"I": "64", "J": "64", "K": "64"}, "i-j__i-j.k",
      {"i_t1": 32, "j_t1": 32, "k_t1": 32, "i_t2": 8, "j_t2": 8, "k_t2": 4})  # two words per row segment
CNN = (KERNELS / "cnn.c", {"O": "8", "I": "8", "H": "8", "W": "8", "P": "3", "Q": "3"}, "o-h__o-h-w.i-p-q",
       {"o_t1": 4, "h_t1": 4, "w_t1": 8, "i_t1": 4, "p_t1": 3, "q_t1": 3, "o_t2": 2, "h_t2": 2, "w_t2": 4, "i_t2": 2})
FOR = re.compile(r"for \((?:ap_uint<\d+>|long|int) (\w+) = 0; \1 < (\d+); \1\+\+\)")


def _export(case, tmp_path, layout, device=None):
    path, defines, design, params = case
    space = compile_kernel(path, defines=defines)
    out = export_project(space, space.design(design), params, tmp_path / f"{design.replace('.', '_')}-{layout}",
                         layout=layout, device=device, allow_over_budget=True, floorplan="none")
    return out, json.loads((out / "design.json").read_text())


def _enclosing_loops(code: str, access: str) -> list[tuple[str, int]]:
    """The `for` loops (variable, trip count) around the one line of `code` holding `access`."""
    stack, depth, found = [], 0, []
    for line in code.splitlines():
        if access in line:
            found.append(list(stack))
        loop = FOR.search(line)
        if loop:
            stack.append((loop.group(1), int(loop.group(2)), depth))
        depth += line.count("{") - line.count("}")
        while stack and stack[-1][2] >= depth:
            stack.pop()
    assert len(found) == 1, f"{access} occurs {len(found)} times"
    return [(var, trip) for var, trip, _ in found[0]]


def _addresses(access: str, loops: list[tuple[str, int]], fixed: dict[str, int] | None = None) -> list[int]:
    """The word index `access` touches at every iteration of `loops`, in loop order."""
    expression = access[access.index("[") + 1:-1]
    names = [var for var, _ in loops]
    return [eval(expression, {}, {**(fixed or {}), **dict(zip(names, point))})  # noqa: S307 - generated arithmetic
            for point in itertools.product(*(range(trip) for _, trip in loops))]


@pytest.mark.parametrize("case", [MM, CNN], ids=["mm", "cnn"])
def test_serialized_dram_loops_touch_one_incrementing_word_index(case, tmp_path):
    project, design = _export(case, tmp_path, "serialized")
    code = (project / "src" / "kernel_kernel.cpp").read_text()
    assert design["layout"] == "serialized"
    for port, dram in design["dram"].items():
        assert dram["layout"] == "serialized"
        loops = _enclosing_loops(code, dram["access"])
        assert _addresses(dram["access"], loops) == list(range(dram["words"])), port
        assert f"depth={dram['words']} " in code


@pytest.mark.parametrize("case", [MM, CNN], ids=["mm", "cnn"])
def test_natural_dram_loops_walk_whole_row_segments(case, tmp_path):
    project, design = _export(case, tmp_path, "natural")
    code = (project / "src" / "kernel_kernel.cpp").read_text()
    segments = 0
    for port, dram in design["dram"].items():
        assert dram["layout"] == "natural"
        loops = _enclosing_loops(code, dram["access"])
        var, trip = loops[-1]
        assert var.startswith("w")  # the innermost loop runs over the bus words of a row segment
        outer = {v: 1 for v, _ in loops[:-1]}
        along = _addresses(dram["access"], [(var, trip)], outer)
        assert along == list(range(along[0], along[0] + trip)), port
        segments += trip > 1
    assert segments or case is CNN  # MM's rows of A and B are two words (CNN's are one at these sizes)


def test_every_m_axi_pragma_states_the_devices_axi_settings_and_the_ports_words(tmp_path):
    data = json.loads((DEVICES / "u250.json").read_text())
    data["memory"]["axi"].update(max_burst_beats=32, outstanding=8, latency_cycles=100)
    (tmp_path / "dev.json").write_text(json.dumps(data))
    device = load_device(str(tmp_path / "dev.json"))
    project, design = _export(MM, tmp_path, "serialized", device=device)
    code = (project / "src" / "kernel_kernel.cpp").read_text()
    pragmas = re.findall(r"#pragma HLS INTERFACE m_axi (.*)", code)
    assert len(pragmas) == len(design["dram"]) == 3
    for text in pragmas:
        fields = dict(f.split("=") for f in text.split())
        assert {k: fields[k] for k in ("max_read_burst_length", "max_write_burst_length", "num_read_outstanding",
                                       "num_write_outstanding", "latency")} == {
            "max_read_burst_length": "32", "max_write_burst_length": "32", "num_read_outstanding": "8",
            "num_write_outstanding": "8", "latency": "100"}
        assert int(fields["depth"]) == design["dram"][fields["port"]]["words"]
    assert design["axi"] == {"max_burst_beats": 32, "outstanding": 8, "latency": 100, "boundary_bytes": 4096}


def test_the_layout_and_the_host_repacking_are_recorded(tmp_path):
    words, size = {}, {}
    for layout in LAYOUTS:
        project, design = _export(MM, tmp_path, layout)
        words[layout] = {p: d["words"] for p, d in design["dram"].items()}
        size[layout] = {p: d["words"] * d["word_bytes"] for p, d in design["dram"].items()}
        readme = (project / "README.md").read_text()
        assert f"### DRAM layout: {layout}" in readme
        repack = design["host_repack"]
        if layout == "natural":
            assert repack["serialize_bytes"] == repack["deserialize_bytes"] == 0
        else:
            moved = sum(2 * d["words"] * d["word_bytes"] for d in design["dram"].values() if d["kind"] == "read")
            assert repack["serialize_bytes"] == moved > 0
            assert repack["serialize_seconds"] == pytest.approx(moved / (repack["gbytes_per_s"] * 1e9))
            assert "Host repacking (estimated at" in readme
    # A is read once per j tile (2 of them), C is written once: the serialized buffer repeats A
    assert words["serialized"]["A"] == 2 * words["natural"]["A"]
    # (in full bus words when serialized: the same bytes in fewer, wider words)
    assert size["serialized"]["C"] == size["natural"]["C"]
    assert words["serialized"]["C"] < words["natural"]["C"]


def test_an_unknown_layout_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path, defines, design, params = MM
    args = ["export", str(path), *(x for k, v in defines.items() for x in ("-D", f"{k}={v}")), "--design", design,
            *(x for k, v in params.items() for x in ("--param", f"{k}={v}")), "-o", "out", "--layout", "diagonal"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: unknown DRAM layout 'diagonal' (accepted: serialized, natural)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kernel, defines, design, params", [
    ("mm", {"I": "60", "J": "50", "K": "70"}, "i-j__i-j.k",  # tiles that do not divide the loops: padding read too
     {"i_t1": 16, "j_t1": 12, "k_t1": 32, "i_t2": 4, "j_t2": 3, "k_t2": 4}),
    ("mm", {"I": "64", "J": "64", "K": "64"}, "i__i-j.k", {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4,
                                                           "j_t2": 4, "k_t2": 4}),
    ("cnn", CNN[1], CNN[2], CNN[3]),
])
def test_a_serialized_buffer_holds_exactly_the_off_chip_traffic_the_model_counts(kernel, defines, design, params,
                                                                                  tmp_path):
    """Two independent counts of the words a port moves: the export's DRAM loop and the model's traffic."""
    _, data = _export((KERNELS / f"{kernel}.c", defines, design, params), tmp_path, "serialized")
    element_bytes = {"float": 4}[data["descriptor"]["kernel"]["arrays"]["A" if kernel == "mm" else "fi"]["dtype"]]
    for port, dram in data["dram"].items():
        assert dram["layout"] == "serialized"
        traffic = data["report"]["offchip_elements"][port] * element_bytes
        if "store_words" in dram:  # an output in full bus words: the last one zero-filled past the run
            assert traffic <= dram["words"] * dram["word_bytes"] < traffic + dram["word_bytes"], port
        else:
            assert dram["words"] * dram["word_bytes"] == traffic, port
