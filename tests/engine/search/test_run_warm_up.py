"""A run's budget starts with its first sample: the strategy's process start-up (imports, compiled
Pareto sweeps; seconds on a busy machine the first time) happens before the clock starts, so the
first design or method of a study or a search gets the same budget as the others. The clock here is
a fake one that only the warm-up moves: no wall-clock time is measured."""
from __future__ import annotations

import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search import run as run_module
from engine.search.random_search import RandomSearch
from engine.search.run import SearchRun
from engine.search.space import SearchSpace


@pytest.fixture(scope="module")
def space():
    kernel = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    return SearchSpace(PerformanceModel(kernel, kernel.design("i-j__i-j.k"), load_device()))


def test_the_warm_up_is_not_charged_to_the_budget(space, monkeypatch):
    clock = [0.0]
    events = []
    monkeypatch.setattr(run_module.time, "perf_counter", lambda: clock[0])

    class SlowStartUp(RandomSearch):
        @classmethod
        def warm_up(cls) -> None:  # e.g. pyomo's first import: 100 "seconds"
            events.append("warm up")
            clock[0] += 100.0

        def start(self, *, time_limit: float, designs: int = 1) -> None:
            events.append("start")

    result = SearchRun(space, SlowStartUp(space, seed=0), seconds=1.0, samples=640, batch=64).run()
    assert events == ["warm up", "start"]
    assert result.samples == 640 and result.elapsed == 0.0  # the whole sample budget: the clock never moved after
