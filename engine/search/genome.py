"""Genetic operators over configurations, as in the Odyssey paper (sec. 4.1).

A loop l is seen as its tiled loop bounds: b0 = ceil(N / t1) tiles, b1 = t1 / t2, b2 = t2 (b2 only
for loops with a second level). Mutation moves factors between the levels of one loop:
- factorization (probability alpha = 0.4): divide one level by a divisor of its bound and multiply
  another level of the same loop by it: the product stays, only divisors appear;
- random: set one level to a random s in [1, bound], the other to ceil(bound * other / s): the
  product never shrinks, so non-divisor array-partitioning factors appear.
t1 = b1 * b2 (at most N), t2 = b2 (a power of two for SIMD). vector_genome.py applies the same
operators, and crossover, to whole populations; this scalar form serves the step-by-step baselines.
"""
from __future__ import annotations

import math
import random
from functools import lru_cache

from engine.search.space import Config, LoopGenes, SearchSpace

ALPHA = 0.4


@lru_cache(maxsize=65536)
def _divisors(n: int) -> tuple[int, ...]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def levels(genes: LoopGenes, config: Config) -> list[int]:
    t1 = config[genes.t1]
    if genes.t2 is None:
        return [math.ceil(genes.extent / t1), t1]
    t2 = config[genes.t2]
    return [math.ceil(genes.extent / t1), t1 // t2, t2]


def set_levels(genes: LoopGenes, config: Config, bounds: list[int]) -> None:
    """Write the levels back as t1 / t2, repaired to satisfy the loop's constraints."""
    if genes.t2 is None:
        config[genes.t1] = max(1, min(bounds[1], genes.extent))
        return
    t2 = max(1, bounds[2])
    if genes.simd:
        t2 = 1 << (min(t2, genes.t2_upper).bit_length() - 1)
    t2 = min(t2, genes.extent, genes.t2_upper)
    t1 = min(max(1, bounds[1]) * t2, genes.extent)
    t1 -= t1 % t2  # t2 divides t1
    config[genes.t1], config[genes.t2] = max(t1, t2), t2


def mutate(space: SearchSpace, config: Config, rng: random.Random, alpha: float = ALPHA) -> Config:
    child = dict(config)
    genes = space.loops[rng.randrange(len(space.loops))]
    bounds = levels(genes, child)
    a, b = rng.sample(range(len(bounds)), 2)
    if rng.random() < alpha:
        choices = _divisors(bounds[a])[1:]
        if choices:
            factor = rng.choice(choices)
            bounds[a] //= factor
            bounds[b] *= factor
    else:
        s = rng.randint(1, bounds[a])
        bounds[b] = math.ceil(bounds[a] * bounds[b] / s)
        bounds[a] = s
    set_levels(genes, child, bounds)
    return child




def random_config(space: SearchSpace, rng: random.Random) -> Config:
    """t1 log-uniform in 1..N (a PE array of any scale is as likely), t2 among its legal divisors."""
    config: Config = {}
    for genes in space.loops:
        t1 = int(round(math.exp(rng.uniform(0, math.log(genes.extent)))))
        t1 = max(1, min(t1, genes.extent))
        config[genes.t1] = t1
        if genes.t2:
            choices = [d for d in _divisors(t1) if d <= genes.t2_upper and (not genes.simd or d & (d - 1) == 0)]
            config[genes.t2] = rng.choice(choices)
    return config
