"""A network + N + candidate designs -> MultiArrayPlan: the device's budget split among N arrays, each
its own design and configuration, the layers cut into N consecutive stages, one per array.

The arrays form a pipeline: array k runs its stage's layers for image t while array k+1 runs the next
stage for image t-1, so a new image leaves every `interval` cycles, the slowest stage's latency (the
sum of its layers' latencies on its array). The network's throughput is its operations per interval.
Against the best single array (every layer on one array that owns the whole device) N arrays win when
the layers' shapes differ: each array's tiles fit its own layers, not the network's envelope.

Each array k owns a share s_k of the device (a fraction of every resource's budget; shares are
multiples of 1/steps and sum to at most 1) and is optimised for its stage with the project's tuner
under that share (single_array.optimise_single_array with `share`), for each candidate design; the
fastest design wins. Together the arrays must fit the device: their resources (each the largest over
its layers) are summed and judged by the model's `fits` at the whole device.

The plan is found by local search (`plan_pipeline`, independent of the models, so it is testable on
its own): stages balanced by MACs with shares in proportion, then rounds of three moves, each
evaluated as a whole plan, the best kept while the interval shrinks:
  - re-cut: stages balanced by each layer's measured work (its latency x its array's share: the
    cycles it would take on the whole device if work scaled with resources), shares in proportion;
  - re-share: one step of share from the fastest array to the slowest;
  - shift: the slowest stage gives its first or last layer to its neighbour.
Every (stage, share) is evaluated once (a cache); one round's evaluations are handed over together,
so a Dask cluster runs them side by side.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from engine.models.device import RESOURCE_NAMES

Stage = tuple[int, int]  # layers [first, last) in network order


@dataclass(frozen=True)
class ArrayResult:
    """One stage on one array at one share: the best candidate design's figures (latency inf: nothing fits)."""

    latency: float
    layer_latency: tuple[float, ...]  # per layer of the stage, in order
    design: str | None = None
    params: dict[str, int] | None = None
    resources: dict[str, float] | None = None


@dataclass(frozen=True)
class ArrayPlan:
    stage: Stage
    layers: tuple[str, ...]
    share: float
    result: ArrayResult


@dataclass(frozen=True)
class MultiArrayPlan:
    arrays: tuple[ArrayPlan, ...]
    interval_cycles: float  # the slowest stage: a new image every interval
    evaluations: int  # (stage, share) pairs evaluated while planning
    rounds: int
    history: tuple[float, ...] = field(default=())  # the interval after each round

    @property
    def used(self) -> dict[str, float]:
        return {r: sum((a.result.resources or {}).get(r, 0.0) for a in self.arrays) for r in RESOURCE_NAMES}


Evaluate = Callable[[list[tuple[Stage, float]]], list[ArrayResult]]


def balanced_stages(costs: Sequence[float], n: int) -> list[Stage]:
    """Cut the layers into n consecutive non-empty stages with the smallest largest stage cost
    (dynamic programming over the cut points; ties keep the earlier cuts)."""
    count = len(costs)
    if not 1 <= n <= count:
        raise ValueError(f"{n} stages of {count} layers: each stage needs at least one layer")
    prefix = [0.0]
    for c in costs:
        prefix.append(prefix[-1] + float(c))
    # best[k][j]: the smallest largest cost of the first j layers in k stages; cut[k][j] its last cut
    best = [[math.inf] * (count + 1) for _ in range(n + 1)]
    cut = [[0] * (count + 1) for _ in range(n + 1)]
    best[0][0] = 0.0
    for k in range(1, n + 1):
        for j in range(k, count - (n - k) + 1):
            for i in range(k - 1, j):
                value = max(best[k - 1][i], prefix[j] - prefix[i])
                if value < best[k][j]:
                    best[k][j], cut[k][j] = value, i
    stages, j = [], count
    for k in range(n, 0, -1):
        i = cut[k][j]
        stages.append((i, j))
        j = i
    return stages[::-1]


def quantised_shares(weights: Sequence[float], steps: int) -> list[float]:
    """Shares in multiples of 1/steps, each at least one step, summing to 1, as close to the weights'
    proportions as whole steps allow (largest remainders)."""
    n = len(weights)
    if steps < n:
        raise ValueError(f"{steps} share steps cannot give {n} arrays one step each")
    total = float(sum(weights))
    ideal = [steps / n] * n if total <= 0 else [steps * float(w) / total for w in weights]
    units = [max(1, int(math.floor(x))) for x in ideal]
    while sum(units) > steps:  # the one-step floors overshot: take from the largest
        k = max(range(n), key=lambda i: (units[i] - ideal[i], units[i]))
        units[k] -= 1
    order = sorted(range(n), key=lambda i: ideal[i] - units[i], reverse=True)
    k = 0
    while sum(units) < steps:
        units[order[k % n]] += 1
        k += 1
    return [u / steps for u in units]


