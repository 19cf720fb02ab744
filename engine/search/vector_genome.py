"""The Odyssey genetic operators (genome.py explains them) applied to a whole population at once.

A population is an int64 array, one row per configuration, one column per tunable parameter in
`SearchSpace.names` order. Each operator is a handful of numpy calls, so a generation of a thousand
children costs about as much as evaluating them (the models evaluate ~10^6 configurations/s).

Divisors come from a `Divisors` table: a full table for values up to 2^14, and above it the
divisors of each value actually met, found in O(sqrt v) and cached, so a loop of 10^9 iterations
costs what its visited values cost, not a 10^9-row table.
"""
from __future__ import annotations

import math

import numpy as np

from engine.search.space import Config, SearchSpace

ALPHA = 0.4
TABLE_LIMIT = 16385  # values below it use the full table (16385 rows x 80 divisors at most, 10 MB)
CACHE_LIMIT = 200_000  # values above it whose divisors are kept


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
        self.divisors = Divisors(int(self.extent.max()) + 1)
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
        count = self.divisors.count(la)
        pick = 1 + (rng.random(n) * np.maximum(count - 1, 1)).astype(np.int64)
        factor = np.where(count > 1, self.divisors.pick(la, pick), 1)
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
        count = self.divisors.count(values)
        return self.divisors.pick(values, (rng.random(len(values)) * count).astype(np.int64))

    # local_search.py reads `_divisors[v, :_n_divisors[v]]`: views over the lazy table with that indexing
    @property
    def _divisors(self) -> "_DivisorRows":
        return _DivisorRows(self.divisors)

    @property
    def _n_divisors(self) -> "_DivisorCounts":
        return _DivisorCounts(self.divisors)

    def _legal_t2(self, l: int, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
        t2 = np.minimum(t2, self.t2_upper[l])
        if self.simd[l]:
            t2 = 1 << np.log2(t2).astype(np.int64)
        while np.any(t1 % t2):  # capped or rounded down: step to a divisor of t1
            t2 = np.where(t1 % t2 == 0, t2, np.maximum(t2 // 2 if self.simd[l] else t2 - 1, 1))
        return t2


class Divisors:
    """The divisors of non-negative integers in increasing order (0 counts as having the divisor 1)."""

    def __init__(self, top: int):
        self._table, self._count = _divisor_table(min(top, TABLE_LIMIT))
        self._limit = len(self._count)
        self._cache: dict[int, np.ndarray] = {}

    def of(self, v: int) -> np.ndarray:
        v = int(v)
        if v < self._limit:
            return self._table[v, :self._count[v]]
        found = self._cache.get(v)
        if found is None:
            low = np.arange(1, math.isqrt(v) + 1, dtype=np.int64)
            low = low[v % low == 0]
            found = np.unique(np.concatenate([low, v // low]))
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[v] = found
        return found

    def count(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.int64)
        out = np.empty(values.shape, dtype=np.int64)
        small = values < self._limit
        out[small] = self._count[values[small]]
        if not small.all():
            self._each_large(values, ~small, lambda d, rows: np.full(len(rows), len(d)), out)
        return out

    def pick(self, values: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The index-th divisor of each value (an index past the last gives the last)."""
        values = np.asarray(values, dtype=np.int64)
        index = np.broadcast_to(np.asarray(index, dtype=np.int64), values.shape)
        out = np.empty(values.shape, dtype=np.int64)
        small = values < self._limit
        v = values[small]
        out[small] = self._table[v, np.minimum(index[small], self._count[v] - 1)]
        if not small.all():
            self._each_large(values, ~small, lambda d, rows: d[np.minimum(index[rows], len(d) - 1)], out)
        return out

    def _each_large(self, values, mask, take, out) -> None:
        rows = np.flatnonzero(mask)
        order = rows[np.argsort(values[rows], kind="stable")]
        distinct, starts = np.unique(values[order], return_index=True)
        for v, group in zip(distinct, np.split(order, starts[1:])):
            out[group] = take(self.of(int(v)), group)


class _DivisorRows:
    def __init__(self, divisors: Divisors):
        self.divisors = divisors

    def __getitem__(self, key):
        value, columns = key
        return self.divisors.of(int(value))[columns]


class _DivisorCounts:
    def __init__(self, divisors: Divisors):
        self.divisors = divisors

    def __getitem__(self, value):
        return len(self.divisors.of(int(value)))


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
