"""HybridSearch's MP seed rule, the one every caller (`systolic search`, the window's search process,
network pairs) goes through: SCIP is bounded by nodes, so the seed is the same at any load; a design's
budget too short to afford the solve gets no seed at all."""
from __future__ import annotations

import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.evolution import MP_MIN_SECONDS, MP_NODES, HybridSearch
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
    assert strategy.notes == [f"MP seed: none under {MP_MIN_SECONDS:g} s per design"]


def test_a_long_budget_gets_the_same_seed_every_time(mm):
    seeds = []
    for _ in range(2):
        strategy = HybridSearch(mm, seed=0)
        strategy.start(time_limit=MP_MIN_SECONDS)
        assert strategy.pending is not None, strategy.notes
        seeds.append(strategy.pending.tolist())
    assert seeds[0] == seeds[1]
