"""The Odyssey genetic operators (genome.py explains them) applied to a whole population at once.

A population is an int64 array, one row per configuration, one column per tunable parameter in
`SearchSpace.names` order. Each operator is a handful of numpy calls, so a generation of a thousand
children costs about as much as evaluating them (the models evaluate ~10^6 configurations/s).
"""
from __future__ import annotations

import numpy as np

from engine.search.space import Config, SearchSpace

ALPHA = 0.4


class VectorGenome:
    """`divisors_only`: array-partitioning factors stay divisors of the problem size (the prior-work
    restriction the Odyssey paper measures): random t1 are divisors, and only factorization moves
    are made, which keep them divisors."""

    def __init__(self, space: SearchSpace, *, divisors_only: bool = False):
        self.space = space
        self.divisors_only = divisors_only
        self.names = space.names
        col = {n: k for k, n in enumerate(self.names)}
        self.t1 = np.array([col[g.t1] for g in space.loops])
        self.t2 = np.array([col[g.t2] if g.t2 else -1 for g in space.loops])
        self.extent = np.array([g.extent for g in space.loops])
        self.simd = np.array([g.simd for g in space.loops])
        self.t2_upper = np.array([g.t2_upper for g in space.loops])
        self.has_t2 = self.t2 >= 0
        top = int(self.extent.max()) + 1
        self._divisors, self._n_divisors = _divisor_table(top)
        # a row's mixed-radix number (every value is at most its loop's extent), when it fits in int64:
        # deduplicating integers is ~10x faster than numpy's row-wise unique
        radix = np.zeros(len(self.names), dtype=object)
        for l in range(len(self.t1)):
            radix[self.t1[l]] = int(self.extent[l]) + 1
            if self.has_t2[l]:
                radix[self.t2[l]] = min(int(self.t2_upper[l]), int(self.extent[l])) + 1
        place = np.cumprod(np.concatenate(([1], radix[:-1])))
        self._place = place.astype(np.int64) if int(place[-1]) * int(radix[-1]) < 2 ** 63 else None

    # -- conversions ------------------------------------------------------------------------------
    def to_columns(self, pop: np.ndarray) -> dict[str, np.ndarray]:
        return {n: pop[:, k] for k, n in enumerate(self.names)}

    def row(self, pop: np.ndarray, i: int) -> Config:
        return {n: int(pop[i, k]) for k, n in enumerate(self.names)}

    def from_configs(self, configs: list[Config]) -> np.ndarray:
        return np.array([[c[n] for n in self.names] for c in configs], dtype=np.int64).reshape(-1, len(self.names))

    def first_occurrences(self, pop: np.ndarray) -> np.ndarray:
        """Indices, in order, of the first row of each distinct configuration in pop."""
        if self._place is not None:
            _, first = np.unique(pop @ self._place, return_index=True)
        else:
            _, first = np.unique(pop, axis=0, return_index=True)
        return np.sort(first)

    # -- operators --------------------------------------------------------------------------------
    def random(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """t1 log-uniform in 1..N, t2 a random legal divisor of it."""
        pop = np.ones((n, len(self.names)), dtype=np.int64)
        for l in range(len(self.t1)):
            t1 = np.clip(np.rint(np.exp(rng.uniform(0, np.log(self.extent[l]), n))), 1, self.extent[l]).astype(np.int64)
            if self.divisors_only:
                t1 = self._random_divisor(np.full(n, self.extent[l]), rng)
            pop[:, self.t1[l]] = t1
            if self.has_t2[l]:
                pop[:, self.t2[l]] = self._legal_t2(l, t1, self._random_divisor(t1, rng))
        return pop

    def mutate(self, pop: np.ndarray, rng: np.random.Generator, alpha: float = ALPHA) -> np.ndarray:
        if self.divisors_only:
            alpha = 1.0
        n = len(pop)
        child = pop.copy()
        loop = rng.integers(0, len(self.t1), n)
        t1 = child[np.arange(n), self.t1[loop]]
        t2 = np.where(self.has_t2[loop], child[np.arange(n), np.maximum(self.t2[loop], 0)], 1)
        ext = self.extent[loop]
        levels = np.stack([-(-ext // t1), t1 // t2, t2], axis=1)  # tiles, t1 / t2, t2
        n_levels = np.where(self.has_t2[loop], 3, 2)
        a = (rng.random(n) * n_levels).astype(np.int64)
        b = (a + 1 + (rng.random(n) * (n_levels - 1)).astype(np.int64)) % n_levels
        rows = np.arange(n)
        la, lb = levels[rows, a], levels[rows, b]
        factorize = rng.random(n) < alpha
        # factorization: move a divisor > 1 of level a to level b
        count = self._n_divisors[la]
        pick = 1 + (rng.random(n) * np.maximum(count - 1, 1)).astype(np.int64)
        factor = np.where(count > 1, self._divisors[la, np.minimum(pick, self._divisors.shape[1] - 1)], 1)
        # random: level a becomes s in [1, la], level b grows so the product does not shrink
        s = 1 + (rng.random(n) * la).astype(np.int64)
        new_a = np.where(factorize, la // factor, s)
        new_b = np.where(factorize, lb * factor, -(-(la * lb) // s))
        levels[rows, a], levels[rows, b] = new_a, new_b
        self._write(child, loop, levels)
        if self.divisors_only:  # rounding a SIMD factor can leave a non-divisor t1: keep the parent then
            leaked = np.any(self.extent[None, :] % child[:, self.t1] != 0, axis=1)
            child[leaked] = pop[leaked]
        return child

    def crossover(self, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each original loop's factors come together from one parent."""
        child = a.copy()
        take = rng.random((len(a), len(self.t1))) < 0.5
        for l in range(len(self.t1)):
            cols = [self.t1[l]] + ([self.t2[l]] if self.has_t2[l] else [])
            child[np.ix_(take[:, l], cols)] = b[np.ix_(take[:, l], cols)]
        return child

    # -- helpers ----------------------------------------------------------------------------------
    def _write(self, child: np.ndarray, loop: np.ndarray, levels: np.ndarray) -> None:
        rows = np.arange(len(child))
        ext = self.extent[loop]
        t2 = np.maximum(levels[:, 2], 1)
        simd = self.simd[loop]
        t2 = np.where(simd, 1 << (np.log2(np.minimum(t2, self.t2_upper[loop])).astype(np.int64)), t2)
        t2 = np.where(self.has_t2[loop], np.minimum(np.minimum(t2, ext), self.t2_upper[loop]), 1)
        t1 = np.minimum(np.maximum(levels[:, 1], 1) * t2, ext)
        t1 = np.maximum(t1 - t1 % t2, t2)
        child[rows, self.t1[loop]] = t1
        with_t2 = self.has_t2[loop]
        child[rows[with_t2], self.t2[loop][with_t2]] = t2[with_t2]

    def _random_divisor(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        count = self._n_divisors[values]
        return self._divisors[values, (rng.random(len(values)) * count).astype(np.int64)]

    def _legal_t2(self, l: int, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
        t2 = np.minimum(t2, self.t2_upper[l])
        if self.simd[l]:
            t2 = 1 << np.log2(t2).astype(np.int64)
        while np.any(t1 % t2):  # capped or rounded down: step to a divisor of t1
            t2 = np.where(t1 % t2 == 0, t2, np.maximum(t2 // 2 if self.simd[l] else t2 - 1, 1))
        return t2


def _divisor_table(top: int) -> tuple[np.ndarray, np.ndarray]:
    """divisors[v, :count[v]] lists the divisors of v in increasing order (v < top)."""
    count = np.zeros(top, dtype=np.int64)
    for d in range(1, top):
        count[d::d] += 1
    table = np.zeros((top, max(int(count.max()), 1)), dtype=np.int64)
    fill = np.zeros(top, dtype=np.int64)
    for d in range(1, top):
        idx = np.arange(d, top, d)
        table[idx, fill[idx]] = d
        fill[idx] += 1
    table[0, 0] = 1
    count[0] = 1
    return table, count
