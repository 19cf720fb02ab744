"""Design + concrete configuration -> what isl's generated code executes, module by module, next to
what the architecture's symbolic expressions say (tests/.../test_ast_check.py compares them).

The isl side is derived from the polyhedral model, not from the architecture's formulas: the padded
iteration domain is the union of the full tiles that meet the statements' domain; a PE iterates the
padded points it owns; a transfer moves the distinct (event, element) pairs those points access;
reloads of partial results are those pairs minus each element's first touch; a buffer holds the
distinct elements of one block. isl builds an AST for each set and `isl_ast_count` counts what the
AST executes.
"""
from __future__ import annotations

import islpy as isl

from engine.compiler import isl_helpers as ih
from engine.compiler.architecture.io_groups import IOGroup
from engine.compiler.architecture.modules import Architecture
from engine.compiler.architecture.symbols import symbol
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.isl_ast_count import count_points


class ConcreteTiling:
    """isl sets of one design at concrete tuning parameters, over band coordinates."""

    def __init__(self, space: DesignSpace, design: Design, values: dict[str, int]):
        self.design = design
        self.loops = design.band_loops
        self.t1 = {l: values[f"{l}_t1"] for l in self.loops}
        self.t2 = {l: values.get(f"{l}_t2", 1) for l in self.loops}
        self.vars = ", ".join(self.loops)
        real = None
        for stmt in space.band.full_statements:
            image = space.model.domains[stmt].apply(space.band.schedules[stmt])
            real = image if real is None else real.union(image)
        tiles = real.apply(self._map([f"floor({l}/{self.t1[l]})" for l in self.loops], []))
        full_tile = isl.Map("{ [" + ", ".join(f"t_{l}" for l in self.loops) + f"] -> [{self.vars}] : "
                            + " and ".join(f"{self.t1[l]}*t_{l} <= {l} < {self.t1[l]}*(t_{l} + 1)"
                                           for l in self.loops) + " }", context=ih.CTX)
        self.padded = tiles.apply(full_tile)

    def _map(self, outputs: list[str], conditions: list[str]) -> isl.Map:
        text = f"{{ [{self.vars}] -> [{', '.join(outputs)}] : {' and '.join(conditions) or 'true'} }}"
        return isl.Map(text, context=ih.CTX)

    def _image(self, outputs: list[str], conditions: list[str]) -> isl.Set:
        return self.padded.apply(self._map(outputs, conditions))

    def tile(self, l: str) -> str:
        return f"floor({l}/{self.t1[l]})"

    def point(self, l: str) -> str:
        return f"({l} mod {self.t1[l]})"

    def pe_index(self, l: str) -> str:
        return f"floor({self.point(l)}/{self.t2[l]})" if l in self.design.split_space_loops else self.point(l)

    def pe_compute(self) -> isl.Set:
        """Iterations of the first PE, SIMD lanes folded: (tile loops, time loops, latency hiding)."""
        d = self.design
        conditions = [f"{self.pe_index(s)} = 0" for s in d.space_loops]
        if d.simd_loop:
            conditions.append(f"{self.point(d.simd_loop)} mod {self.t2[d.simd_loop]} = 0")
        coords = [self.tile(l) for l in d.permutation.order]
        coords += [f"floor({self.point(l)}/{self.t2[l]})" for l in self.loops if l not in d.space_loops]
        coords += [f"{self.point(l)} mod {self.t2[l]}" for l in d.latency_hiding_loops]
        return self._image(coords, conditions)

    def transfers(self, group: IOGroup) -> isl.Set:
        """Distinct (event, element) pairs: the tile loops up to the last one the data depends on."""
        return self._image([self.tile(l) for l in event_loops(self.design, group)]
                           + [str(i) for i in group.access.index], [])

    def reloads(self, group: IOGroup) -> isl.Set:
        """Pairs whose partial result must come back from DRAM: all but each element's first touch
        when an initialisation statement provides that one on chip."""
        pairs = self.transfers(group)
        if not group.initialised_on_chip:
            return pairs
        n = len(event_loops(self.design, group))
        by_element = isl.Map.from_range(pairs).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, n,
                                                         pairs.dim(isl.dim_type.set) - n)
        first = by_element.lexmin().reverse().wrap().flatten()
        return pairs.subtract(first)

    def block(self, group: IOGroup, fixed_space: tuple[str, ...]) -> isl.Set:
        """Elements of one buffer: tile 0, the first PE along the space loops in `fixed_space`."""
        conditions = [f"{self.tile(l)} = 0" for l in self.loops] + [f"{self.pe_index(s)} = 0" for s in fixed_space]
        return self._image([str(i) for i in group.access.index], conditions)


def event_loops(design: Design, group: IOGroup) -> tuple[str, ...]:
    order = design.permutation.order
    last = max((order.index(l) for l in order if l not in group.invariant), default=-1)
    return order[:last + 1]


def _value(expr, values: dict[str, int]) -> int:
    return int(round(float(expr.subs({symbol(k): v for k, v in values.items()}))))


def check_counts(space: DesignSpace, design: Design, arch: Architecture, values: dict[str, int]) -> list[tuple]:
    """(quantity, symbolic value, isl AST count) for the PE, every DRAM transfer and every buffer.
    `values` must include the data-packing factors."""
    tiling = ConcreteTiling(space, design, values)
    groups = {g.name: g for g in arch.groups}
    by_array = {g.array: g for g in arch.groups}
    rows = []
    pe = arch.module("PE")
    rows.append(("PE compute iterations", _value(pe.phases[0].iterations, values), count_points(tiling.pe_compute())))
    for m in arch.modules:
        if m.kind == "pe":
            for b in m.buffers:
                g = groups[b.name.removeprefix("local_")]
                rows.append((f"PE buffer {b.name}", _value(b.elements, values),
                             count_points(tiling.block(g, design.space_loops))))
            continue
        g = by_array[m.array]
        for b in m.buffers:
            fixed = tuple(s for s in design.space_loops if s != g.exterior_loop)
            rows.append((f"{m.name} buffer", _value(b.elements, values), count_points(tiling.block(g, fixed))))
        if m.dram:
            transfer = m.phases[0]
            pairs = tiling.reloads(g) if (m.kind == "io" and g.kind == "acc") else tiling.transfers(g)
            rows.append((f"{m.name} {transfer.name} elements", _value(transfer.elements, values), count_points(pairs)))
    return rows
