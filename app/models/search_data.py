"""Progress snapshots (live) or a stored run -> the series the search plots draw: best throughput
against time per design and overall, samples per second, and the (latency, DSP) points seen with
their Pareto front. Plain Python and numpy, no Qt, so tests check the numbers directly."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from engine.search.progress import ExplorationResult, Progress

MAX_POINTS = 1500
RATE_WINDOW = 1.0  # seconds  # scatter points kept; beyond this every other point is dropped


class Series(NamedTuple):
    t: np.ndarray
    y: np.ndarray


class PlotData(NamedTuple):
    per_design: dict[str, Series]  # best throughput (GOP/s) against seconds since the start
    overall: Series
    rate: Series  # samples per second
    points: np.ndarray  # (n, 2): latency cycles, DSP
    front: np.ndarray  # (m, 2): the points no other point beats on both, by increasing DSP


def pareto_front(points: np.ndarray) -> np.ndarray:
    """Points (latency, DSP) not dominated by another (both lower or equal, one lower), by DSP."""
    if len(points) == 0:
        return np.empty((0, 2))
    ordered = points[np.lexsort((points[:, 0], points[:, 1]))]  # by DSP, then latency
    best_before = np.concatenate(([np.inf], np.minimum.accumulate(ordered[:, 0])[:-1]))
    return ordered[ordered[:, 0] < best_before]


@dataclass
class SearchTraces:
    """Accumulates worker ticks: each tick is the snapshots that arrived and the wall time since start."""

    best: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    overall: list[tuple[float, float]] = field(default_factory=list)
    rate: list[tuple[float, float]] = field(default_factory=list)
    samples: dict[str, int] = field(default_factory=dict)
    latest: dict[str, Progress] = field(default_factory=dict)
    _points: list[tuple[float, float]] = field(default_factory=list)
    _last: tuple[float, int] = (0.0, 0)
    _totals: list[tuple[float, int]] = field(default_factory=lambda: [(0.0, 0)])

    def add(self, snapshots: list[Progress], elapsed: float) -> None:
        for p in snapshots:
            self.latest[p.design] = p
            self.samples[p.design] = p.samples
            self._points.extend(p.recent)
            if p.best is None:
                continue
            trace = self.best.setdefault(p.design, [])
            if not trace or p.best.throughput_gops > trace[-1][1]:
                trace.append((elapsed, p.best.throughput_gops))
                if not self.overall or p.best.throughput_gops > self.overall[-1][1]:
                    self.overall.append((elapsed, p.best.throughput_gops))
        if len(self._points) > MAX_POINTS:
            self._points = self._points[::2]
        total = sum(self.samples.values())
        if elapsed > self._last[0]:
            # the rate over the last RATE_WINDOW seconds: per-tick counts are too bursty to read
            self._totals.append((elapsed, total))
            while len(self._totals) > 2 and elapsed - self._totals[1][0] >= RATE_WINDOW:
                self._totals.pop(0)
            t0, n0 = self._totals[0]
            self.rate.append((elapsed, (total - n0) / (elapsed - t0)))
            self._last = (elapsed, total)

    @property
    def duration(self) -> float:
        return self._last[0]

    @property
    def total_samples(self) -> int:
        return sum(self.samples.values())

    def plot_data(self, now: float | None = None, *, points: bool = True, extend=None) -> PlotData:
        """`now` extends the best-so-far lines to the current time (a step that has not moved): the
        overall line and those of the designs in `extend` (every design when None);
        `points=False` leaves the scatter out (empty), for the ticks that do not redraw it."""
        def series(pairs, grow=True):
            if not pairs:
                return Series(np.empty(0), np.empty(0))
            if grow and now is not None and now > pairs[-1][0]:
                pairs = [*pairs, (now, pairs[-1][1])]
            t, y = zip(*pairs)
            return Series(np.array(t), np.array(y))
        points = np.array(self._points) if self._points and points else np.empty((0, 2))
        return PlotData({d: series(v, extend is None or d in extend) for d, v in self.best.items()},
                        series(self.overall),
                        series(self.rate) if self.rate else Series(np.empty(0), np.empty(0)),
                        points, pareto_front(points))

    @classmethod
    def from_result(cls, result: ExplorationResult) -> SearchTraces:
        """A stored run replotted: designs ran one after another, so their clocks are chained; the
        throughput of a trace point follows from the best's (throughput is inversely proportional
        to latency); the scatter shows the stored Pareto sets."""
        traces, offset, total = cls(), 0.0, 0
        for d in result.designs:
            if d.best is not None:
                scale = d.best.throughput_gops * d.best.latency_cycles
                for point in d.trace:
                    if point.best_latency:
                        gops = scale / point.best_latency
                        traces.best.setdefault(d.design, []).append((offset + point.elapsed, gops))
                        if not traces.overall or gops > traces.overall[-1][1]:
                            traces.overall.append((offset + point.elapsed, gops))
                traces._points.extend((c.latency_cycles, c.dsp) for c in d.pareto)
            total += d.samples
            offset += d.elapsed
            traces.samples[d.design] = d.samples
            if d.elapsed > 0:
                traces.rate.append((offset, d.samples / d.elapsed))
        traces._last = (offset, total)
        return traces
