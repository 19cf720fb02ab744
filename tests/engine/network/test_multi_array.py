"""The multi-array planner: consecutive stages, shares of the device, and the local search that
balances a pipeline (on an evaluator whose answer is known: latency = work / share)."""
from __future__ import annotations

import itertools
import math

import pytest

from engine.network.multi_array import ArrayResult, balanced_stages, plan_pipeline, quantised_shares


def brute_force(costs, n):
    best = math.inf
    for cuts in itertools.combinations(range(1, len(costs)), n - 1):
        edges = (0, *cuts, len(costs))
        best = min(best, max(sum(costs[a:b]) for a, b in zip(edges, edges[1:])))
    return best


@pytest.mark.parametrize("costs", [[5, 1, 1, 1, 5], [1, 2, 3, 4, 5, 6, 7], [9, 1, 9, 1, 9], [3, 3, 3, 3]])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_balanced_stages_cover_the_layers_in_order_with_the_smallest_largest_stage(costs, n):
    stages = balanced_stages(costs, n)
    assert stages[0][0] == 0 and stages[-1][1] == len(costs)
    assert all(a[1] == b[0] for a, b in zip(stages, stages[1:])) and all(i < j for i, j in stages)
    assert max(sum(costs[i:j]) for i, j in stages) == brute_force(costs, n)


def test_more_stages_than_layers_is_refused():
    with pytest.raises(ValueError, match="at least one layer"):
        balanced_stages([1, 2], 3)


@pytest.mark.parametrize("weights,steps", [([1, 1], 8), ([10, 1, 1], 12), ([0.001, 5, 5, 5], 16), ([0, 0, 0], 9)])
def test_shares_are_whole_steps_at_least_one_each_summing_to_one(weights, steps):
    shares = quantised_shares(weights, steps)
    assert sum(shares) == pytest.approx(1.0)
    assert all(s >= 1 / steps - 1e-12 and abs(s * steps - round(s * steps)) < 1e-9 for s in shares)
    total = sum(weights)
    if total:
        for s, w in zip(shares, weights):  # within one step of proportion, unless lifted to the one-step floor
            assert abs(s - w / total) <= 1 / steps + 1e-9 or s == pytest.approx(1 / steps)


def ideal_evaluator(work, calls=None, fits_from=0.0):
    """latency of a stage = its work / share (resources scale perfectly); nothing fits below `fits_from`."""
    def evaluate(requests):
        if calls is not None:
            calls.append(len(requests))
        out = []
        for (i, j), share in requests:
            if share < fits_from:
                out.append(ArrayResult(math.inf, tuple(math.inf for _ in range(i, j))))
                continue
            per = tuple(w / share for w in work[i:j])
            out.append(ArrayResult(sum(per), per, "d", {"x": 1}, {"DSP": 100 * share}))
        return out
    return evaluate


def test_the_plan_reaches_the_balanced_pipeline_when_work_scales_with_the_share():
    work = [4, 8, 2, 6, 12, 1, 3]
    names = [f"l{k}" for k in range(len(work))]
    calls = []
    plan = plan_pipeline(names, macs=[1] * len(work), n=3, evaluate=ideal_evaluator(work, calls), steps=36)
    # perfectly balanced: every stage's work / share equal to the total work
    assert plan.interval_cycles == pytest.approx(sum(work), rel=0.15)
    assert plan.interval_cycles <= plan.history[0] and list(plan.history) == sorted(plan.history, reverse=True)
    assert [n for a in plan.arrays for n in a.layers] == names
    assert sum(a.share for a in plan.arrays) == pytest.approx(1.0)
    assert plan.evaluations == sum(calls)  # each (stage, share) evaluated once


def test_an_array_that_fits_nowhere_gets_more_of_the_device():
    work = [1, 1, 1, 1]
    plan = plan_pipeline(list("abcd"), macs=[1, 1, 1, 1], n=2, evaluate=ideal_evaluator(work, fits_from=0.5), steps=8)
    assert math.isfinite(plan.interval_cycles)
    assert all(a.share >= 0.5 for a in plan.arrays)


def test_one_array_is_the_single_array():
    plan = plan_pipeline(list("abc"), macs=[1, 2, 3], n=1, evaluate=ideal_evaluator([1, 2, 3]))
    assert len(plan.arrays) == 1 and plan.arrays[0].share == 1.0 and plan.interval_cycles == 6
    assert plan.used["DSP"] == 100
