"""The evolutionary search's schedule: polishing the best in large slices, starting again when stale."""
from __future__ import annotations

import numpy as np
import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.evolution import POLISH_SLICE, EvolutionarySearch
from engine.search.local_search import neighbourhood
from engine.search.space import SearchSpace


@pytest.fixture(scope="module")
def mm64():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    return SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), load_device()))


def _generation(search: EvolutionarySearch, space: SearchSpace):
    configs = search.propose(search.batch_size)
    search.tell(configs, space.evaluate(configs).fitness)
    return configs


def _rows(configs, space):
    return np.stack([configs[n] for n in space.names], axis=1)


def test_a_stale_best_gets_its_whole_neighbourhood_in_slices_larger_than_a_generation(mm64):
    search = EvolutionarySearch(mm64, seed=1, children=64, polish_after=2, patience=10**6)
    _generation(search, mm64)
    while search.stale < search.polish_after:
        _generation(search, mm64)
    best = search.genome.row(search.pop, 0)
    expected = {tuple(r) for r in neighbourhood(mm64, search.genome, best)}
    seen = {tuple(r) for r in _rows(search.propose(search.batch_size), mm64)}  # polishing starts here
    assert len(seen) == min(len(expected), POLISH_SLICE) > search.children
    while len(search.queue):
        seen |= {tuple(r) for r in _rows(search.propose(search.batch_size), mm64)}
    assert seen == expected
    assert search.batch_size == search.children


def test_after_patience_stale_generations_the_population_starts_again(mm64):
    search = EvolutionarySearch(mm64, seed=2, children=64, patience=5, polish_after=10**6, survivors=0)
    _generation(search, mm64)
    assert np.isfinite(search.best) and len(search.pop)
    children = search.propose(64)
    for _ in range(5):  # nothing improves: the same, already seen children again and again
        search.tell(children, np.full(64, np.inf))
    assert len(search.pop) == 0 and search.best == np.inf and search.stale == 0
    fresh = _rows(search.propose(64), mm64)  # random newcomers, not children of the old population
    assert len({tuple(r) for r in fresh}) > 32


def test_survivors_keep_the_best_through_a_restart(mm64):
    search = EvolutionarySearch(mm64, seed=3, children=64, patience=3, polish_after=10**6, survivors=2)
    _generation(search, mm64)
    best_row, best = search.pop[0].copy(), search.best
    children = search.propose(64)
    for _ in range(3):
        search.tell(children, np.full(64, np.inf))
    assert len(search.pop) == 2 and np.array_equal(search.pop[0], best_row) and search.best == best
