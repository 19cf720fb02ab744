"""The search child's budget: designs run one after another, each on an even share of what is left
of the budget (model building included), so one design's overrun is taken from the next ones, and
the designs the budget does not reach are reported as skipped. A fake clock and a fake explore()
check the logic without timing anything."""
from __future__ import annotations

import threading

import pytest

from app.workers import search_process
from app.workers.search_process import (
    MIN_DESIGN_SECONDS,
    SearchRequest,
    design_seconds,
    run_search,
)
from engine.search.progress import DesignResult, ExplorationResult


def test_a_design_gets_an_even_share_of_what_is_left():
    assert design_seconds(deadline=10.0, now=4.0, designs_left=3) == pytest.approx(2.0)
    assert design_seconds(deadline=10.0, now=9.0, designs_left=1) == pytest.approx(1.0)
    assert design_seconds(deadline=10.0, now=10.0 - MIN_DESIGN_SECONDS / 2, designs_left=1) is None
    assert design_seconds(deadline=10.0, now=11.0, designs_left=2) is None
    assert design_seconds(deadline=10.0, now=0.0, designs_left=0) is None


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


class FakeExplore:
    """Takes `took[design]` seconds of the fake clock, or its whole share if that is longer."""

    def __init__(self, clock: FakeClock, took: dict[str, float]):
        self.clock, self.took, self.calls = clock, took, []

    def __call__(self, space, device, *, method, budget, designs, seed, cancel_event, callbacks):
        (design,) = designs
        self.calls.append((design, budget.seconds, seed))
        spent = max(self.took.get(design, 0.0), budget.seconds)
        self.clock.now += spent
        return ExplorationResult(space.kernel.name, method, seed,
                                 (DesignResult(design, method, 10, spent, None, ()),))


class ListQueue:
    def __init__(self):
        self.messages = []

    def put(self, message):
        self.messages.append(message)


@pytest.fixture
def fake_search(monkeypatch, small_mm):
    clock = FakeClock()
    monkeypatch.setattr(search_process, "time", clock)

    def run(seconds: float, took: dict[str, float], designs: tuple[str, ...], seed: int = 5):
        fake = FakeExplore(clock, took)
        monkeypatch.setattr(search_process, "explore", fake)
        queue = ListQueue()
        request = SearchRequest(str(small_mm), {}, "u250", "hybrid", seconds, designs, seed=seed)
        run_search(request, queue, threading.Event())
        return fake.calls, queue.messages

    return run


DESIGNS = ("i__i-j.k", "j__i-j.k", "i-j__i-j.k", "i-k__i-k.j")


def test_time_a_design_overran_is_taken_from_the_next_designs(fake_search):
    calls, messages = fake_search(10.0, {"i__i-j.k": 4.0}, DESIGNS)
    assert [(d, round(s, 6), seed) for d, s, seed in calls] == \
        [("i__i-j.k", 2.5, 5), ("j__i-j.k", 2.0, 6), ("i-j__i-j.k", 2.0, 7), ("i-k__i-k.j", 2.0, 8)]
    kinds = [kind for kind, _ in messages]
    assert kinds == ["design"] * 4 + ["result"]
    assert [d.design for d in messages[-1][1].designs] == list(DESIGNS)


def test_designs_the_budget_does_not_reach_are_reported_as_skipped(fake_search):
    calls, messages = fake_search(10.0, {"j__i-j.k": 9.0}, DESIGNS)
    assert [d for d, _, _ in calls] == ["i__i-j.k", "j__i-j.k"]
    assert messages[2] == ("skipped", ("i-j__i-j.k", "i-k__i-k.j"))
    kind, result = messages[-1]
    assert kind == "result" and [d.design for d in result.designs] == ["i__i-j.k", "j__i-j.k"]


def test_every_design_when_none_is_chosen_and_unknown_ids_are_an_error(fake_search):
    calls, messages = fake_search(36.0, {}, ())
    assert len(calls) == 18 and sum(s for _, s, _ in calls) == pytest.approx(36.0)
    calls, messages = fake_search(10.0, {}, ("i__i-j.k", "no-such-design"))
    assert calls == [] and messages[0][0] == "error" and "no-such-design" in messages[0][1]
