"""Descriptor + configuration + the pipelines a floorplan puts on SLR-crossing FIFOs (+ the model's
fills) -> the cycles they add to the model's latency.

The rule: a crossing delays every word of its FIFO by its latency (engine/floorplan/pipeline.py, the
one place that decides it); the steady state does not change, since the extra depth (twice the
latency) keeps every crossing at full throughput, so the design ends later only by what the delays
add along the path that sets its end: the first blocks filling the PEs, then the results of the
drain's head leaving for DRAM. Along the dataflow graph (the topology graph, the PEs the array
holds), from the DRAM readers to the DRAM writers:
- fill: a PE starts once every input group's first block has reached it (the model's prologue is
  the slowest group's fill, symbolic.py `fills`); a group whose fill is s cycles shorter than the
  slowest one absorbs s cycles of crossings on its way (its words wait at the PEs anyway), partial
  results read back into a reduction carried from PE to PE (which no fill waits for: they enter the
  first PE as it drains) absorb theirs, and a PE never starts earlier than without crossings;
- drain: the head of a chain of drain modules sends its own share first while its successors' words
  queue behind it (symbolic.py `_drain_tail`), so a crossing between two members of the chain, or
  before a member other than the head, is absorbed (it delays words that wait anyway); the head's
  own path (its PEs, partial sums passed PE to PE, the levels above it) is charged in full.
The charge is the largest sum along a path: the fill part (less its group's slack, not below zero)
plus the drain part. Measured against the timed C simulation of the floorplanned export (docs/sim.md).
A design that runs sequential passes (engine/compiler/architecture/passes.py) pays it once per pass,
each pass on its own graph: a pass that reads no partial results back leaves the modules that read
them idle, so its graph and its slack leave them out. The fills are the design's model's: a pass
moves the same blocks down the same chains (only the pass loops' tile counts change), so its own
model's fills are the design's less the read-back group where it reads nothing back (MM 64^3
i-j__j-k.i: A 20, B 68 in the first pass; C 52, A 20, B 68 in the others and the design's). The
search evaluates without a floorplan, so it never charges this.
"""
from __future__ import annotations

import networkx as nx

from engine.compiler.architecture.passes import descriptor_passes, descriptor_tiles, reads_partial_results
from engine.compiler.architecture.pe_set import restrict_to_pe_set
from engine.compiler.topology import topology_graph


def crossing_path_latency(graph: nx.MultiDiGraph, crossings: dict) -> int:
    """The largest sum of crossing latencies along any path of `graph` (edges (source, target) with an
    `array`); `crossings`: (source, target, array) -> an object with `latency`. A cycle of the graph
    (none in today's topologies) is one node of its condensation, its inner crossings not charged.
    The bound `critical_crossing_latency` falls back to on such a graph."""
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


def critical_crossing_latency(graph: nx.MultiDiGraph, crossings: dict, fills: dict[str, float] | None = None) -> int:
    """The cycles `crossings` add to one run of `graph` (nodes with a `kind`: io, pe, drain), by the
    module docstring's rule. `fills`: input array -> the model's fill cycles; a group whose fill is
    shorter than the slowest among the groups `graph` reads from DRAM has the difference as slack, a
    group the fills leave out (the PEs do not wait for it) has no end of slack; every group binds
    where `fills` is None."""
    if not crossings:
        return 0
    if not nx.is_directed_acyclic_graph(graph):
        return crossing_path_latency(graph, crossings)
    kind = nx.get_node_attributes(graph, "kind")
    readers = {graph.nodes[n]["array"] for n in graph if kind[n] == "io" and graph.in_degree(n) == 0}
    slack = fill_slack({a: f for a, f in (fills or {}).items() if a in readers})
    if fills is not None:  # partial results read back into a reduction's first PE as it drains
        slack.update({a: float("inf") for a in readers if a not in fills})
    # the latest a word reaches each node, relative to the design without crossings
    late: dict = {}
    for node in nx.topological_sort(graph):
        arrivals = []
        for src, _, data in graph.in_edges(node, data=True):
            if src not in late:
                continue
            member_link = kind[src] == kind[node] == "drain" and src[0] == node[0]
            if member_link:
                continue  # a successor's words queue behind the head's own share
            pipe = crossings.get((src, node, data["array"]))
            arrivals.append(late[src] + (int(pipe.latency) if pipe is not None else 0))
        if kind[node] == "pe":
            late[node] = max([0, *arrivals])  # never earlier than without crossings
        elif arrivals:
            late[node] = max(arrivals)
        elif kind[node] == "io":  # a DRAM reader: its group's fill has this much slack
            late[node] = -float(slack.get(graph.nodes[node]["array"], 0))
    # the DRAM writers (the graph's, before the drain chains' member links were passed over)
    ends = [late[n] for n in graph if kind[n] == "drain" and graph.out_degree(n) == 0 and n in late]
    return int(round(max([0, *ends])))


def fill_slack(fills: dict[str, float]) -> dict[str, float]:
    """Input array -> cycles its fill (the model's, symbolic.py `fills`) is shorter than the slowest."""
    if not fills:
        return {}
    slowest = max(fills.values())
    return {array: slowest - fill for array, fill in fills.items()}


def crossing_cycles(descriptor: dict, values: dict[str, int], crossings: dict,
                    fills: dict[str, float] | None = None) -> int:
    """The cycles the floorplan's crossing pipelines add to one run of the design (every pass).
    `fills`: input array -> the model's fill cycles (`model_fills`); without them every group's fill
    is taken as binding (an upper bound)."""
    if not crossings:
        return 0
    graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
    passes, tiles = descriptor_passes(descriptor), descriptor_tiles(descriptor, values)
    if not passes.active(tiles):
        return critical_crossing_latency(graph, crossings, fills)
    total = passes.count(tiles.__getitem__)
    reloading = passes.reloading(tiles.__getitem__)
    charged = reloading * critical_crossing_latency(graph, crossings, fills) if reloading else 0
    if total > reloading:  # the first pass of each output block: the read-back modules idle
        first = _without_read_back(graph, descriptor, values)
        charged += (total - reloading) * critical_crossing_latency(first, crossings, fills)
    return int(charged)


def _without_read_back(graph: nx.MultiDiGraph, descriptor: dict, values: dict[str, int]) -> nx.MultiDiGraph:
    """`graph` less the I/O modules that read the written array's partial results back (a pass that
    reads none leaves them idle)."""
    if not reads_partial_results(descriptor, values):
        return graph
    written = next(g["array"] for g in descriptor["io_groups"] if g["kind"] != "in")
    idle = [n for n, data in graph.nodes(data=True) if data["kind"] == "io" and data["array"] == written]
    return graph.subgraph(n for n in graph if n not in idle).copy()


def model_fills(model, values: dict[str, int]) -> dict[str, float]:
    """The fills of `model` (a PerformanceModel; symbolic.py `fills`) at `values`, by input array."""
    return {array: float(model.compile_objective(expr)(values)) for array, expr in model.symbolic.fills.items()}
