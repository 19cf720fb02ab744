"""The model charges SLR crossings where they delay the design (engine/models/crossings.py): a small
floorplanned MM whose floorplan pipelines four FIFOs, two of them off the path that sets the end (into
the second member of the C drain chain, whose words queue behind the head's own share, and on A's
chain, whose fill is shorter than B's). The timed C simulation of the export, with only those
crossings' latencies charged, ends when it ends without any; with every crossing, the model adds what
the timed C simulation adds, where the longest crossing path (the rule before) charged more. And the
rule on a hand-made graph: a fill's slack, the drain chain's head and members."""
from __future__ import annotations

import json

import networkx as nx
import pytest

from engine.cli.simulate import project_crossings
from engine.compiler.design_space import compile_kernel
from engine.compiler.architecture.pe_set import restrict_to_pe_set
from engine.compiler.topology import topology_graph
from engine.csim import run_timed_csim
from engine.export import export_project
from engine.floorplan.pipeline import crossing_pipeline
from engine.models.crossings import (
    critical_crossing_latency,
    crossing_cycles,
    crossing_path_latency,
    model_fills,
)
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS

SIZES = {"I": "32", "J": "32", "K": "32", "DATA_T": "int16_t"}
PARAMS = dict(i_t1=16, j_t1=16, k_t1=4, j_t2=4, i_t2=4)
DESIGN = "j-k__i-j.k"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    space = compile_kernel(KERNELS / "mm.c", defines=SIZES)
    project = export_project(space, space.design(DESIGN), PARAMS, tmp_path_factory.mktemp("x") / "mm",
                             floorplan="auto")
    return project, PerformanceModel(space, space.design(DESIGN), load_device())


def _timed(project, cache, keep) -> int:
    """The timed C simulation's cycles with only the crossings `keep` says charged (others latency 0;
    the exported FIFOs keep their extra depth)."""
    path = project / "design.json"
    text = path.read_text()
    design = json.loads(text)
    for record in design["floorplan"]["crossing_fifos"]:
        if not keep(record):
            record["latency"] = 0
    path.write_text(json.dumps(design))
    try:
        return run_timed_csim(project, cache=cache).cycles
    finally:
        path.write_text(text)


def test_crossings_off_the_critical_path_cost_nothing(exported, tmp_path):
    project, model = exported
    design = json.loads((project / "design.json").read_text())
    descriptor, values = design["descriptor"], design["values"]
    crossings = project_crossings(design)
    streams = {c["stream"]: (*end, array) for c, (*end, array) in zip(design["floorplan"]["crossing_fifos"], crossings)}
    fills = model_fills(model, values)
    assert fills["B"] > fills["A"]  # A's first block is in before B's: A's chain has slack
    off = {k for k in crossings if k[2] == "A" or (k[0][0] == k[1][0] == "C_L2_out")}
    assert off and off != set(crossings)
    assert crossing_cycles(descriptor, values, {k: crossings[k] for k in off}, fills) == 0
    plain = _timed(project, tmp_path, lambda record: False)
    assert _timed(project, tmp_path, lambda record: streams[record["stream"]] in off) == plain
    added = _timed(project, tmp_path, lambda record: True) - plain
    assert added > 0
    assert crossing_cycles(descriptor, values, crossings, fills) == added
    graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
    assert crossing_path_latency(graph, crossings) > added  # the longest crossing path charged the slack too


def test_rule_on_a_small_graph():
    """Two input chains into two PEs, drained through a chain of two drain modules to a DRAM writer:
    A's fill 5 cycles shorter than B's absorbs up to 5 cycles of A's crossings; a crossing into the
    second drain member or between the members is absorbed, one into the head or above it is not."""
    graph = nx.MultiDiGraph()
    nodes = {("A_L2_in", ()): ("io", "A"), ("B_L2_in", ()): ("io", "B"), ("PE", (0,)): ("pe", None),
             ("PE", (1,)): ("pe", None), ("C_L2_out", (0,)): ("drain", "C"), ("C_L2_out", (1,)): ("drain", "C"),
             ("C_L3_out", ()): ("drain", "C")}
    for node, (kind, array) in nodes.items():
        graph.add_node(node, kind=kind, array=array)
    a, b, pe0, pe1, head, member, writer = nodes
    for src, dst, array in [(a, pe0, "A"), (pe0, pe1, "A"), (b, pe0, "B"), (b, pe1, "B"), (pe0, head, "C"),
                            (pe1, member, "C"), (member, head, "C"), (head, writer, "C")]:
        graph.add_edge(src, dst, array=array)
    fills = {"A": 10.0, "B": 15.0}

    def cost(*edges, latency=2):
        return critical_crossing_latency(graph, {e: crossing_pipeline(0, latency // 2) for e in edges}, fills)
    assert cost((a, pe0, "A"), latency=4) == 0  # within A's 5 cycles of slack
    assert cost((a, pe0, "A"), latency=8) == 3  # 3 past it
    assert cost((pe0, pe1, "A"), latency=8) == 0  # PE(1) drains through the member
    assert cost((b, pe1, "B")) == 0  # PE(1) drains through the member, behind the head's own share
    assert cost((b, pe0, "B")) == 2
    assert cost((pe1, member, "C"), (member, head, "C")) == 0
    assert cost((pe0, head, "C"), (head, writer, "C")) == 4
    assert critical_crossing_latency(graph, {(b, pe1, "B"): crossing_pipeline(0, 1)}, None) == 0
    assert critical_crossing_latency(graph, {(a, pe0, "A"): crossing_pipeline(0, 1)}, None) == 2  # no fills: binds
