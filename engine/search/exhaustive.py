"""Exhaustive search with pruning based on DSP utilisation, the Odyssey baseline (sec. 5.2.1): every
legal configuration is visited once, except those using less than `threshold` (25%) of the DSP
budget, which the paper skips because every reasonable design of its benchmark uses more.

Order. Deterministic and lexicographic: first the loops whose parameters the DSP count depends on,
then the others, each group in the design's loop order (space.loops), the first loop slowest and
the last fastest; within a loop t1 ascends from 1 to N and, for each t1, t2 ascends through its
legal values (the divisors of t1 up to the bound, powers of two for SIMD). For the 2D arrays of MM
the DSP count depends on every loop and the order is plainly i, j, k; for a linear array over i it
is i, k, j, so that one DSP evaluation of an (i, k) choice settles all its j completions. Nothing
favours good designs early: this is the baseline that finishes, not one that converges.

Enumeration is lazy. The per-loop (t1, t2) choices (about N ln N pairs) are counted in O(sqrt N) and
produced one t1 at a time (LoopChoices), so an extent of 10^9 costs nothing until it is walked; the
space is their Cartesian product and is never built: a generator walks the leading loops one
combination at a time and produces numpy blocks for the trailing loops, at most `block`
combinations each (only loops that small are ever turned into tables).

Pruning happens before evaluation, so pruned configurations are neither evaluated by the run nor
counted as samples. When the design's DSP expression depends on the tuning parameters only (it does
for every bundled kernel: PEs x SIMD lanes x operator cost) it is compiled on its own over the loops
it mentions and computed for a whole block of their choices in a few numpy operations; otherwise
every loop counts as mentioned and blocks go through the model's fast evaluator (latency, DSP,
BRAM), a full model evaluation per pruned configuration. Configurations over the DSP budget are
certainly infeasible and are skipped as well (`over_budget`). Should no configuration reach the
threshold at all (a small problem, a linear array), the enumeration runs again without the lower
bound rather than report nothing.

The survivors are proposed in enumeration order as columns (parameter -> numpy array), `batch_size`
(1024) at a time since the model evaluates big batches far faster per configuration; `propose`
returns None when all are done. A `propose` call lasts as long as it takes to find its survivors:
with the DSP-first order a run of pruned configurations costs one evaluation per block of DSP
choices, so it stays short in practice, but the run's time budget is only checked between batches.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence

import numpy as np

from engine.compiler.architecture.symbols import symbol
from engine.models.packing_inference import lambdify
from engine.search.genome import _divisors
from engine.search.space import Columns, LoopGenes, SearchSpace
from engine.search.strategy import SearchStrategy

class LoopChoices(Sequence):
    """Every legal (t1,) or (t1, t2) of one loop, in enumeration order, without building the list: its
    length is counted in O(sqrt N) (pairs (t1, t2) with t2 | t1 <= N are, per t2, the N // t2 multiples
    of t2), iteration produces one t1 at a time, with t2 through the divisors of t1 up to the bound.
    Indexing materialises the choices, and is only allowed up to MATERIALISE of them."""

    MATERIALISE = 1 << 20

    def __init__(self, genes: LoopGenes):
        self.extent, self.pairs = genes.extent, genes.t2 is not None
        self.upper, self.simd = min(genes.t2_upper, genes.extent), genes.simd
        self._length = _pair_count(self.extent, self.upper, self.simd) if self.pairs else self.extent
        self._table: tuple | None = None

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        if not self.pairs:
            return ((t1,) for t1 in range(1, self.extent + 1))
        return ((t1, t2) for t1 in range(1, self.extent + 1) for t2 in self._t2_values(t1))

    def _t2_values(self, t1: int) -> Iterator[int]:
        if self.simd:
            return (1 << b for b in range(self.upper.bit_length()) if (1 << b) <= self.upper and t1 % (1 << b) == 0)
        if self.upper * self.upper <= t1:  # fewer candidates below the bound than up to sqrt(t1)
            return (d for d in range(1, self.upper + 1) if t1 % d == 0)
        return (d for d in _divisors(t1) if d <= self.upper)

    def __getitem__(self, index):
        if self._table is None:
            if self._length > self.MATERIALISE:
                raise IndexError(f"{self._length:,} choices are too many to index; iterate over them")
            self._table = tuple(self)
        return self._table[index]


def _pair_count(n: int, upper: int, simd: bool) -> int:
    """The number of (t1, t2) with 1 <= t1 <= n, t2 | t1, t2 <= upper (a power of two if simd): the sum
    over t2 of n // t2, taken in blocks of equal quotients (O(sqrt n)) or over the powers of two."""
    if simd:
        return sum(n >> b for b in range(upper.bit_length()) if (1 << b) <= upper)
    total, d = 0, 1
    while d <= upper:
        q = n // d
        last = min(upper, n // q)  # the last d with the same quotient
        total += q * (last - d + 1)
        d = last + 1
    return total


def _slices(choices, size: int) -> Iterator[list]:
    """Consecutive lists of at most `size` choices."""
    chunk = []
    for choice in choices:
        chunk.append(choice)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def loop_choices(genes: LoopGenes) -> LoopChoices:
    """Every legal (t1,) or (t1, t2) of one loop, in enumeration order (lazy, see LoopChoices)."""
    return LoopChoices(genes)


def _lazy_product(sequences: list) -> Iterator[tuple]:
    """itertools.product without materialising its inputs (which itertools.product does): each
    sequence is iterated again for every combination of the ones before it."""
    if not sequences:
        yield ()
        return
    for head in sequences[0]:
        for tail in _lazy_product(sequences[1:]):
            yield (head, *tail)


def _params(genes: LoopGenes) -> list[str]:
    return [genes.t1] if genes.t2 is None else [genes.t1, genes.t2]


class ExhaustiveSearch(SearchStrategy):
    name = "exhaustive"

    def __init__(self, space: SearchSpace, *, seed: int = 0, threshold: float = 0.25, over_budget: bool = True,
                 block: int = 1 << 16, batch_size: int = 1024):
        super().__init__(space, seed=seed)
        self.threshold, self.over_budget, self.block = threshold, over_budget, block
        self.batch_size = batch_size  # the run asks for this many at a time: evaluation is cheaper in bulk
        self.choices = [loop_choices(g) for g in space.loops]
        self.size = math.prod(len(c) for c in self.choices)
        self.enumerated = 0  # configurations the enumeration has gone through (pruned or not)
        self.kept = 0  # configurations proposed
        self._dsp, self.dsp_loops = self._dsp_function()
        self.other_loops = [k for k in range(len(space.loops)) if k not in self.dsp_loops]
        self.order = [space.loops[k].loop for k in self.dsp_loops + self.other_loops]
        self._blocks = self._enumerate()
        self._buffer: Columns | None = None
        self._position = 0
        self._done = False
        self._deadline, self._timed_out = math.inf, False
        skipped = f"under {threshold:.0%}" + (" or over 100%" if over_budget else "")
        self.notes.append(f"exhaustive: {self.size:.3g} legal configurations; those using {skipped} "
                          "of the DSP budget are skipped")

    # --- enumeration -------------------------------------------------------------------------

    def _product(self, loops: list[int]) -> Iterator[tuple[int, Columns]]:
        """(size, columns) blocks of every combination of these loops' choices, lexicographic."""
        if not loops:
            yield 1, {}
            return
        split = len(loops)  # loops[split:] vary inside a block
        while split > 0 and math.prod(len(self.choices[k]) for k in loops[split - 1:]) <= self.block:
            split -= 1
        if split == len(loops):  # the last loop alone has more choices than a block: walk it in slices
            last = loops[-1]
            for outer in _lazy_product([self.choices[k] for k in loops[:-1]]):
                for chunk in _slices(self.choices[last], self.block):
                    table = np.array(chunk, dtype=np.int64)
                    columns = {name: table[:, c] for c, name in enumerate(_params(self.space.loops[last]))}
                    yield len(table), self._with_outer(columns, len(table), loops[:-1], outer)
            return
        inner: Columns = {}
        grids = np.meshgrid(*[np.arange(len(self.choices[k])) for k in loops[split:]], indexing="ij")
        for k, index in zip(loops[split:], grids):
            table = np.array(list(self.choices[k]), dtype=np.int64)[index.ravel()]
            for c, name in enumerate(_params(self.space.loops[k])):
                inner[name] = table[:, c]
        size = grids[0].size
        for outer in _lazy_product([self.choices[k] for k in loops[:split]]):
            yield size, self._with_outer(inner, size, loops[:split], outer)

    def _with_outer(self, inner: Columns, size: int, loops: list[int], outer: tuple) -> Columns:
        """The block's columns plus constant columns for the leading loops' choice."""
        columns = dict(inner)
        for k, values in zip(loops, outer):
            for name, v in zip(_params(self.space.loops[k]), values):
                columns[name] = np.full(size, v, dtype=np.int64)
        return columns

    def _enumerate(self) -> Iterator[Columns]:
        """Blocks of surviving configurations, in enumeration order."""
        rest = math.prod(len(self.choices[k]) for k in self.other_loops)
        rest_table = next(self._product(self.other_loops))[1] if rest <= self.block else None
        for size, columns in self._product(self.dsp_loops):
            self.enumerated += size * rest
            keep = self._keep(columns, size)
            if not keep.any():
                yield None  # a block wholly pruned: propose may stop here at the run's deadline
                continue
            kept = {name: values[keep] for name, values in columns.items()}
            n = int(np.count_nonzero(keep))
            if rest_table is not None:  # all completions of many DSP choices per block
                step = max(1, self.block // rest)
                for s in range(0, n, step):
                    count = min(step, n - s)
                    part = {name: np.repeat(values[s:s + count], rest) for name, values in kept.items()}
                    yield part | {name: np.tile(values, count) for name, values in rest_table.items()}
            else:  # many completions per DSP choice
                for row in range(n):
                    for rest_size, rest_columns in self._product(self.other_loops):
                        part = {name: np.full(rest_size, values[row]) for name, values in kept.items()}
                        yield part | rest_columns

    # --- pruning -----------------------------------------------------------------------------

    def _dsp_function(self):
        """The DSP count compiled over the parameters of the loops it mentions, and those loops."""
        expr = self.space.model.symbolic.resources["DSP"]
        used = {s.name for s in expr.free_symbols}
        if not used <= set(self.space.names):
            return None, list(range(len(self.space.loops)))
        loops = [k for k, g in enumerate(self.space.loops) if used & set(_params(g))]
        names = [n for k in loops for n in _params(self.space.loops[k])]
        return (names, lambdify([symbol(n) for n in names], expr, cse=False)), loops

    def dsp(self, columns: Columns, size: int | None = None) -> np.ndarray:
        """DSP count of a block (its columns must hold at least the DSP loops' parameters)."""
        if size is None:
            size = len(next(iter(columns.values())))
        if self._dsp is None:
            return self.space.model.evaluate_fast(columns)[1]
        names, function = self._dsp
        values = function(*[columns[n].astype(np.float64) for n in names])
        return np.rint(np.broadcast_to(np.asarray(values, dtype=np.float64), (size,)))

    def _keep(self, columns: Columns, size: int) -> np.ndarray:
        if self.threshold <= 0 and not self.over_budget:
            return np.ones(size, dtype=bool)
        dsp = self.dsp(columns, size)
        keep = dsp >= self.threshold * self.space.dsp_budget
        if self.over_budget:
            keep &= dsp <= self.space.dsp_budget
        return keep

    # --- strategy ----------------------------------------------------------------------------

    def _refill(self) -> bool:
        """Load the next block of survivors; False when the enumeration is over."""
        for columns in self._blocks:
            if columns is None:
                if time.perf_counter() >= self._deadline:
                    self._timed_out = True
                    return False
                continue
            self._buffer, self._position = columns, 0
            return True
        return False

    def start(self, *, time_limit: float, designs: int = 1) -> None:
        self._deadline = time.perf_counter() + time_limit

    def propose(self, n: int) -> Columns | None:
        parts: list[Columns] = []
        count = 0
        names = self.space.names
        while count < n:
            left = 0 if self._buffer is None else len(self._buffer[names[0]]) - self._position
            if left == 0:
                if not self._done and self._refill():
                    continue
                if self._timed_out and not self._done:
                    # the run's time is up while walking configurations the DSP bound prunes (a huge
                    # extent): stop rather than keep the run waiting for the next survivor
                    self._done = True
                    self.notes.append(f"exhaustive: the time budget ran out after {self.enumerated:.3g} of "
                                      f"{self.size:.3g} configurations, {self.kept + count} kept")
                elif not self._done and self.kept + count == 0 and self.threshold > 0:
                    self.notes.append(f"exhaustive: no configuration uses {self.threshold:.0%} of the DSP "
                                      "budget; enumerating again without that bound")
                    self.threshold, self.enumerated, self._blocks = 0.0, 0, self._enumerate()
                    continue
                elif not self._done:
                    self._done = True
                    self.notes.append(f"exhaustive: enumeration done, {self.kept + count} of "
                                      f"{self.size} configurations kept")
                break
            take = min(left, n - count)
            parts.append({name: self._buffer[name][self._position:self._position + take] for name in names})
            self._position += take
            count += take
        self.kept += count
        if not count:
            return None
        if len(parts) == 1:
            return parts[0]
        return {name: np.concatenate([p[name] for p in parts]) for name in names}

    def tell(self, configs: Columns, fitness: np.ndarray) -> None:
        pass
