"""Each I/O network over the PEs that read (write) its array from outside (engine/compiler/architecture/
io_reach.py, descriptor 1.9 `io_groups[].pe_reach`): AutoSA's LU [k,j] reads A from DRAM at k = 0 only,
so its A modules serve that row; U and L are drained from the PEs that write them. The model's module
counts, the exported kernel0, the simulator and the topology view all hold the same instances."""
from __future__ import annotations

import re
from collections import Counter

import islpy as isl
import pytest

from app.models.selection_evaluation import SelectionRequest, evaluate_selection
from engine.compiler.design_space import compile_kernel
from engine.compiler.expressions import evaluate
from engine.compiler import isl_helpers as ih
from engine.csim import run_csim
from engine.export.hls_kernel import kernel_sources
from engine.export.project import export_project
from engine.floorplan.netlist import build_netlist
from engine.models.device import load_device
from engine.resources import KERNELS
from engine.sim import simulate

from autosa_lu_cases import autosa_lu


@pytest.fixture(scope="module")
def lu():
    """lu(n) -> (space, design, descriptor, model report) of AutoSA's command, built once per size."""
    return autosa_lu


def reading_pes(space, array: str) -> int:
    """isl's count of the (k, j) values at which a statement reads `array` (the test's own count)."""
    band = space.band
    points = None
    for name in band.compute_statements:
        if any(a.array == array for a in space.kernel.statement(name).reads()):
            image = space.model.domains[name].apply(band.schedules[name])
            points = image if points is None else points.union(image)
    drop = [d for d, loop in enumerate(band.loops) if loop not in ("k", "j")]
    for d in reversed(drop):
        points = points.project_out(isl.dim_type.set, d, 1)
    return ih.count_points(points.coalesce())


def calls(cpp: str) -> Counter:
    """kernel0's calls by function name."""
    top = cpp[cpp.index('extern "C" void kernel0'):]
    return Counter(re.findall(r"^\s*(\w+)\(", top, re.M))


def by_module(counted: Counter, module: str) -> int:
    """Calls of a module's variants (`A_L1_in`, `A_L1_in_head`, `A_L1_in_boundary`, ...)."""
    return sum(n for name, n in counted.items() if re.fullmatch(module + r"(_head|_boundary|_alone)?", name))


def test_the_descriptor_states_the_pes_each_network_reaches(lu):
    space, _, descriptor, _ = lu(4)
    reach = {g["name"]: g["pe_reach"] for g in descriptor["io_groups"]}
    assert isl.Set(reach["A"]).is_equal(isl.Set("{ PE[k, j] : k = 0 and 0 <= j <= 3 }"))
    assert isl.Set(reach["U"]).is_equal(isl.Set("{ PE[k, j] : 0 <= k = j <= 3 }"))
    assert isl.Set(reach["L"]).is_equal(isl.Set("{ PE[k, j] : 0 <= k < j <= 3 }"))
    counts = {m["name"]: m["count"] for m in descriptor["topology"]["modules"]}
    assert counts["A_L1_in"] == str(reading_pes(space, "A")) == "4" and counts["A_L2_in"] == "1"
    assert (counts["U_L1_out"], counts["U_L2_out"], counts["L_L1_out"], counts["L_L2_out"]) == ("4", "4", "6", "3")
    chains = {(f["source"], f["pattern"]): f["count"] for f in descriptor["topology"]["fifos"]}
    assert chains[("A_L1_in", "chain")] == "3" and chains[("A_L1_in", "to_pe")] == "4"
    assert chains[("L_L1_out", "chain")] == "3"  # rows of 3, 2, 1 L modules: 2 + 1 + 0 FIFOs between them


def test_kernel0_feeds_a_only_to_the_pes_that_read_it_from_dram(lu):
    """At N = 12: 12 A_L1_in modules (isl's count of the PEs reading A), one A_L2_in, no dummy sink;
    the other PEs get an unused stream their guarded read never touches. Every module is called as
    many times as the model counts it."""
    space, _, descriptor, report = lu(12)
    values = report["params"]
    cpp = kernel_sources(descriptor, values)["kernel_kernel.cpp"]
    counted = calls(cpp)
    assert by_module(counted, "A_L1_in") == reading_pes(space, "A") == 12
    assert by_module(counted, "A_L2_in") == 1 and "A_PE_sink" not in counted
    assert counted["PE"] == report["pes"]["count"] == 78
    for m in descriptor["topology"]["modules"]:
        assert by_module(counted, m["name"]) == int(evaluate(m["count"], values)), m["name"]
    assert "if ((k_pe == 0))" in cpp and "A_data = A_in.read();" in cpp
    assert re.search(r"^\s*PE\(1, 1, \w+, A_unused_in_1_1,", cpp, re.M)
    assert "A_L1_in x12" in cpp and "L_L1_out x66" in cpp and "L_L2_out x11" in cpp


def test_simulator_and_model_count_the_same_instances(lu):
    _, _, descriptor, report = lu(4)
    result = simulate(descriptor, report["params"])
    for m in descriptor["topology"]["modules"]:
        assert result.modules[m["name"]].instances == int(evaluate(m["count"], report["params"])), m["name"]
    assert "PE_sink" not in result.modules
    assert abs(result.cycles - report["latency_cycles"]) <= 0.05 * report["latency_cycles"]


def test_the_floorplan_netlist_holds_the_same_instances(lu):
    _, _, descriptor, report = lu(4)
    net = build_netlist(descriptor, report["params"], load_device("u250"))
    held = Counter(node[0] for node in net.instances)
    for m in descriptor["topology"]["modules"]:
        assert held[m["name"]] == int(evaluate(m["count"], report["params"])), m["name"]
    assert sorted(node[1] for node in net.instances if node[0] == "A_L1_in") == [(0, j) for j in range(4)]


def test_the_export_c_simulates(lu, tmp_path):
    space, design, _, report = lu(4)
    project = export_project(space, design, report["params"], tmp_path / "lu4", floorplan="none")
    result = run_csim(project)
    assert result.passed, result.log[-2000:]


def test_the_topology_view_draws_the_same_modules():
    """The window's topology of the bundled LU (its 3-D form, A read at k = 0 too) holds the A modules
    of row k = 0 only."""
    space = compile_kernel(KERNELS / "lu.c", defines={"N": "4"})
    design = space.design("k-j__k-j-i")
    values = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
    shown = evaluate_selection(SelectionRequest(0, space, design, load_device(), values))
    assert sorted(n[1] for n in shown.graph if n[0] == "A_L1_in") == [(0, j) for j in range(4)]
    assert [n for n in shown.graph if n[0] == "A_L2_in"] == [("A_L2_in", (0,))]
