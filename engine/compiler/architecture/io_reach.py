"""I/O groups + the PEs an array holds -> the PEs each group's I/O network must reach (the
descriptor's `io_groups[].pe_reach`, since 1.9), and a topology graph -> the same graph with each
such network built over those PEs only.

An interior group's L1 modules feed (or drain) one PE each. Where the statements that read (write)
the group's reference run at some PEs only, AutoSA builds the network over those: LU [k,j] reads A
from DRAM at k = 0 only (later steps read the local array V through the PE chain), so A's L1 modules
are the 12 of row k = 0 at N = 12 and its L2 chain has one member, not 144 and 12. The set is isl's
image of those statements' domains on the space loops, within the PEs held (pe_set.py); it is
recorded where it is smaller than them, under pe_set.py's conditions (no space loop split by
latency hiding or SIMD, concrete sizes) and applies, as the PE set does, where each space loop has
one tile. Groups it covers: interior inputs, and interior outputs drained from their last writer
(owned_drain.py: a PE that writes no element drains none); an accumulator, an exterior group (data
enters at the array's boundary and crosses the PEs) and an output drained box by box keep their
whole network.

On a graph (`restrict_io_networks`), per group with a reach: the module instances none of whose
PEs is in the reach are left out (an L1 module is its PE's; an L2 module serves a row), each
chain is rebuilt among the instances left in its line in order, a `to_row_heads` / `to_first`
FIFO goes to the first instance left, and a PE outside the reach has no FIFO of the group (the
exporter gives it an unused stream and its guards never touch it). The architecture's module and
FIFO counts (io_network.py) are the same counts, so model, exporter, simulator and floorplan agree.
"""
from __future__ import annotations

import islpy as isl
import networkx as nx

from engine.compiler.architecture.io_groups import IOGroup
from engine.compiler.architecture.owned_drain import drained_by_last_writer
from engine.compiler.architecture.symbols import sizes_are_symbolic
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler import isl_helpers as ih

PE_TUPLE = "PE"


def on_space_loops(space: DesignSpace, design: Design, points: isl.Set) -> isl.Set:
    """Band points -> the space-loop value tuples they take, as an isl set `PE[<space loops>]` in
    the design's order of the space loops (one PE per tuple where each space loop has one tile)."""
    band = space.band
    for d in reversed(range(len(band.loops))):
        if band.loops[d] not in design.space_loops:
            points = points.project_out(isl.dim_type.set, d, 1)
    # the remaining dimensions are the space loops in band order: name them, in the design's order
    order = [l for l in band.loops if l in design.space_loops]
    points = points.set_tuple_name(PE_TUPLE)
    for d, loop in enumerate(order):
        points = points.set_dim_name(isl.dim_type.set, d, loop)
    if order != list(design.space_loops):
        text = f"{{ {PE_TUPLE}[{', '.join(order)}] -> {PE_TUPLE}[{', '.join(design.space_loops)}] }}"
        points = points.apply(isl.Map(text))
    return points.coalesce()


def one_tile_each(descriptor: dict, values: dict[str, int]) -> bool:
    """Does each space loop have one tile at `values` (`l_t1` at least the loop's size, one PE per
    value): where the PE set and the groups' reaches apply."""
    sizes = descriptor["design"]["problem_size"]
    return all(int(values[f"{l}_t1"]) >= int(sizes[l]) for l in descriptor["topology"]["space_loops"])