class _Planner:
    def __init__(self, names: Sequence[str], evaluate: Evaluate):
        self.names = tuple(names)
        self.evaluate = evaluate
        self.cache: dict[tuple[Stage, float], ArrayResult] = {}

    def run(self, plans: list[tuple[list[Stage], list[float]]]) -> list[tuple[float, tuple[ArrayPlan, ...]]]:
        """Evaluate whole plans (stages, shares); the (stage, share) pairs not seen yet go out together."""
        wanted = list(dict.fromkeys((st, round(sh, 9)) for stages, shares in plans for st, sh in zip(stages, shares)
                                    if (st, round(sh, 9)) not in self.cache))
        if wanted:
            for key, result in zip(wanted, self.evaluate(wanted)):
                self.cache[key] = result
        out = []
        for stages, shares in plans:
            arrays = tuple(ArrayPlan(st, self.names[st[0]:st[1]], sh, self.cache[(st, round(sh, 9))])
                           for st, sh in zip(stages, shares))
            out.append((max(a.result.latency for a in arrays), arrays))
        return out


def plan_pipeline(names: Sequence[str], macs: Sequence[float], n: int, evaluate: Evaluate, *,
                  steps: int | None = None, rounds: int = 6) -> MultiArrayPlan:
    """The local search described in the module's docstring. `evaluate` takes [(stage, share)] and
    returns one ArrayResult each; `steps` (default 4n) sets the share grid."""
    steps = steps or 4 * n
    planner = _Planner(names, evaluate)
    stages = balanced_stages(macs, n)
    shares = quantised_shares([sum(macs[i:j]) for i, j in stages], steps)
    (interval, arrays), = planner.run([(stages, shares)])
    history = [interval]
    done = 0
    for done in range(1, rounds + 1):
        candidates = _moves(arrays, macs, n, steps)
        if not candidates:
            break
        found = min(planner.run(candidates), key=lambda c: c[0])
        if not found[0] < interval:
            break
        interval, arrays = found
        history.append(interval)
    return MultiArrayPlan(arrays, interval, len(planner.cache), done, tuple(history))


def _moves(arrays: tuple[ArrayPlan, ...], macs: Sequence[float], n: int, steps: int) -> list[tuple[list[Stage], list[float]]]:
    stages = [a.stage for a in arrays]
    shares = [a.share for a in arrays]
    latency = [a.result.latency for a in arrays]
    moves = []
    # re-cut by measured work; a stage without a fitting array counts its layers by MACs at the worst rate seen
    rates = [a.result.latency * a.share / sum(macs[a.stage[0]:a.stage[1]]) for a in arrays
             if math.isfinite(a.result.latency)]
    worst = max(rates) if rates else 1.0
    work = []
    for a in arrays:
        for k, index in enumerate(range(*a.stage)):
            finite = math.isfinite(a.result.latency)
            work.append(a.result.layer_latency[k] * a.share if finite else macs[index] * worst * 2)
    cut = balanced_stages(work, n)
    moves.append((cut, quantised_shares([sum(work[i:j]) for i, j in cut], steps)))
    # re-share: one step from the fastest array (that has a step to spare) to the slowest
    slow = max(range(n), key=lambda k: latency[k])
    spare = [k for k in range(n) if k != slow and shares[k] * steps > 1 + 1e-9]
    if spare:
        fast = min(spare, key=lambda k: latency[k])
        moved = list(shares)
        moved[fast] -= 1 / steps
        moved[slow] += 1 / steps
        moves.append((stages, moved))
    # shift: the slowest stage's edge layer to a neighbour
    first, last = stages[slow]
    if last - first > 1:
        if slow > 0:
            moved = list(stages)
            moved[slow - 1], moved[slow] = (moved[slow - 1][0], first + 1), (first + 1, last)
            moves.append((moved, shares))
        if slow < n - 1:
            moved = list(stages)
            moved[slow], moved[slow + 1] = (first, last - 1), (last - 1, moved[slow + 1][1])
            moves.append((moved, shares))
    seen, unique = set(), []
    for st, sh in moves:
        key = (tuple(st), tuple(round(s, 9) for s in sh))
        if key not in seen and (st, sh) != (stages, shares):
            seen.add(key)
            unique.append((st, sh))
    return unique
