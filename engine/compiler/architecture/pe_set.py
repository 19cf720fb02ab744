"""Band points -> the PEs an array holds (the descriptor's `topology.pe_set`), and a topology graph
(engine/compiler/topology.py) -> the same graph with only those PEs.

When each space loop has one tile and no PE is split by latency hiding or SIMD, a PE stands for one
value tuple of the space loops; the array holds the PEs whose tuple some band point takes (isl's
image of the band points on the space loops). LU's pyramid k <= j gives the triangle of PEs AutoSA
builds along k and j (N (N + 1) / 2), not the N x N grid. The model counts this set
(build.py `occupied_pe_count`), the exporter and the simulator build it (`restrict_to_pe_set`).

How the PEs outside the set are left out (as AutoSA's generated code does: chains end early, dummy
modules take what a chain brings to a PE it does not hold):
- a FIFO between two PEs of a line (`pe_chain`) is dropped where it touches a missing PE; for an
  array that only passes through the PEs (an I/O group carried along the line) the PEs that remain
  on the line are chained in order instead, and the line's I/O module (`to_boundary_pe`) feeds its
  first / collects from its last remaining PE. A local array's values go from a point of the domain
  to a point of the domain, so none crosses into a missing PE: the edge PEs keep an unused stream.
- an I/O group's network that reaches some PEs only (io_reach.py, descriptor `io_groups[].pe_reach`:
  LU's A, U and L) is built over those first, so none of its FIFOs touches a missing PE;
- a FIFO between a missing PE and a module that remains (`to_pe`, or `to_boundary_pe` of a line with
  no PE left) stays, its PE end a *stub*: the exporter ends it with a dummy (a sink reading what the
  PE would read; an output's stream the drain reads nothing from, the missing PE owning no element),
  the simulator with a thread doing the same.
"""
from __future__ import annotations

import islpy as isl
import networkx as nx
import sympy

from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.architecture.io_reach import PE_TUPLE, on_space_loops, one_tile_each, restrict_io_networks, set_points
from engine.compiler.architecture.symbols import sizes_are_symbolic
from engine.compiler import isl_helpers as ih

def occupied_pes(space: DesignSpace, design: Design) -> isl.Set | None:
    """The space-loop value tuples some band point takes, as an isl set `PE[<space loops>]`, when a
    PE can stand for one tuple (no space loop split by latency hiding or SIMD, sizes concrete) and
    the set is not the whole box of the extents; None otherwise (every PE of the grid exists)."""
    if design.split_space_loops or sizes_are_symbolic():
        return None
    band = space.band
    points = on_space_loops(space, design, band.points(space.model.domains))
    extents = [band.extents[band.index(l)] for l in design.space_loops]
    box = 1
    for n in extents:
        box *= n
    return None if ih.count_points(points) == box else points


def pe_set_count(pes: isl.Set) -> int:
    return ih.count_points(pes)


def neighbour_pairs(pes: isl.Set, loop: str) -> int:
    """How many PEs of `pes` have their next neighbour along `loop` in `pes` too: the PE-to-PE FIFOs
    of a chain along that loop among the PEs held (LU [k,j] at N = 12: 66 along k, not 132)."""
    names = [pes.get_dim_name(isl.dim_type.set, d) for d in range(pes.dim(isl.dim_type.set))]
    shifted = [f"{n} + 1" if n == loop else n for n in names]
    step = isl.Map(f"{{ {PE_TUPLE}[{', '.join(names)}] -> {PE_TUPLE}[{', '.join(shifted)}] }}")
    return ih.count_points(pes.intersect(pes.apply(step.reverse())))


def when_one_tile(space: DesignSpace, design: Design, syms, held, box) -> sympy.Expr:
    """`held` (a count over the PEs held) where each space loop has one tile, `box` otherwise: the
    condition under which `existing_pes` applies, with no condition when the tuning bounds allow one
    tile only (LU's designs)."""
    extents = [space.band.extents[space.band.index(loop)] for loop in design.space_loops]
    if all(design.param(f"{loop}_t1").lower >= n for loop, n in zip(design.space_loops, extents)):
        return sympy.Integer(held)
    whole = sympy.And(*(sympy.Ge(syms.t1(loop), n) for loop, n in zip(design.space_loops, extents)))
    return sympy.Piecewise((held, whole), (box, True))


