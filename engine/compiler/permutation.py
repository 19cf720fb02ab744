"""Band + references -> loop-permutation classes of the array-partitioning band (Odyssey Thm. 3.1).

For each array reference r of the compute statements, RL(r) are the band loops along which r's
element does not change (they carry r's reuse, or its accumulation when r is written). Putting RL(r)
innermost keeps r's tile on chip across those loops; all orders inside a bracket are equivalent,
so a class is written `<[NRL(r)], [RL(r)]>`. Diagonal reuse such as fi[h + p] is not a loop of
RL(fi): neighbouring tiles along h only overlap (a halo), they are not reused whole, which is why
Odyssey's CNN classes are <[o,h,w],[i,p,q]>, <[o,i,p,q],[h,w]> and <[i,h,w,p,q],o>.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from engine.compiler import isl_helpers as ih
from engine.compiler.band import Band
from engine.compiler.polyhedral import PolyhedralModel, Reference


@dataclass(frozen=True)
class PermutationClass:
    groups: tuple[tuple[str, ...], ...]  # outermost group first; loops in band order
    arrays: tuple[str, ...]  # the references whose reuse this order keeps on chip

    def __str__(self) -> str:
        parts = [g[0] if len(g) == 1 else "[" + ",".join(g) + "]" for g in self.groups]
        if len(parts) == 1 and not parts[0].startswith("["):
            parts = ["[" + parts[0] + "]"]
        return "<" + ",".join(parts) + ">"

    @property
    def order(self) -> tuple[str, ...]:
        """One representative loop order (any order inside a group performs the same)."""
        return tuple(loop for group in self.groups for loop in group)


def invariant_loops(band: Band, ref: Reference) -> tuple[str, ...]:
    """Band loops (with extent > 1) along which the reference touches the same element."""
    in_band = ref.relation.apply_domain(band.schedules[ref.statement])
    same_element = in_band.apply_range(in_band.reverse()).deltas()
    loops = []
    for d, (loop, extent) in enumerate(zip(band.loops, band.extents)):
        unit = ", ".join("1" if k == d else "0" for k in range(len(band.loops)))
        if extent > 1 and isl.Set(f"{{ [{unit}] }}", context=ih.CTX).is_subset(same_element):
            loops.append(loop)
    return tuple(loops)


def permutation_classes(model: PolyhedralModel, band: Band) -> list[PermutationClass]:
    refs = [r for r in model.references if r.statement in band.full_statements]
    refs.sort(key=lambda r: not r.is_write)  # the written (accumulated) array first, as Odyssey lists them
    classes: dict[tuple, PermutationClass] = {}
    for ref in refs:
        reused = invariant_loops(band, ref)
        rest = tuple(loop for loop in band.loops if loop not in reused)
        groups = tuple(g for g in (rest, reused) if g)
        key = tuple(frozenset(g) for g in groups)  # order matters: which group is innermost
        if key in classes:
            known = classes[key]
            if ref.access.array not in known.arrays:
                classes[key] = PermutationClass(known.groups, known.arrays + (ref.access.array,))
        else:
            classes[key] = PermutationClass(groups, (ref.access.array,))
    return list(classes.values())
