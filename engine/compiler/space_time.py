"""Band + dependences -> dataflows: every legal choice of one or two space loops (AutoSA Alg. 1).

A band loop can be a space loop only if every flow and read dependence has distance 0 or 1 on it
(data moves only between neighbouring PEs, in one direction). Reduction chains are not fixed by the
source: they follow the space-time schedule (space loops outermost), so they are recomputed with
isl for each candidate choice; two reduction loops cannot both be space loops, because the chain
would jump back across the array when the inner one wraps around.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import islpy as isl

from engine.compiler import isl_helpers as ih
from engine.compiler.band import Band
from engine.compiler.dependences import Dependence, Dependences
from engine.compiler.polyhedral import PolyhedralModel


@dataclass(frozen=True)
class Dataflow:
    space_loops: tuple[str, ...]  # in band order

    def __str__(self) -> str:
        return "[" + ",".join(self.space_loops) + "]"


def carried_distances(band: Band, deps: tuple[Dependence, ...], loop: str) -> set[tuple[int, int]]:
    d = band.index(loop)
    return {band.distance_ranges(dep)[d] for dep in deps}


def space_loop_candidates(band: Band, deps: Dependences) -> list[str]:
    communicating = deps.flow + deps.read
    return [loop for loop in band.loops
            if all(0 <= lo and hi <= 1 for lo, hi in carried_distances(band, communicating, loop))]


def reduction_chains(model: PolyhedralModel, band: Band, deps: Dependences,
                     order: tuple[str, ...]) -> list[Dependence]:
    """The accumulation dependences of every reduction when the band runs in `order`."""
    n = len(band.loops)
    names = [f"b{d}" for d in range(n)]
    permuted = ", ".join(f"b{band.index(loop)}" for loop in order)
    permute = isl.Map(f"{{ [{', '.join(names)}] -> [{permuted}] }}", context=ih.CTX)
    chains: list[Dependence] = []
    for red in deps.reductions.values():
        refs = [r for r in model.references if r.statement == red.statement and r.access.array == red.array]
        writes = ih.union_of(r.relation for r in refs if r.is_write)
        reads = ih.union_of(r.relation for r in refs if not r.is_write)
        schedule = isl.UnionMap.from_map(band.schedules[red.statement].apply_range(permute))
        found = ih.compute_dependences(reads, schedule, must=writes)
        for m in ih.maps_of(found):
            for piece in m.get_basic_maps():
                chains.append(Dependence("reduction", red.array, red.statement, red.statement,
                                         isl.Map.from_basic_map(piece)))
    return chains


def enumerate_dataflows(model: PolyhedralModel, band: Band, deps: Dependences,
                        max_dims: int = 2) -> list[Dataflow]:
    candidates = space_loop_candidates(band, deps)
    dataflows: list[Dataflow] = []
    for dims in range(1, max_dims + 1):
        for space in combinations(candidates, dims):
            order = space + tuple(loop for loop in band.loops if loop not in space)
            chains = reduction_chains(model, band, deps, order)
            if all(0 <= lo and hi <= 1 for loop in space for lo, hi in carried_distances(band, tuple(chains), loop)):
                dataflows.append(Dataflow(space))
    return dataflows

