"""Best configuration -> its joint neighbourhood over every pair of loops, as one batch.

The best designs sit against the DSP budget, where improving one loop's PE count means shrinking
another's: single mutations mostly overshoot there. So around a configuration we list, per loop,
nearby array-partitioning factors (t1 +- a few, and ceil(N / n) for tile counts n near the current
one: the smallest t1 giving n tiles, which pads least) with their legal second-level factors
closest to the current one, and take every combination of two loops' candidates, the other loops
unchanged: a few tens of thousands of rows, a fraction of a second with the vectorised models.
(Taking every tile count, about 2 sqrt(N) values per loop, made the neighbourhood ~10^5 rows and
the search worse within a 5 s budget.)
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from engine.search.space import Config, SearchSpace
from engine.search.vector_genome import VectorGenome

STEP = 10  # t1 +- STEP
TILE_STEP = 3  # tile counts n +- TILE_STEP
T2_CHOICES = 6  # second-level factors kept per t1: those closest (in ratio) to the current one


def _loop_candidates(genome: VectorGenome, l: int, t1: int, t2: int) -> list[tuple[int, int]]:
    n, extent = genome.extent[l], int(genome.extent[l])
    tiles = math.ceil(extent / t1)
    values = {t1 + d for d in range(-STEP, STEP + 1)}
    values |= {math.ceil(extent / k) for k in range(max(1, tiles - TILE_STEP), tiles + TILE_STEP + 1)}
    out = []
    for v in sorted(x for x in values if 1 <= x <= n):
        if not genome.has_t2[l]:
            out.append((v, 1))
            continue
        divisors = genome._divisors[v, :genome._n_divisors[v]]
        legal = [int(d) for d in divisors if d <= genome.t2_upper[l] and (not genome.simd[l] or d & (d - 1) == 0)]
        legal.sort(key=lambda d: abs(math.log(d / t2)))
        out += [(v, d) for d in legal[:T2_CHOICES]]
    return out


def neighbourhood(space: SearchSpace, genome: VectorGenome, config: Config) -> np.ndarray:
    base = genome.from_configs([config])[0]
    candidates = []
    for l in range(len(genome.t1)):
        t2 = int(base[genome.t2[l]]) if genome.has_t2[l] else 1
        candidates.append(_loop_candidates(genome, l, int(base[genome.t1[l]]), t2))
    blocks = []
    pairs = itertools.combinations(range(len(candidates)), 2) if len(candidates) > 1 else [(0, 0)]
    for a, b in pairs:
        ca, cb = np.array(candidates[a]), np.array(candidates[b])
        ia, ib = np.meshgrid(np.arange(len(ca)), np.arange(len(cb)), indexing="ij")
        rows = np.repeat(base[None, :], ia.size, axis=0)
        for l, cand, idx in ((a, ca, ia.ravel()), (b, cb, ib.ravel())):
            rows[:, genome.t1[l]] = cand[idx, 0]
            if genome.has_t2[l]:
                rows[:, genome.t2[l]] = cand[idx, 1]
        blocks.append(rows)
    rows = np.vstack(blocks)
    return rows[genome.first_occurrences(rows)]
