"""Small free functions over islpy, addressing dimensions by position; one isl context for the engine."""
from __future__ import annotations

import math
import re
from typing import Iterable, Iterator

import islpy as isl

from engine.compiler.ir import Affine, Guard

CTX = isl.DEFAULT_CONTEXT


def domain_set(statement: str, iterators: Iterable[str], bounds: Iterable[tuple[Affine, Affine]],
               guards: Iterable[Guard]) -> isl.Set:
    """{ S[i, j] : lower_i <= i < upper_i and ... and guards }"""
    names = list(iterators)
    constraints = [f"{lo} <= {name} < {hi}" for name, (lo, hi) in zip(names, bounds)]
    constraints += [f"{g.expr} = 0" if g.equality else f"{g.expr} >= 0" for g in guards]
    body = " and ".join(constraints) if constraints else "true"
    return isl.Set(f"{{ {statement}[{', '.join(names)}] : {body} }}", context=CTX)


def access_map(statement: str, iterators: Iterable[str], array: str, index: Iterable[Affine],
               domain: isl.Set) -> isl.Map:
    text = f"{{ {statement}[{', '.join(iterators)}] -> {array}[{', '.join(str(i) for i in index)}] }}"
    return isl.Map(text, context=CTX).intersect_domain(domain)


def union_of(relations: Iterable[isl.Map]) -> isl.UnionMap:
    """The union of maps (empty, with no parameters, when there are none)."""
    result = isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))
    for rel in relations:
        result = result.union(isl.UnionMap.from_map(rel))
    return result


def basic_maps(relation: isl.UnionMap | isl.Map) -> Iterator[isl.BasicMap]:
    maps = maps_of(relation) if isinstance(relation, isl.UnionMap) else [relation]
    for m in maps:
        yield from m.get_basic_maps()


def maps_of(relation: isl.UnionMap) -> list[isl.Map]:
    listed = relation.get_map_list()
    return [listed.get_at(k) for k in range(listed.n_map())]


def distance_range(bmap: isl.BasicMap | isl.Map) -> list[tuple[int, int]]:
    """(min, max) of each component of the distance vectors of a map between equal-sized spaces."""
    deltas = isl.Map.from_basic_map(bmap).deltas() if isinstance(bmap, isl.BasicMap) else bmap.deltas()
    return [(deltas.dim_min_val(d).to_python(), deltas.dim_max_val(d).to_python())
            for d in range(deltas.dim(isl.dim_type.set))]


def fixed_distance(bmap: isl.BasicMap) -> tuple[int, ...] | None:
    """The constant distance vector of a uniform dependence piece, or None if it varies."""
    ranges = distance_range(bmap)
    if all(lo == hi for lo, hi in ranges):
        return tuple(lo for lo, _ in ranges)
    return None


def compute_dependences(sinks: isl.UnionMap, schedule: isl.UnionMap, *, must: isl.UnionMap | None = None,
                        may: isl.UnionMap | None = None, kill: isl.UnionMap | None = None) -> isl.UnionMap:
    """isl dataflow analysis: for each sink access, its last source(s) before it in `schedule`."""
    info = isl.UnionAccessInfo.from_sink(sinks)
    if must is not None:
        info = info.set_must_source(must)
    if may is not None:
        info = info.set_may_source(may)
    if kill is not None:
        info = info.set_kill(kill)
    flow = info.set_schedule_map(schedule).compute_flow()
    return flow.get_may_dependence() if may is not None else flow.get_must_dependence()


_NAMED_DIMS = (isl.dim_type.param, isl.dim_type.in_, isl.dim_type.out)


def map_to_text(relation: isl.Map) -> tuple[str, tuple]:
    """(text, dimension names) of a map, for pickling one whose input and output dimensions share
    names (islpy's own pickling refuses it): map_from_text reads the text and sets the names back."""
    names = tuple((int(t), k, relation.get_dim_name(t, k)) for t in _NAMED_DIMS for k in range(relation.dim(t)))
    return str(relation), names


def map_from_text(text: str, names: tuple) -> isl.Map:
    relation = isl.Map(text)
    for kind, k, name in names:
        if name is not None:
            relation = relation.set_dim_name(isl.dim_type(kind), k, name)
    return relation


def count_points(points: isl.Set) -> int:
    """Exact number of integer points of a bounded, parameter-free set: the product of its extents
    when it is a box (isl_set_count_val walks the points: 6 s for a 1024^3 box, hours at 10^9), else
    isl_set_count_val."""
    if points.is_empty():
        return 0
    box, extents = isl.Set.universe(points.get_space()), []
    for d in range(points.dim(isl.dim_type.set)):
        low, high = points.dim_min_val(d), points.dim_max_val(d)
        if not (low.is_int() and high.is_int()):
            return points.count_val().to_python()
        box = box.lower_bound_val(isl.dim_type.set, d, low).upper_bound_val(isl.dim_type.set, d, high)
        extents.append(high.to_python() - low.to_python() + 1)
    if box.is_equal(points):
        return math.prod(extents)
    return points.count_val().to_python()


def readable_relation(relation: isl.BasicMap | isl.Map) -> str:
    """`{ S0[i, j] -> S0[i' = i + j, j' = 0] : ... }` -> `S0[i, j] -> S0[i + j, 0]`."""
    text = str(relation).strip()
    text = text.strip("{} ")
    text = text.split(" : ", 1)[0]
    return re.sub(r"\b\w+'* = ", "", text).strip()
