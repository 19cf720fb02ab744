"""An export with a floorplan (`floorplan="auto"`, `systolic export`'s default): floorplan.tcl names every
process call of the generated kernel0 (parsed from the C++, with the names Vitis HLS gives a call with
constant arguments) and every SLR-crossing FIFO, each once, in the SLR the floorplan chose; the crossing
FIFOs are written deeper and marked; the Makefile's link runs the constraints; README and design.json
carry the floorplan. `floorplan="auto"` is `export_project`'s default, as `systolic export`'s;
`floorplan="none"` writes nothing of it. Small kernels: the floorplans solve in seconds."""
from __future__ import annotations

import json
import re

import pytest

from engine.compiler.design_space import compile_kernel
from engine.export import export_project
from engine.export.constraints import CELL_PATTERN, constraint_names
from engine.floorplan.pipeline import crossing_pipeline
from engine.resources import KERNELS

CASES = {
    "mm": ("mm", {"I": 32, "J": 32, "K": 32}, "i-j__i-j.k",
           dict(i_t1=16, j_t1=16, k_t1=8, i_t2=4, j_t2=4, k_t2=4)),
    "mm-k-space": ("mm", {"I": 16, "J": 16, "K": 16}, "i-k__i-j.k",
                   dict(i_t1=8, j_t1=8, k_t1=4, i_t2=4, j_t2=4)),
    "cnn": ("cnn", {"O": 4, "I": 4, "H": 6, "W": 7, "P": 3, "Q": 3}, "o-h__o-h-w.i-p-q",
            dict(o_t1=4, h_t1=6, w_t1=7, i_t1=4, p_t1=3, q_t1=3, o_t2=2, h_t2=3, w_t2=7, i_t2=2)),
    # <[i,k],j>: C is revisited at every k tile, so the processes run in kernel0_pass, once per pass,
    # called with the pass's tile indices and `reload` (variables) after their grid index (constants)
    "mm-passes": ("mm", {"I": 16, "J": 16, "K": 16}, "i-j__i-k.j",
                  dict(i_t1=8, j_t1=8, k_t1=8, i_t2=4, j_t2=4, k_t2=2)),
    # the same design with one k tile: no partial result is read back, the reload modules (C_L3_in,
    # C_L2_in, C_L1_in) are not instantiated, and the floorplan must not place them
    "mm-no-reload": ("mm", {"I": 16, "J": 16, "K": 16}, "i-j__i-k.j",
                     dict(i_t1=8, j_t1=8, k_t1=16, i_t2=4, j_t2=4, k_t2=2)),
}


def _top_calls(cpp: str) -> list[str]:
    """The RTL instance name of every process call in the dataflow region of kernel0 (or of kernel0_pass):
    `F(0, 1, streams...)` -> `F_0_1_U0` (the leading integer-literal arguments)."""
    region = cpp[cpp.index("#pragma HLS dataflow"):]
    region = region[:region.index("\n}")]
    names = []
    for function, args in re.findall(r"^\s*(\w+)\(([^;]*)\);$", region, re.M):
        index = []
        for arg in (a.strip() for a in args.split(",")):
            if not re.fullmatch(r"\d+", arg):
                break
            index.append(arg)
        names.append("_".join([function, *index]) + "_U0")
    return names


def _streams(cpp: str) -> dict[str, int]:
    return {name: int(depth) for name, depth in re.findall(r"#pragma HLS stream variable=(\w+) depth=(\d+)", cpp)}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    cache = {}

    def export(case: str, floorplan: str = "auto"):
        if (case, floorplan) not in cache:
            kernel, sizes, design, params = CASES[case]
            space = compile_kernel(KERNELS / f"{kernel}.c", defines={k: str(v) for k, v in sizes.items()})
            out = tmp_path_factory.mktemp(f"{case}-{floorplan}")
            # "auto" is the library's default (as the CLI's): left out, so the default is what is tested
            cache[case, floorplan] = export_project(space, space.design(design), params, out, force=True,
                                                    **({} if floorplan == "auto" else {"floorplan": floorplan}))
        return cache[case, floorplan]

    return export