def existing_pes(descriptor: dict, values: dict[str, int]) -> frozenset[tuple[int, ...]] | None:
    """The PE indices the array holds at `values` (descriptor `topology.pe_set`), or None when it
    holds every PE of `pe_grid`: the set applies when each space loop has one tile (`l_t1` at least
    the loop's size, one PE per value)."""
    text = descriptor["topology"].get("pe_set")
    if not text or not one_tile_each(descriptor, values):
        return None
    return set_points(text)


def restrict_to_pe_set(graph: nx.MultiDiGraph, descriptor: dict, values: dict[str, int]) -> nx.MultiDiGraph:
    """`graph` (topology_graph's, or its edges of some FIFO kinds) with the PEs outside
    `existing_pes` left out as the module docstring says, and each I/O group's network built over
    the PEs it reaches (io_reach.py `restrict_io_networks`); the same graph when every PE exists and
    every network reaches every PE. The missing PEs still joined to a module remain as stub nodes
    (`stub_pes` lists them)."""
    graph = restrict_io_networks(graph, descriptor, values)
    existing = existing_pes(descriptor, values)
    if existing is None:
        return graph
    missing = {n for n in graph if n[0] == "PE" and n[1] not in existing}
    if not missing:
        return graph
    io_arrays = {g["array"] for g in descriptor["io_groups"]}
    out = graph.copy()
    chains: dict[tuple[str, int], dict] = {}  # (array, dimension) -> edge data of a chain to rebuild
    moved: list[tuple[tuple, tuple, dict]] = []  # to_boundary_pe edges to move along their line
    for src, dst, key, data in list(out.edges(keys=True, data=True)):
        if src not in missing and dst not in missing:
            continue
        if data["pattern"] == "pe_chain":
            out.remove_edge(src, dst, key)
            if data["array"] in io_arrays:
                d = next(k for k, (a, b) in enumerate(zip(src[1], dst[1])) if a != b)
                chains[(data["array"], d)] = data
        elif data["pattern"] == "to_boundary_pe":
            out.remove_edge(src, dst, key)
            moved.append((src, dst, data))
    lines: dict[tuple, list] = {}
    for (array, d), data in chains.items():
        for pe in sorted(existing):
            lines.setdefault((array, d, pe[:d] + pe[d + 1:]), []).append(pe)
    for (array, d, _), pes in lines.items():
        data = chains[(array, d)]
        for a, b in zip(pes, pes[1:]):
            if not any(e.get("array") == array for e in out.get_edge_data(("PE", a), ("PE", b), default={}).values()):
                out.add_edge(("PE", a), ("PE", b), **data)
    for src, dst, data in moved:
        toward_pe = dst[0] == "PE"
        pe = dst if toward_pe else src
        d = next(k for k in range(len(pe[1])) if _along(descriptor, data, k))
        line = sorted((p for p in existing if p[:d] + p[d + 1:] == pe[1][:d] + pe[1][d + 1:]), key=lambda p: p[d])
        if line:
            end = ("PE", line[0] if toward_pe else line[-1])
            out.add_edge(*((src, end) if toward_pe else (end, dst)), **data)
        else:  # no PE left on the line: the module's FIFO ends at a stub
            out.add_edge(src, dst, **data)
    out.remove_nodes_from([n for n in missing if out.degree(n) == 0])
    return out


def stub_pes(graph: nx.MultiDiGraph, descriptor: dict, values: dict[str, int]) -> frozenset[tuple[int, ...]]:
    """The PE nodes of a restricted graph that the array does not hold (their FIFOs end at dummies)."""
    existing = existing_pes(descriptor, values)
    if existing is None:
        return frozenset()
    return frozenset(n[1] for n in graph if n[0] == "PE" and n[1] not in existing)


def _along(descriptor: dict, data: dict, d: int) -> bool:
    """Is dimension d of the PE grid the loop a line FIFO of `data`'s array runs along?"""
    space = descriptor["topology"]["space_loops"]
    return any(f["array"] == data["array"] and f["pattern"] == "to_boundary_pe" and f["along"] == space[d]
               for f in descriptor["topology"]["fifos"])
