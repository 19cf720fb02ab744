"""Hardware construction, checked against the papers' published designs (published-results.md)."""
from __future__ import annotations

import json

import networkx as nx
import pytest

from engine.compiler.architecture.build import build_architecture
from engine.compiler.descriptor import SCHEMA, VERSION, build_descriptor
from engine.compiler.expressions import evaluate
from engine.compiler.design_space import compile_kernel
from engine.compiler.topology import topology_graph
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel

TABLE_3 = dict(i_t1=129, j_t1=130, k_t1=64, i_t2=3, j_t2=13, k_t2=4)


@pytest.fixture(scope="module")
def mm():
    from engine.resources import KERNELS
    return compile_kernel(KERNELS / "mm.c")


@pytest.fixture(scope="module")
def u250():
    return load_device("u250")


def test_autosa_mm_13x16_simd8_uses_8320_dsp(mm, u250):
    """AutoSA Table 5: MM [i,j], 13 x 16 PEs x SIMD 8 = 8320 DSP, 68% of the U250."""
    model = PerformanceModel(mm, mm.design("i-j__i-j.k"), u250)
    result = model.evaluate(dict(i_t1=260, j_t1=256, k_t1=64, i_t2=20, j_t2=16, k_t2=8))
    assert result["DSP"] == 8320
    assert round(8320 / u250.resources["DSP"], 2) == 0.68


def test_odyssey_table_3_design_fills_the_dsp_cap(mm, u250):
    """Odyssey Table 3: T1 = (129, 130, 64), T2 = (3, 13, 4) -> 43 x 10 PEs, SIMD 4, 8600 DSP = 100% of 0.7 cap."""
    model = PerformanceModel(mm, mm.design("i-j__i-j.k"), u250)
    grid = [int(evaluate(str(g), TABLE_3)) for g in model.architecture.pe_grid]
    assert grid == [43, 10]
    assert int(evaluate(str(model.architecture.simd), TABLE_3)) == 4
    result = model.evaluate(TABLE_3)
    assert result["DSP"] == 8600
    assert round(float(result["DSP"]) / u250.budget("DSP"), 2) == 1.00
    assert bool(result["fits"])


def _c_input_modules(space, design_id):
    return [m.name for m in build_architecture(space, space.design(design_id)).modules
            if m.array == "C" and m.kind == "io"]


def test_dataflow_i_orderings_odyssey_table_6(mm, u250):
    """[i] with <[i,j],k> keeps C in the PEs; <[i,k],j> and <[j,k],i> need C input modules and more BRAM."""
    assert _c_input_modules(mm, "i__i-j.k") == []
    assert _c_input_modules(mm, "i__i-k.j") == ["C_L2_in", "C_L1_in"]
    assert _c_input_modules(mm, "i__j-k.i") == ["C_L2_in", "C_L1_in"]
    params = dict(i_t1=128, j_t1=64, k_t1=64, i_t2=2, j_t2=8, k_t2=8)
    bram_c = {d: float(PerformanceModel(mm, mm.design(d), u250).evaluate(params)["bram:C"])
              for d in ("i__i-j.k", "i__i-k.j", "i__j-k.i")}
    assert bram_c["i__i-k.j"] > bram_c["i__i-j.k"] and bram_c["i__j-k.i"] > bram_c["i__i-j.k"]


def test_without_an_initialisation_partial_results_are_loaded_once_per_output_tile(write_kernel):
    path = write_kernel("for (int i = 0; i < 32; i++) for (int j = 0; j < 32; j++) for (int k = 0; k < 32; k++)\n"
                        "  C[i][j] += A[i][k] * B[k][j];\n", prelude="float A[32][32], B[32][32], C[32][32];\n")
    space = compile_kernel(path)
    arch = build_architecture(space, space.design("i-j__i-j.k"))
    (c,) = [g for g in arch.groups if g.array == "C"]
    assert not c.initialised_on_chip and str(c.reloads) == str(c.loads)
    assert [m.name for m in arch.modules if m.array == "C" and m.kind == "io"] == ["C_L3_in", "C_L2_in", "C_L1_in"]