@pytest.mark.parametrize("case", CASES)
def test_the_constraints_name_every_process_call_of_the_kernel_once(exported, case):
    project = exported(case)
    cpp = (project / "src" / "kernel_kernel.cpp").read_text()
    placed = constraint_names((project / "floorplan.tcl").read_text())
    calls = _top_calls(cpp)
    assert len(calls) == len(set(calls)) > 4  # each call has a name of its own
    processes = [n for names in placed.values() for n in names if n.endswith("_U0")]
    assert sorted(processes) == sorted(calls)
    design = json.loads((project / "design.json").read_text())["floorplan"]
    assert set(placed) <= {s["slr"] for s in design["slrs"]}
    # a PE call sits in the SLR the floorplan gave that PE
    slr_of = {name: s["slr"] for s in design["slrs"] for name in s["instances"]}
    for slr, names in placed.items():
        for name in names:
            pe = re.fullmatch(r"PE_(\d+(?:_\d+)*)_U0", name)
            if pe:
                assert slr_of[f"PE({pe.group(1).replace('_', ',')})"] == slr


@pytest.mark.parametrize("case", CASES)
def test_crossing_fifos_are_deeper_marked_and_placed_at_their_reader(exported, case):
    project = exported(case)
    cpp = (project / "src" / "kernel_kernel.cpp").read_text()
    plain = _streams((exported(case, "none") / "src" / "kernel_kernel.cpp").read_text())
    deep = _streams(cpp)
    crossing = json.loads((project / "design.json").read_text())["floorplan"]["crossing_fifos"]
    assert crossing, "the DRAM-facing modules sit in their banks' SLRs: some FIFO crosses"
    placed = constraint_names((project / "floorplan.tcl").read_text())
    for c in crossing:
        pipe = crossing_pipeline(c["from_slr"], c["to_slr"])
        assert (c["latency"], c["extra_depth"]) == (pipe.latency, pipe.extra_depth) and pipe.latency > 0
        assert deep[c["stream"]] == plain[c["stream"]] + pipe.extra_depth
        assert f"{c['stream']}_U" in placed[c["to_slr"]]
        assert re.search(rf"SLR crossing SLR{c['from_slr']} -> SLR{c['to_slr']}.*\n#pragma HLS stream "
                         rf"variable={c['stream']} ", cpp)
    names = {c["stream"] for c in crossing}
    assert all(deep[s] == plain[s] for s in plain if s not in names)
    assert cpp.count("SLR crossing") == len(crossing)


def test_makefile_readme_and_design_json_carry_the_floorplan(exported):
    project = exported("mm")
    makefile = (project / "Makefile").read_text()
    assert re.search(r"\$\(XCLBIN\): .*floorplan\.tcl\n\t\$\(VPP\) -l .*\\\n\s+--vivado\.prop "
                     r"run\.impl_1\.STEPS\.OPT_DESIGN\.TCL\.PRE=\$\(CURDIR\)/floorplan\.tcl\n", makefile)
    readme = (project / "README.md").read_text()
    fp = json.loads((project / "design.json").read_text())["floorplan"]
    assert "## SLR floorplan" in readme
    for s in fp["slrs"]:
        row = next(line for line in readme.splitlines() if line.startswith(f"| {s['slr']} | "))
        assert f"{s['utilisation']['DSP']:.1%}" in row
    for b in fp["boundaries"]:
        assert f"| SLR{b['between'][0]}-SLR{b['between'][1]} | {b['wires']:,} | {b['fifos']} |" in readme
    assert "not a Vivado result" in readme and fp["clock"]["floorplanned_mhz"] > 0


def test_floorplan_none_writes_nothing_of_it(exported):
    project = exported("mm", "none")
    assert not (project / "floorplan.tcl").exists()
    assert "floorplan" not in json.loads((project / "design.json").read_text())
    assert "vivado.prop" not in (project / "Makefile").read_text()
    assert "SLR" not in (project / "README.md").read_text()
    assert "SLR crossing" not in (project / "src" / "kernel_kernel.cpp").read_text()


