"""The PEs an array holds (engine/compiler/architecture/pe_set.py, descriptor 1.8 `topology.pe_set`):
AutoSA's LU along k and j holds the triangle k <= j, and the model, the exported kernel0 and the
simulator all count that triangle; a rectangular domain holds the whole grid and its topology is
left as it was."""
from __future__ import annotations

import re

import islpy as isl
import pytest

from autosa_lu_cases import autosa_lu
from engine.compiler.architecture.build import build_architecture
from engine.compiler.architecture.pe_set import existing_pes, restrict_to_pe_set, stub_pes
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.topology import topology_graph
from engine.export.hls_kernel import kernel_sources
from engine.models.cache import shared_model
from engine.models.device import load_device
from engine.models.report import evaluate_configuration
from engine.sim import simulate

@pytest.fixture(scope="module")
def lu():
    """lu(n) -> (space, design, descriptor, model report) of AutoSA's command, built once per size."""
    return autosa_lu


def test_descriptor_states_the_triangle_of_lu_k_j(lu):
    space, design, descriptor, report = lu(4)
    assert design.id == "k-j__k-j-i"
    held = existing_pes(descriptor, report["params"])
    assert held == {(k, j) for k in range(4) for j in range(4) if k <= j}
    assert report["pes"]["count"] == len(held) == 10
    assert isl.Set(descriptor["topology"]["pe_set"]).is_equal(isl.Set("{ PE[k, j] : 0 <= k <= j <= 3 }"))
    # the [j,i] array has points at every (j, i): no set, every PE of the grid
    other = space.design("j-i__k-j-i")
    whole = build_descriptor(space, other, build_architecture(space, other))
    assert whole["version"] == "1.9" and whole["topology"]["pe_set"] is None


def test_the_set_applies_only_with_one_tile_per_space_loop():
    descriptor = {"topology": {"pe_set": "{ PE[i, j] : 0 <= j <= i <= 3 }", "space_loops": ["i", "j"]},
                  "design": {"problem_size": {"i": 4, "j": 4, "k": 8}}}
    assert len(existing_pes(descriptor, {"i_t1": 4, "j_t1": 4, "k_t1": 2})) == 10
    assert existing_pes(descriptor, {"i_t1": 2, "j_t1": 4, "k_t1": 8}) is None  # two tiles along i: the grid


def test_chains_end_at_the_last_pe_held_and_no_module_reaches_a_pe_outside(lu):
    """Every I/O network of LU [k,j] reaches the PEs held only (io_reach.py: A at k = 0, U on the
    diagonal, L above it), so no PE outside the triangle is left as a stub."""
    _, _, descriptor, report = lu(4)
    values = report["params"]
    graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
    stubs = stub_pes(graph, descriptor, values)
    assert stubs == frozenset()
    assert sorted(n[1] for n in graph if n[0] == "PE") == sorted(existing_pes(descriptor, values))
    chained = {"V": 0, "U_tmp": 0}
    for src, dst, data in graph.edges(data=True):
        if src[0] == dst[0] == "PE":  # V down k, U_tmp along j: only between PEs held
            assert src[1] not in stubs and dst[1] not in stubs, (src, dst, data["array"])
            chained[data["array"]] += 1
    # the FIFOs the model charges are those the exporter builds: 4 x 3 / 2 along each, not 4 x 3
    counted = {f["array"]: f["count"] for f in descriptor["topology"]["fifos"] if f["pattern"] == "pe_chain"}
    assert chained == {"V": 6, "U_tmp": 6} and counted == {"V": "6", "U_tmp": "6"}


def test_kernel0_calls_as_many_pes_as_the_model_counts_at_12(lu):
    """AutoSA's LU [k,j] at N = 12: 78 PE calls (12 x 13 / 2), the model's count; no I/O module
    sends to the other 66 grid positions (io_reach.py), so no dummy sink stands there."""
    _, _, descriptor, report = lu(12)
    cpp = kernel_sources(descriptor, report["params"])["kernel_kernel.cpp"]
    top = cpp[cpp.index('extern "C" void kernel0'):]
    calls = re.findall(r"^\s*PE\((\d+), (\d+),", top, re.M)
    assert len(calls) == report["pes"]["count"] == 78
    assert all(int(k) <= int(j) for k, j in calls)
    assert len(re.findall(r"^\s*A_PE_sink\(", top, re.M)) == 0
    assert "78 PEs of a 12 x 12 grid" in cpp


def test_simulator_builds_the_pes_held(lu):
    _, _, descriptor, report = lu(4)
    result = simulate(descriptor, report["params"])
    assert result.modules["PE"].instances == 10 and "PE_sink" not in result.modules
    assert abs(result.cycles - report["latency_cycles"]) <= 0.05 * report["latency_cycles"]


@pytest.mark.parametrize("design", ["i-j__i-j.k", "k__i-j.k"])
def test_a_rectangular_domain_keeps_its_whole_grid(write_kernel, design):
    path = write_kernel("""\
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++)
              C[i][j] += A[i][k] * B[k][j];
        """, prelude="float A[4][4], B[4][4], C[4][4];\n")
    space = compile_kernel(path)
    chosen = space.design(design)
    model = shared_model(space, chosen, load_device("u250"))
    descriptor = build_descriptor(space, chosen, model.architecture)
    values = evaluate_configuration(model, {p.name: p.upper if p.role == "array_partition" else 1
                                            for p in chosen.params if p.tunable})["params"]
    assert descriptor["topology"]["pe_set"] is None and existing_pes(descriptor, values) is None
    graph = topology_graph(descriptor, values)
    assert restrict_to_pe_set(graph, descriptor, values) is graph


def test_the_floorplan_netlist_charges_the_pes_held(lu):
    """The floorplan's per-instance resources (engine/floorplan/netlist.py) add up to the model's PEs:
    the positions outside the triangle hold nothing (no I/O module reaches them, io_reach.py)."""
    from engine.floorplan.netlist import build_netlist

    _, _, descriptor, report = lu(4)
    net = build_netlist(descriptor, report["params"], load_device("u250"))
    pes = {node: use for node, use in net.instances.items() if node[0] == "PE"}
    held = {node for node in pes if node[1][0] <= node[1][1]}
    assert len(pes) == len(held) == report["pes"]["count"] == 10
    assert sum(pes[n]["DSP"] for n in held) == pytest.approx(report["dsp"])
