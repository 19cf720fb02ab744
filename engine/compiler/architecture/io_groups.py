"""Design + compiler artefacts -> I/O groups: how each array reference moves through the array.

An I/O group (AutoSA sec. 6.1) is one array reference of the statements the PE runs (the band's
compute statements, guarded ones included) with its dependence; arrays declared inside the scop
have none (they stay on chip: local_arrays.py):
- `in`: read-only data (read dependences);
- `acc`: the reduction target (its accumulation); it may need intermediate results loaded (`C_in`)
  and always has final results drained;
- `out`: written without accumulation (drained only).
The group is *exterior* along a space loop when its reuse or accumulation is carried by that loop
(data moves from PE to PE along it and enters at the array boundary), otherwise *interior* (each
PE gets its own data from an L1 I/O module). Only reuse along a single loop counts (see
permutation.py); diagonal reuse such as fi[h + p] is served as interior I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import sympy

from engine.compiler.architecture.passes import PassView
from engine.compiler.architecture.symbols import DesignSymbols
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.ir import Access
from engine.compiler.permutation import invariant_loops


@dataclass(frozen=True)
class IOGroup:
    name: str  # array name, suffixed when an array has several references
    array: str
    access: Access
    kind: str  # in, acc, out
    invariant: tuple[str, ...]  # band loops along which the element does not change (loops of extent 1 too)
    exterior_loop: str | None  # the space loop data flows along, None for interior I/O
    element_bits: int
    loads: sympy.Expr  # tile iterations at which new data enters (in) / results leave (acc, out)
    reloads: sympy.Expr  # tile iterations that load intermediate results (acc); 0 otherwise
    initialised_on_chip: bool  # acc: the first partial result comes from an init statement

    @property
    def exterior(self) -> bool:
        return self.exterior_loop is not None

    @property
    def needs_input_modules(self) -> bool:
        return self.kind == "in" or (self.kind == "acc" and self.reloads != 0)

    @property
    def needs_drain(self) -> bool:
        return self.kind in ("acc", "out")


def io_groups(space: DesignSpace, design: Design, element_bits: dict[str, int],
              view: "PassView | None" = None) -> list[IOGroup]:
    """`view`: the groups of one pass (engine/compiler/architecture/passes.py): pass loops have one
    tile, and in a pass that reads partial results back the accumulator starts from DRAM, as an
    accumulator without an initialisation does."""
    syms = DesignSymbols(design, view.loops if view else ())
    band = space.band
    order = design.permutation.order
    # every statement the PE runs (full ones first, so an accumulator is seen as such before a
    # guarded write of it); arrays declared inside the scop stay on chip (local_arrays.py)
    compute = [space.kernel.statement(name) for name in band.compute_statements]
    local = {name for name, decl in space.kernel.arrays.items() if decl.local}
    reductions = space.dependences.reductions
    seen: dict[tuple[str, Access], None] = {}
    groups: list[IOGroup] = []
    for stmt in compute:
        refs = [(stmt.target, True)] + [(a, False) for a in stmt.reads()]
        for access, is_write in refs:
            if (access.array, access) in seen or (not is_write and access == stmt.target) or access.array in local:
                continue
            seen[(access.array, access)] = None
            ref = next(r for r in space.model.references
                       if r.statement == stmt.name and r.access == access and r.is_write == is_write)
            reused = invariant_loops(band, ref)
            # a loop of one iteration changes no element either: without it among the invariant loops
            # a 1x1 layer's p and q (after i in <[o,h,w],[i,p,q]>) would look like output loops inside
            # the reduction i and make every i tile a pass that re-reads the output
            invariant = tuple(l for l, n in zip(band.loops, band.extents) if l in reused or n == 1)
            reduction = reductions.get(stmt.name)
            kind = "in" if not is_write else ("acc" if reduction and reduction.array == access.array else "out")
            exterior = next((l for l in design.space_loops if l in reused), None)
            if kind == "acc":
                exterior = next((l for l in design.space_loops if l in reduction.loops), None)
            elif kind == "out":
                exterior = None
            dependent = [l for l in order if l not in invariant]
            last = max((order.index(l) for l in dependent), default=-1)
            # a tile's data changes at each iteration of the tile loops up to the innermost one it depends on
            events = sympy.Mul(*(syms.tiles(l) for l in order[:last + 1]))
            outputs = sympy.Mul(*(syms.tiles(l) for l in dependent))
            initialised = kind == "acc" and _has_initialisation(space, stmt.name, access.array)
            if view is not None and view.reload:
                initialised = False
            reloads = sympy.Integer(0)
            if kind == "acc":
                reloads = events - outputs if initialised else events
            groups.append(IOGroup(access.array, access.array, access, kind, invariant, exterior,
                                  element_bits[access.array], events, reloads, initialised))
    names = [g.array for g in groups]
    return [g if names.count(g.array) == 1 else replace(g, name=f"{g.array}_{k}") for k, g in enumerate(groups)]


def _has_initialisation(space: DesignSpace, statement: str, array: str) -> bool:
    """Does another statement write the accumulator right before its first update (C[i][j] = 0)?"""
    return any(dep.sink == statement and dep.source != statement and dep.array == array
               for dep in space.dependences.flow)
