"""The exhaustive search on huge extents: per-loop choices counted in O(sqrt N) and walked lazily (an
extent of 10^9 builds no table), exact against brute force on small extents; with the DSP pruning,
a run whose time is up while walking pruned configurations stops at its budget."""
from __future__ import annotations

import itertools
import tracemalloc

import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.exhaustive import ExhaustiveSearch, LoopChoices, _pair_count, loop_choices
from engine.search.genome import _divisors
from engine.search.run import SearchRun
from engine.search.space import LoopGenes, SearchSpace

HUGE = 10**9


def _space(n: int) -> SearchSpace:
    space = compile_kernel(KERNELS / "mm.c", defines=[f"I={n}", f"J={n}", f"K={n}"])
    return SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), load_device()))


@pytest.fixture(scope="module")
def huge():
    return _space(HUGE)


@pytest.mark.parametrize("extent, upper, simd", [(1, 1, False), (60, 60, False), (97, 7, False), (200, 13, False),
                                                 (64, 16, True), (100, 8, True), (30, 100, False)])
def test_choices_match_brute_force(extent, upper, simd):
    genes = LoopGenes("i", extent, "i_t1", "i_t2", simd, upper)
    brute = [(t1, t2) for t1 in range(1, extent + 1) for t2 in _divisors(t1)
             if t2 <= upper and (not simd or t2 & (t2 - 1) == 0)]
    choices = loop_choices(genes)
    assert list(choices) == brute and len(choices) == len(brute)
    assert choices[len(brute) // 2] == brute[len(brute) // 2]
    single = loop_choices(LoopGenes("i", extent, "i_t1", None, False, 1))
    assert list(single) == [(t1,) for t1 in range(1, extent + 1)] and len(single) == extent


def test_a_huge_extent_is_counted_not_built():
    tracemalloc.start()
    try:
        choices = loop_choices(LoopGenes("k", HUGE, "k_t1", "k_t2", False, HUGE))
        first = list(itertools.islice(choices, 5))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert first == [(1, 1), (2, 1), (2, 2), (3, 1), (3, 3)]
    assert len(choices) == 20_877_697_634  # the divisor summatory function D(10^9) (OEIS A057494)
    assert _pair_count(10**6, 10**6, False) == 13_970_034  # D(10^6)
    assert peak < 1 << 20
    with pytest.raises(IndexError, match="too many to index"):
        choices[0]
    assert len(LoopChoices(LoopGenes("k", HUGE, "k_t1", "k_t2", True, 16))) == sum(HUGE >> b for b in range(5))


def test_exhaustive_without_pruning_proposes_from_a_huge_space(huge):
    tracemalloc.start()
    try:
        strategy = ExhaustiveSearch(huge, threshold=0.0, over_budget=False)
        batch = strategy.propose(1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(batch["k_t1"]) == 1024 and strategy.size > HUGE ** 3
    assert [int(batch[n][0]) for n in huge.names] == [1] * len(huge.names)
    assert peak < 64 << 20  # blocks of 2^16 configurations, no table of the loops


def test_a_run_with_pruning_stops_at_its_budget_on_a_huge_space(huge):
    strategy = ExhaustiveSearch(huge)
    result = SearchRun(huge, strategy, seconds=1.0).run()
    assert any("time budget ran out" in note for note in strategy.notes), strategy.notes
    assert strategy.enumerated < strategy.size
    assert result is not None