def test_io_groups_of_mm_ij(mm):
    arch = build_architecture(mm, mm.design("i-j__i-j.k"))
    kinds = {g.array: (g.kind, g.exterior_loop) for g in arch.groups}
    assert kinds == {"A": ("in", "j"), "B": ("in", "i"), "C": ("acc", None)}
    pe = arch.module("PE")
    assert [str(b.elements) for b in pe.buffers] == ["i_t2*j_t2"]  # the C accumulators of one PE


@pytest.mark.parametrize("design_id", ["i-j__i-j.k", "i__i-k.j", "k__i-j.k", "j-k__j-k.i"])
def test_topology_graph_matches_the_module_counts(mm, u250, design_id):
    design = mm.design(design_id)
    model = PerformanceModel(mm, design, u250)
    params = {k: v for k, v in dict(i_t1=16, j_t1=12, k_t1=8, i_t2=4, j_t2=3, k_t2=4).items() if k in model.tunable}
    if design.simd_loop == "j":
        params["j_t2"] = 4
    if design.simd_loop == "i":
        params["i_t2"] = 4
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = json.loads(json.dumps(build_descriptor(mm, design, model.architecture)))
    graph = topology_graph(descriptor, values)
    for module in descriptor["topology"]["modules"]:
        instances = [n for n in graph.nodes if n[0] == module["name"]]
        assert len(instances) == evaluate(module["count"], values), module["name"]
    assert nx.is_directed_acyclic_graph(graph)
    pes = {n for n in graph.nodes if n[0] == "PE"}
    for node, data in graph.nodes(data=True):
        if data["dram"]:
            seen = nx.descendants(graph, node) | nx.ancestors(graph, node)
            assert pes <= seen, f"{node} does not reach every PE"


def test_descriptor_is_versioned_json_with_evaluable_expressions(mm, u250):
    design = mm.design("i-j__i-j.k")
    model = PerformanceModel(mm, design, u250)
    descriptor = json.loads(json.dumps(build_descriptor(mm, design, model.architecture)))
    assert (descriptor["schema"], descriptor["version"]) == (SCHEMA, VERSION)
    names = {p["name"] for p in descriptor["parameters"]}
    assert {"i_t1", "j_t1", "k_t1", "i_t2", "j_t2", "k_t2", "A_in_pack_l3"} <= names
    values = {**TABLE_3, **{k: int(v) for k, v in model.inferred_packing(TABLE_3).items()}}
    for module in descriptor["topology"]["modules"]:
        assert evaluate(module["count"], values) >= 1
        for phase in module["phases"]:
            assert evaluate(phase["iterations"], values) > 0
            assert all(evaluate(loop["trip"], values) >= 1 for loop in phase["loops"])
        for buffer in module["buffers"]:
            assert evaluate(buffer["depth"], values) * evaluate(buffer["pack"], values) >= evaluate(buffer["elements"], values)
    for fifo in descriptor["topology"]["fifos"]:
        assert evaluate(fifo["width_bits"], values) <= 512


def test_descriptor_carries_the_statements_and_subscripts_a_back_end_needs():
    from engine.resources import KERNELS
    cnn = compile_kernel(KERNELS / "cnn.c", defines={"O": 4, "I": 4, "H": 5, "W": 5, "P": 3, "Q": 3})
    design = cnn.designs[0]
    descriptor = build_descriptor(cnn, design, build_architecture(cnn, design))
    subscripts = {g["array"]: g["subscripts"] for g in descriptor["io_groups"]}
    assert subscripts["fi"] == ["i", "h + p", "q + w"] and subscripts["wt"] == ["o", "i", "p", "q"]
    compute = descriptor["compute"]
    assert compute["update"][0]["target"] == "fo[o][h][w]"
    assert "fi[i][h + p][q + w] * wt[o][i][p][q]" in compute["update"][0]["expression"]
    assert [(s["target"], s["expression"]) for s in compute["before"]] == [("fo[o][h][w]", "0")]
    assert compute["after"] == []
