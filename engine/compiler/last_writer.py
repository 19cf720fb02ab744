"""Which PE writes an output element last: the drain of an output whose subscripts miss a space loop.

When an output's subscripts do not use a space loop (LU's U[j][i] on an array along k), every PE
along that loop holds a box of the same elements, and several of them may write an element over
time. Each element must leave the array once, from the PE that writes it last. That PE is read off
the polyhedral last writer: over the band's statements that write the array (each over the problem
box, its loop bounds and its guards, as descriptor `compute.update` states them), the write that
comes last in the loop nest's order (band loops, then textual order) for each element, projected
on the space loops. Elements no statement writes are not drained (the output keeps its initial
value there, as in the loop nest).

`last_writer` gives that map as isl text, { U[e0, e1] -> [k, j] : ... } (descriptor io_groups[].
last_writer); `owned_elements` evaluates it for a configuration where a PE runs one point of each
space loop and one tile covers the problem (the configurations the multi-statement exporter takes):
the PE at index p of the space loops owns the elements the map sends to p.
"""
from __future__ import annotations

import re
from functools import lru_cache

import islpy as isl

from engine.compiler.isl_helpers import CTX

_TARGET = re.compile(r"([A-Za-z_]\w*)((?:\[[^\[\]]+\])+)")


def _isl_condition(text: str) -> str:
    return text.replace("==", "=").replace("&&", "and").replace("||", "or")


def last_writer(update: list[dict], band: list[str], sizes: dict[str, int], array: str,
                space: list[str]) -> str | None:
    """isl map text from each element of `array` some statement of `update` writes to the space
    loops' values of its last write; None when no statement writes it."""
    loops = ", ".join(band)
    pieces = []
    for position, st in enumerate(update):
        m = _TARGET.fullmatch(st["target"].strip())
        if m is None or m.group(1) != array:
            continue
        subscripts = re.findall(r"\[([^\[\]]+)\]", m.group(2))
        element = [f"e{d}" for d in range(len(subscripts))]
        constraints = [f"0 <= {l} < {sizes[l]}" for l in band]
        constraints += [f"{e} = {s}" for e, s in zip(element, subscripts)]
        constraints += [_isl_condition(c) for c in st.get("bounds", []) + st.get("guards", [])]
        pieces.append(isl.Map(f"{{ {array}[{', '.join(element)}] -> [{loops}, s] : s = {position} and "
                              f"{' and '.join(constraints)} }}", context=CTX))
    if not pieces:
        return None
    writes = pieces[0]
    for p in pieces[1:]:
        writes = writes.union(p)
    last = writes.lexmax()
    keep = ", ".join(space)
    project = isl.Map(f"{{ [{loops}, s] -> [{keep}] }}", context=CTX)
    return str(last.apply_range(project).coalesce())


@lru_cache(maxsize=64)
def _points(text: str) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    relation = isl.Map(text, context=CTX)
    n_in = relation.dim(isl.dim_type.in_)
    points = []
    relation.wrap().foreach_point(lambda p: points.append(
        tuple(p.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(p.get_space().dim(isl.dim_type.set)))))
    return tuple(sorted((p[:n_in], p[n_in:]) for p in points))


def owned_elements(group: dict, sizes: dict[str, int], space: list[str], pe_grid: list[int],
                   values: dict[str, int]) -> dict[tuple[int, ...], list[tuple[int, ...]]] | None:
    """PE index -> the elements (subscript order, row major) it drains, every PE of the grid listed;
    None when the group has no last-writer map or the configuration is not one point per PE along
    each space loop with one tile covering each loop."""
    text = group.get("last_writer")
    if not text:
        return None
    if any(values.get(f"{l}_t1", n) < n for l, n in sizes.items()):
        return None
    if any(pe_grid[k] != sizes[l] for k, l in enumerate(space)):
        return None
    owned: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for index in _grid(pe_grid):
        owned[index] = []
    for element, pe in _points(text):
        owned[pe].append(element)
    return owned


def _grid(extents: list[int]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for n in extents:
        out = [p + (k,) for p in out for k in range(n)]
    return out