def set_points(text: str) -> frozenset[tuple[int, ...]]:
    """The integer points of an isl set's text, as tuples."""
    points: list[tuple[int, ...]] = []

    def take(point: isl.Point) -> None:
        n = point.get_space().dim(isl.dim_type.set)
        points.append(tuple(int(point.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(n)))
    isl.Set(text).foreach_point(take)
    return frozenset(points)


def io_reach(space: DesignSpace, design: Design, groups: list[IOGroup], pes: isl.Set | None) -> dict[str, isl.Set]:
    """Group name -> the PEs its I/O network reaches, for the groups whose reach is smaller than the
    PEs held (`pes`, pe_set.py `occupied_pes`; None: the whole grid)."""
    if design.split_space_loops or sizes_are_symbolic():
        return {}
    band = space.band
    held = pes if pes is not None else on_space_loops(space, design, band.points(space.model.domains))
    found = {}
    for g in groups:
        if g.exterior or not (g.kind == "in" or (g.kind == "out" and drained_by_last_writer(g, design.space_loops))):
            continue
        points = None
        for name in band.compute_statements:
            stmt = space.kernel.statement(name)
            uses = stmt.target == g.access if g.kind == "out" else g.access in stmt.reads()
            if not uses:
                continue
            image = space.model.domains[name].apply(band.schedules[name])
            points = image if points is None else points.union(image)
        if points is None:
            continue
        reach = on_space_loops(space, design, points.coalesce()).intersect(held).coalesce()
        if ih.count_points(reach) < ih.count_points(held):
            found[g.name] = reach
    return found


def reach_counts(reach: isl.Set) -> tuple[int, int]:
    """(PEs in the reach, lines of them along the last space loop: the rows an L2 level serves)."""
    rows = reach.project_out(isl.dim_type.set, reach.dim(isl.dim_type.set) - 1, 1)
    return ih.count_points(reach), ih.count_points(rows)


def existing_reach(descriptor: dict, values: dict[str, int]) -> dict[str, frozenset[tuple[int, ...]]]:
    """Group name -> the PE indices its I/O network reaches at `values`, for the groups with a
    `pe_reach` that applies there (each space loop one tile, as the PE set)."""
    groups = [g for g in descriptor["io_groups"] if g.get("pe_reach")]
    if not groups or not one_tile_each(descriptor, values):
        return {}
    return {g["name"]: set_points(g["pe_reach"]) for g in groups}


def restrict_io_networks(graph: nx.MultiDiGraph, descriptor: dict, values: dict[str, int]) -> nx.MultiDiGraph:
    """`graph` (topology_graph's, or its edges of some FIFO kinds) with each group's I/O network
    built over its reach as the module docstring says; the same graph when no group has one."""
    reaches = existing_reach(descriptor, values)
    if not reaches:
        return graph
    out = graph.copy()
    modules = descriptor["topology"]["modules"]
    for name, reach in reaches.items():
        own = {m["name"] for m in modules if m["kind"] in ("io", "drain") and m["name"].startswith(f"{name}_L")
               and m["name"][len(name) + 2:].split("_")[0].isdigit()}
        dropped = {n for n in out if n[0] in own and n[1] and not any(pe[:len(n[1])] == n[1] for pe in reach)}
        rewire: list[tuple] = []
        for src, dst, key, data in list(out.edges(keys=True, data=True)):
            if src in dropped or dst in dropped:
                out.remove_edge(src, dst, key)
                if data["pattern"] in ("chain", "to_first", "to_row_heads"):
                    rewire.append((src, dst, data))
            elif data["pattern"] == "to_pe" and (src[0] in own or dst[0] in own):
                pe = dst if dst[0] == "PE" else src
                if pe[1] not in reach:
                    out.remove_edge(src, dst, key)
        out.remove_nodes_from(dropped)
        for src, dst, data in rewire:
            if data["pattern"] == "chain":
                continue
            # the FIFO from the level above now meets the first instance left below it
            upper, lower = (src, dst) if graph.nodes[src]["level"] > graph.nodes[dst]["level"] else (dst, src)
            if upper in dropped:
                continue
            left = sorted(n[1] for n in out if n[0] == lower[0] and n[1][:-1] == lower[1][:-1])
            if left:
                first = (lower[0], left[0])
                out.add_edge(*((upper, first) if src == upper else (first, upper)), **data)
        chains = {(src[0], src[1][:-1]): (src, dst, data) for src, dst, data in rewire if data["pattern"] == "chain"}
        for (module, line), (src, dst, data) in chains.items():
            left = sorted(n[1] for n in out if n[0] == module and n[1][:-1] == line)
            forward = src[1] < dst[1]  # inputs pass down the chain; drains pass towards its head
            for a, b in zip(left, left[1:]):
                ends = ((module, a), (module, b)) if forward else ((module, b), (module, a))
                if not out.has_edge(*ends):
                    out.add_edge(*ends, **data)
    return out
