"""Exploring a kernel: budget split across designs, best per design, Pareto sets, cancellation."""
from __future__ import annotations

import threading

import pytest

from engine.compiler.design_space import compile_kernel
from engine.errors import EngineError
from engine.models.device import load_device
from engine.resources import KERNELS
from engine.search.explore import Budget, explore
from engine.search.space import SearchSpace
from engine.models.evaluate import PerformanceModel


@pytest.fixture(scope="module")
def mm64():
    return compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])


def test_every_chosen_design_gets_its_share_and_a_feasible_best(mm64):
    designs = ["i-j__i-j.k", "i__i-j.k", "k__i-j.k"]
    result = explore(mm64, load_device(), method="evolution", budget=Budget(samples=3 * 2000), designs=designs)
    assert [d.design for d in result.designs] == designs
    for d in result.designs:
        assert 2000 <= d.samples < 2000 + 1024  # a generation may overshoot the share by less than its size
        space = SearchSpace(PerformanceModel(mm64, mm64.design(d.design), load_device()))
        assert space.evaluate([d.best.params]).feasible[0]
        assert d.best.latency_cycles == min(c.latency_cycles for c in d.pareto)
        for a in d.pareto:  # no member of the Pareto set dominates another
            for b in d.pareto:
                assert not (a is not b and a.latency_cycles <= b.latency_cycles and a.dsp <= b.dsp
                            and a.bram18k <= b.bram18k and (a.latency_cycles, a.dsp, a.bram18k)
                            != (b.latency_cycles, b.dsp, b.bram18k))
    assert result.best.best.latency_cycles == min(d.best.latency_cycles for d in result.designs)


def test_cancelling_stops_the_exploration(mm64):
    cancel = threading.Event()
    seen = []

    def stop_after_first(progress):
        seen.append(progress)
        cancel.set()

    result = explore(mm64, load_device(), method="random", budget=Budget(seconds=30), cancel_event=cancel,
                     callbacks=(stop_after_first,))
    assert len(result.designs) == 1 and result.designs[0].stopped == "cancelled"
    assert seen[0].design == mm64.designs[0].id


@pytest.mark.parametrize("budget", [dict(seconds=0), dict(samples=-5), dict()])
def test_budget_must_be_positive(budget):
    with pytest.raises(EngineError):
        Budget(**budget)


def test_unknown_method_and_design_are_errors(mm64):
    with pytest.raises(EngineError, match="unknown search method 'gradient'"):
        explore(mm64, load_device(), method="gradient", budget=Budget(samples=10))
    with pytest.raises(EngineError, match="no design 'x__y'"):
        explore(mm64, load_device(), method="random", budget=Budget(samples=10), designs=["x__y"])


def test_the_method_warms_up_before_each_design_starts(mm64, monkeypatch):
    """(SearchRun warms up before its clock starts; cheap after the first time.)"""
    from engine.search import explore as explore_module
    from engine.search.random_search import RandomSearch

    events = []

    class Recording(RandomSearch):
        @classmethod
        def warm_up(cls):
            events.append("warm up")

        def start(self, *, time_limit, designs=1):
            events.append(f"start {self.space.design.id}")

    monkeypatch.setattr(explore_module, "strategy_class", lambda method: Recording)
    explore(mm64, load_device(), method="random", budget=Budget(samples=2 * 64), designs=["i-j__i-j.k", "i__i-j.k"])
    assert events == ["warm up", "start i-j__i-j.k", "warm up", "start i__i-j.k"]


def test_checkpoints_hand_out_each_design_so_far(mm64):
    """Every checkpoint_every seconds (and on new bests) the design being searched comes out 'running',
    its samples growing; the last word on each design is its finished result."""
    seen, done = [], []
    designs = ["i-j__i-j.k", "k__i-j.k"]
    result = explore(mm64, load_device(), method="random", budget=Budget(seconds=3.0), designs=designs,
                     on_checkpoint=lambda position, r: seen.append((position, r)), on_design_done=done.append,
                     checkpoint_every=0.1)
    for position, design in enumerate(designs):
        mine = [r for p, r in seen if p == position]
        if result.designs[position].elapsed > 0.3:  # (building a design's model eats into its share)
            assert len(mine) >= 2
        assert all(r.design == design and r.stopped == "running" for r in mine)
        assert [r.samples for r in mine] == sorted(r.samples for r in mine)
        if not mine:
            continue
        assert mine[-1].samples <= result.designs[position].samples
        assert mine[-1].best is None or mine[-1].best.latency_cycles >= result.designs[position].best.latency_cycles
    assert seen and tuple(done) == result.designs
