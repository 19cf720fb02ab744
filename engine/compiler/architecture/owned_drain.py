"""The drain of an output several PEs hold, as the model sees it: each element leaves once, from its
last writer (engine/compiler/last_writer.py; the exporter's engine/export/owned_drain.py, the
simulator's engine/sim/hardware.py).

Where an output's subscripts miss a space loop (LU's U[j][i] on an array along k), the drain phases
of the box drain (every PE sends its box, every level passes the boxes on) are replaced, at the
configurations the exporter builds this drain for (one tile covering each loop, one point per PE
along each space loop), by the counts of the last-writer drain: a PE sends the elements it writes
last (the most any PE owns), a drain level passes those of its PEs and of the instances behind it
in its chain (the most any instance passes), an element per cycle; the storer puts them into the
output block, then writes the block in whole bus words (phase `store_block`). Elsewhere the box
drain stays (sympy Piecewise on the tuning parameters), `store_block` there costing its pipeline depth
per event (the exporter builds no such configuration).
"""
from __future__ import annotations

import itertools
from dataclasses import replace

import sympy

from engine.compiler.architecture.modules import Architecture, Loop, Module, Phase
from engine.compiler.architecture.symbols import symbol
from engine.compiler.design import Design
from engine.compiler.last_writer import last_writer, owned_elements


def with_owned_drains(arch: Architecture, update: list[dict], design: Design) -> Architecture:
    """`update`: the band's statements as descriptor `compute.update` states them (target, guards, bounds)."""
    band, spaced = list(design.band_loops), list(design.space_loops)
    sizes = dict(zip(band, design.problem_size))
    modules = list(arch.modules)
    writers = {}
    for g in arch.groups:
        if not drained_by_last_writer(g, spaced):
            continue
        text = last_writer(update, band, sizes, g.array, spaced)
        if text is None:
            continue
        writers[g.name] = text
        values = {f"{l}_t1": n for l, n in sizes.items()}
        owners = owned_elements({"last_writer": text}, sizes, spaced, [sizes[l] for l in spaced], values)
        if owners is None:
            continue
        one_tile = sympy.And(*(sympy.Eq(symbol(f"{l}_t1"), n) for l, n in sizes.items()),
                             *(sympy.Eq(e, sizes[l]) for e, l in zip(arch.pe_grid, spaced)))
        modules = [_owned(m, g, owners, spaced, sizes, one_tile, arch) for m in modules]
    return replace(arch, modules=tuple(modules), last_writers=writers)


def drained_by_last_writer(group, space_loops) -> bool:
    """An output whose subscripts miss a space loop (several PEs write its elements): each element
    leaves once, from its last writer, where the configuration allows (`with_owned_drains`)."""
    used = {l for a in group.access.index for l, _ in a.terms}
    return group.kind == "out" and not all(l in used for l in space_loops)


def _owned(m: Module, g, owners: dict, spaced: list[str], sizes: dict, one_tile, arch: Architecture) -> Module:
    def when_owned(count: int, box: sympy.Expr) -> sympy.Expr:
        return sympy.Piecewise((sympy.Integer(count), one_tile), (box, True))

    def with_trip(p: Phase, count: int) -> Phase:
        loops = tuple(replace(l, trip=when_owned(count, l.trip)) if l.role == "transfer" else l for l in p.loops)
        return replace(p, loops=loops)

    if m.kind == "pe":
        most = max(len(e) for e in owners.values())
        # the PE sends its owned elements after its event, from one set of accumulators (the
        # exporter's owned drain is not double buffered: pe.py build_pe's `overlap_drain`)
        buffers = tuple(replace(b, double_buffered=False) if b.array == g.array else b for b in m.buffers)
        return replace(m, phases=tuple(with_trip(p, most) if p.name == f"write_{g.name}" else p for p in m.phases),
                       overlapped=False, buffers=buffers)
    if m.kind != "drain" or m.array != g.array:
        return m
    dims = spaced[:len(m.grid)]
    chained = any(f.source == m.name and f.target == m.name for f in arch.fifos)
    own, passed = [], []
    for index in itertools.product(*(range(sizes[l]) for l in dims)):
        mine = sum(len(e) for pe, e in owners.items() if tuple(pe[:len(dims)]) == index)
        behind = sum(len(e) for pe, e in owners.items() if chained and dims and tuple(pe[:len(dims) - 1]) == index[:-1]
                     and pe[len(dims) - 1] > index[-1])
        own.append(mine)
        passed.append(mine + behind)
    phases = [with_trip(p, max(passed) if p.name == "drain" else max(own)) for p in m.phases]
    if m.dram:
        rows = [1 + sum(abs(c) * (sizes[l] - 1) for l, c in a.terms) for a in g.access.index]
        pack = symbol(f"{g.name}_out_pack_l{m.level}")
        events = next(l for l in phases[0].loops if l.role == "tile")
        words = sympy.Integer(sympy.prod(rows[:-1])) * sympy.ceiling(sympy.Integer(rows[-1]) / pack)
        # (elsewhere one word a block: the phase costs its pipeline depth per event there)
        phases.append(Phase("store_block", (events, Loop("words", when_owned(1, 0) * words + when_owned(0, 1), "transfer")),
                            f"write the {g.array} block in whole bus words"))
    return replace(m, phases=tuple(phases))

