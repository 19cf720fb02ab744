"""HybridSearch's MP seed rule, the one every caller (`systolic search`, the window's search process,
network pairs) goes through: SCIP is bounded by nodes, so the seed is the same at any load; a design's
budget too short to afford the solve gets no seed at all."""
from __future__ import annotations

import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.evolution import MP_MIN_RUN_SECONDS, MP_MIN_SECONDS, MP_MIN_SHARE, MP_NODES, HybridSearch
from engine.search.methods import strategy_class
from engine.search.space import SearchSpace


@pytest.fixture(scope="module")
def mm():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=256", "J=256", "K=256"])
    return SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), load_device()))


def test_the_method_table_builds_a_node_bounded_hybrid(mm):
    strategy = strategy_class("hybrid")(mm, seed=0)
    assert strategy.mp_nodes == MP_NODES


def test_a_short_budget_solves_no_seed(mm):
    strategy = HybridSearch(mm, seed=0)
    strategy.start(time_limit=MP_MIN_SECONDS / 2)
    assert strategy.pending is None
    note, = strategy.notes
    assert note.startswith(f"MP seed: skipped: {MP_MIN_SECONDS / 2:.2g} s per design is under the "
                           f"{MP_MIN_SECONDS:.2g} s from which the solver step runs (one design)"), note


def test_the_threshold_scales_with_the_designs_sharing_the_run():
    assert HybridSearch.mp_threshold(1) == MP_MIN_SECONDS
    assert HybridSearch.mp_threshold(6) == MP_MIN_RUN_SECONDS / 6
    assert HybridSearch.mp_threshold(1000) == MP_MIN_SHARE
    assert HybridSearch.mp_threshold(27) <= 18 / 27 < MP_MIN_SECONDS  # the README's first command seeds every design
    assert HybridSearch.mp_threshold(27) > 6 / 27  # a 6 s run over 27 designs does not


def test_a_design_among_many_is_seeded_from_a_shorter_share_and_says_why_not_below(mm):
    seeded = HybridSearch(mm, seed=0)
    seeded.start(time_limit=18 / 27, designs=27)
    assert seeded.pending is not None, seeded.notes
    skipped = HybridSearch(mm, seed=0)
    skipped.start(time_limit=6 / 27, designs=27)
    assert skipped.pending is None
    assert f"({MP_MIN_RUN_SECONDS:g} s over 27 designs, at least {MP_MIN_SHARE:g} s each)" in skipped.notes[0]


def test_a_long_budget_gets_the_same_seed_every_time(mm):
    seeds = []
    for _ in range(2):
        strategy = HybridSearch(mm, seed=0)
        strategy.start(time_limit=MP_MIN_SECONDS)
        assert strategy.pending is not None, strategy.notes
        seeds.append(strategy.pending.tolist())
    assert seeds[0] == seeds[1]