@pytest.mark.parametrize("case", CASES)
def test_the_floorplan_places_exactly_the_processes_the_kernel_calls(exported, case):
    """Every instance of design.json's floorplan is called in the C++ (a PE-line sink or reduction head
    belongs to its PE, a serialize stage to its storer) and every call's instance is placed: no module the kernel skips at these values."""
    project = exported(case)
    cpp = (project / "src" / "kernel_kernel.cpp").read_text()
    placed = {i for s in json.loads((project / "design.json").read_text())["floorplan"]["slrs"] for i in s["instances"]}
    called = set()
    for name in _top_calls(cpp):
        function, index = re.fullmatch(r"(\w+?)((?:_\d+)*)_U0", name).groups()
        # (a storer's serialize stage belongs to its storer: engine/export/dram_layout.py)
        module = ("PE" if function.endswith(("_PE_sink", "_PE_head"))
                  else re.sub(r"_(boundary|head|serialize)$", "", function))
        called.add(f"{module}({index[1:].replace('_', ',')})" if index else module)
    assert placed == called


def test_a_multi_pass_kernel_names_its_processes_by_their_constant_arguments(exported):
    """In kernel0_pass the calls pass the pass's tile indices and `reload` (variables) after the grid
    index (constants); Vitis HLS names a dataflow process after its function and its constant
    arguments (AutoSA's `PE_wrapper(0, 1, fifo...)` is `PE_wrapper_0_1_U0`), so floorplan.tcl names
    each call once, under kernel0_pass's instance (CELL_PATTERN allows the level between)."""
    cpp = (exported("mm-passes") / "src" / "kernel_kernel.cpp").read_text()
    region = cpp[cpp.index("static void kernel0_pass("):]
    assert region.index("#pragma HLS dataflow") < region.index('extern "C" void kernel0(')
    calls = re.findall(r"^\s*(\w+)\(((?:\d+, )*)i_tile, k_tile, reload, ", region, re.M)
    assert len(calls) > 4 and {f for f, _ in calls} >= {"PE", "C_L3_in", "C_L3_out"}
    placed = {n for names in constraint_names((exported("mm-passes") / "floorplan.tcl").read_text()).values()
              for n in names}
    names = {"_".join([f, *re.findall(r"\d+", i)]) + "_U0" for f, i in calls}
    assert len(names) == len(calls) and names <= placed and "PE_1_0_U0" in names and "C_L3_in_U0" in names


def test_the_skipped_reload_modules_are_neither_called_nor_placed(exported):
    project = exported("mm-no-reload")
    cpp = (project / "src" / "kernel_kernel.cpp").read_text()
    assert "static void kernel0_pass(" not in cpp and not re.search(r"\bC_L[123]_in\w*\(", cpp)
    fp = json.loads((project / "design.json").read_text())["floorplan"]
    assert not [i for s in fp["slrs"] for i in s["instances"] if i.startswith(("C_L3_in", "C_L2_in", "C_L1_in"))]
    assert re.search(r"\bC_L3_in\(", (exported("mm-passes") / "src" / "kernel_kernel.cpp").read_text())


def test_the_cell_pattern_finds_a_process_on_both_platform_generations():
    """floorplan.tcl's regular expression (Vivado matches the whole cell name) on the kernel's region of
    the xdma_201830 platforms and of the gen3x16 ones (the default), with kernel0_pass's level between."""
    pattern = CELL_PATTERN.format(name="PE_0_1_U0")
    for cell in ("pfm_top_i/dynamic_region/kernel0_1/inst/PE_0_1_U0",
                 "level0_i/ulp/kernel0_1/inst/PE_0_1_U0",
                 "level0_i/level1/level1_i/ulp/kernel0_1/inst/grp_kernel0_pass_fu_120/PE_0_1_U0"):
        assert re.fullmatch(pattern, cell), cell
    assert not re.fullmatch(pattern, "level0_i/ulp/kernel0_1/inst/PE_0_11_U0")
    assert not re.fullmatch(pattern, "level0_i/ulp/kernel0_1/inst/C_PE_0_1_U0")
