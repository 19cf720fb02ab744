"""Descriptor + configuration + the pipelines a floorplan puts on SLR-crossing FIFOs -> the cycles they
add to the model's latency.

The rule: a word's path from the first module that reads DRAM to the last that writes it crosses some
of the pipelined FIFOs, each delaying it by its latency (engine/floorplan/pipeline.py, the one place
that decides it). The design's fill and drain lengthen by the largest sum of crossing latencies along
any source-to-sink path of the dataflow graph (the topology graph, the PEs the array holds); the steady
state does not change, since the extra depth (twice the latency) keeps every crossing at full
throughput. A design that runs sequential passes (engine/compiler/architecture/passes.py) pays it once
per pass, as each pass is one call of the dataflow region. The search evaluates without a floorplan,
so it never charges this.
"""
from __future__ import annotations

import networkx as nx

from engine.compiler.architecture.passes import descriptor_passes, descriptor_tiles
from engine.compiler.architecture.pe_set import restrict_to_pe_set
from engine.compiler.topology import topology_graph


def crossing_path_latency(graph: nx.MultiDiGraph, crossings: dict) -> int:
    """The largest sum of crossing latencies along any path of `graph` (edges (source, target) with an
    `array`); `crossings`: (source, target, array) -> an object with `latency`. A cycle of the graph
    (none in today's topologies) is one node of its condensation, its inner crossings not charged."""
    weight: dict[tuple, int] = {}
    for src, dst, data in graph.edges(data=True):
        pipe = crossings.get((src, dst, data["array"]))
        if pipe is not None:
            weight[(src, dst)] = max(weight.get((src, dst), 0), int(pipe.latency))
    if not weight:
        return 0
    dag = nx.condensation(nx.DiGraph(graph))
    member = dag.graph["mapping"]
    best: dict[int, int] = {}
    for node in nx.topological_sort(dag):
        best.setdefault(node, 0)
        for nxt in dag.successors(node):
            step = max((w for (s, t), w in weight.items() if member[s] == node and member[t] == nxt), default=0)
            best[nxt] = max(best.get(nxt, 0), best[node] + step)
    return max(best.values())


def crossing_cycles(descriptor: dict, values: dict[str, int], crossings: dict) -> int:
    """The cycles the floorplan's crossing pipelines add to one run of the design (every pass)."""
    if not crossings:
        return 0
    graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
    per_run = crossing_path_latency(graph, crossings)
    passes, tiles = descriptor_passes(descriptor), descriptor_tiles(descriptor, values)
    return per_run * (passes.count(tiles.__getitem__) if passes.active(tiles) else 1)
