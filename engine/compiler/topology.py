"""Descriptor + concrete parameter values -> networkx MultiDiGraph of module instances and FIFOs.

Nodes are `(module, index)` with `index` a tuple over the module's grid; edges follow each FIFO's
pattern (descriptor field `pattern`) in the direction data flows and carry `width_bits`, `depth`
and `storage` (from engine/compiler/fifo_depths.py) and `pattern`. The topology viewer draws it and
tests check its shape (every PE fed by every input group, every result drained).
"""
from __future__ import annotations

import itertools
import math

import networkx as nx

from engine.compiler.expressions import evaluate
from engine.compiler.fifo_depths import fifo_depth, fifo_storage


def _grid(module: dict, values: dict[str, int]) -> list[tuple[int, ...]]:
    dims = [int(round(evaluate(g, values))) for g in module["grid"]]
    return list(itertools.product(*(range(d) for d in dims))) if dims else [()]


def instance_count(descriptor: dict, values: dict[str, int]) -> int:
    """The number of module instances (nodes) topology_graph would build, without building them."""
    return sum(math.prod(int(round(evaluate(g, values))) for g in m["grid"])
               for m in descriptor["topology"]["modules"])


def topology_graph(descriptor: dict, values: dict[str, int], fifos: list[dict] | None = None) -> nx.MultiDiGraph:
    """`values` holds every tuning parameter, data-packing factors included; `fifos`, some of the
    descriptor's FIFO kinds, draws only those (their depths still follow the whole topology)."""
    graph = nx.MultiDiGraph()  # PEs pass several arrays to the same neighbour: one edge per FIFO
    modules = {m["name"]: m for m in descriptor["topology"]["modules"]}
    instances = {name: _grid(m, values) for name, m in modules.items()}
    for name, m in modules.items():
        for index in instances[name]:
            graph.add_node((name, index), kind=m["kind"], array=m["array"], level=m["level"], dram=m["dram"])
    space = descriptor["topology"]["space_loops"]
    pe_dims = [int(round(evaluate(g, values))) for g in descriptor["topology"]["pe_grid"]]
    for fifo in descriptor["topology"]["fifos"] if fifos is None else fifos:
        width = int(round(evaluate(fifo["width_bits"], values)))
        depth, storage = fifo_depth(fifo, values, descriptor), fifo_storage(fifo, values, descriptor)
        for src, dst in _edges(fifo, instances, space, pe_dims):
            graph.add_edge(src, dst, array=fifo["array"], width_bits=width, depth=depth, storage=storage,
                           pattern=fifo["pattern"])
    return graph


def _edges(fifo: dict, instances, space, pe_dims):
    """Edges in the direction data flows. Drains run the module patterns backwards, except along a
    PE chain: partial results keep moving forward and leave from the last PE of the line."""
    if fifo["pattern"] in ("to_boundary_pe", "pe_chain"):
        yield from _pe_line_edges(fifo, instances, space, pe_dims)
        return
    for src, dst in _module_edges(fifo, instances):
        yield (dst, src) if fifo["reversed"] else (src, dst)


def _pe_line_edges(fifo: dict, instances, space, pe_dims):
    source, d = fifo["source"], space.index(fifo["along"])
    boundary = pe_dims[d] - 1 if fifo["reversed"] else 0
    for pe in itertools.product(*(range(n) for n in pe_dims)):
        if fifo["pattern"] == "pe_chain" and pe[d] + 1 < pe_dims[d]:
            yield ("PE", pe), ("PE", pe[:d] + (pe[d] + 1,) + pe[d + 1:])
        elif fifo["pattern"] == "to_boundary_pe" and pe[d] == boundary:
            line = pe[:d] + pe[d + 1:]
            module = (source, line if line in instances[source] else instances[source][0])
            yield ((("PE", pe), module) if fifo["reversed"] else (module, ("PE", pe)))


def _module_edges(fifo: dict, instances):
    source, target, pattern = fifo["source"], fifo["target"], fifo["pattern"]
    if pattern == "to_first":
        yield (source, instances[source][0]), (target, instances[target][0])
    elif pattern == "chain":
        for index in instances[source]:
            nxt = index[:-1] + (index[-1] + 1,)
            if nxt in instances[source]:
                yield (source, index), (source, nxt)
    elif pattern == "to_row_heads":
        for index in instances[source]:
            yield (source, index), (target, index + (0,))
    elif pattern == "to_pe":
        for index in instances[source]:
            yield (source, index), (target, index)
    else:
        raise ValueError(f"unknown FIFO pattern {pattern!r}")
