"""SearchRun: the loop around one strategy on one design. It owns the budget (seconds and/or
samples), the cancel flag, the best feasible configuration, the Pareto set and the trace, and hands
callbacks an immutable Progress after each batch (at most every `report_every` seconds). With a
`checkpoint`, it also hands out the design's result so far (a DesignResult stopped "running"):
every `checkpoint_every` seconds, and on a new best when the last one is CHECKPOINT_GAP old, so
whoever stores it loses at most a few seconds of search to a kill."""
from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np

from engine.search import pareto
from engine.search.pareto import merge_batch
from engine.search.progress import Candidate, DesignResult, Progress, TracePoint
from engine.search.space import SearchSpace, batch_row, batch_size
from engine.search.strategy import SearchStrategy

Callback = Callable[[Progress], None]
Checkpoint = Callable[[DesignResult], None]
SAMPLES_ONLY_TIME_LIMIT = 10.0
CHECKPOINT_EVERY = 2.0  # seconds between checkpoints at most
CHECKPOINT_GAP = 0.25  # seconds between checkpoints at least (a new best early on comes every batch)
RECENT_POINTS = 256  # per progress snapshot, see Progress.recent


class SearchRun:
    def __init__(self, space: SearchSpace, strategy: SearchStrategy, *, seconds: float | None = None,
                 samples: int | None = None, batch: int = 64, callbacks: tuple[Callback, ...] = (),
                 report_every: float = 0.1, cancel_event: threading.Event | None = None,
                 checkpoint: Checkpoint | None = None, checkpoint_every: float = CHECKPOINT_EVERY,
                 designs: int = 1):
        if seconds is None and samples is None:
            raise ValueError("a search needs a budget: seconds or samples")
        self.space, self.strategy = space, strategy
        self.seconds, self.samples_budget, self.batch = seconds, samples, batch
        self.callbacks, self.report_every = callbacks, report_every
        self.checkpoint, self.checkpoint_every = checkpoint, checkpoint_every
        self.designs = designs  # how many designs share the run's budget (the strategy's start may care)
        self.cancel_event = cancel_event or threading.Event()
        self.samples = 0
        self.best: Candidate | None = None
        self.best_objective = np.inf  # equals best.latency_cycles unless the space minimises something else
        self.trace: list[TracePoint] = []
        self._pareto = np.empty((0, 3))
        self._pareto_configs: list[dict] = []
        self._recent: list[np.ndarray] = []

    def cancel(self) -> None:
        self.cancel_event.set()

    def _left(self, start: float) -> bool:
        if self.cancel_event.is_set():
            return False
        # one batch at least (milliseconds), even when the strategy's start (an MP solve, its first
        # import of pyomo) spent a short budget: a design searched is never reported without samples
        if self.seconds is not None and time.perf_counter() - start >= self.seconds and self.samples:
            return False
        return self.samples_budget is None or self.samples < self.samples_budget

    def run(self) -> DesignResult:
        # process start-up (compiled Pareto sweeps, the strategy's imports: about a second the first
        # time, nothing after) is never charged to a budget: whichever design or method runs first in a
        # process gets the same time as the others (a study's first run used to lose most of it)
        # (what this run's start needs: a hybrid run that solves no MP seed does not import the solver)
        time_limit = self.seconds if self.seconds is not None else SAMPLES_ONLY_TIME_LIMIT
        pareto.warm_up()
        self.strategy.warm_up_for(time_limit=time_limit, designs=self.designs)
        start = time.perf_counter()
        # a samples-only budget still bounds what a strategy may spend up front (e.g. an MP solve)
        self.strategy.start(time_limit=time_limit, designs=self.designs)
        last_report, last_checkpoint, stopped = -1.0, 0.0, "budget"
        while self._left(start):
            want = getattr(self.strategy, "batch_size", self.batch)
            n = want if self.samples_budget is None else min(want, self.samples_budget - self.samples)
            configs = self.strategy.propose(n)
            if configs is None or batch_size(configs) == 0:
                stopped = "exhausted"
                break
            batch = self.space.evaluate(configs)
            fitness = batch.fitness
            self.strategy.tell(configs, fitness)
            self.samples += batch_size(configs)
            improved = self._record(configs, batch, fitness, time.perf_counter() - start)
            now = time.perf_counter() - start
            if now - last_report >= self.report_every:
                last_report = now
                self._report(now)
            since = now - last_checkpoint
            if self.checkpoint is not None and (since >= self.checkpoint_every or (improved and since >= CHECKPOINT_GAP)):
                last_checkpoint = now
                self.checkpoint(self.result(now, "running"))
        if self.cancel_event.is_set():
            stopped = "cancelled"
        elapsed = time.perf_counter() - start
        self._report(elapsed)
        return self.result(elapsed, stopped)

    def result(self, elapsed: float, stopped: str) -> DesignResult:
        """The design's result so far: best, trace, Pareto set and notes."""
        return DesignResult(self.space.design.id, self.strategy.name, self.samples, elapsed, self.best,
                            tuple(self.trace), self.pareto(), tuple(self.strategy.notes), stopped)

    def _record(self, configs, batch, fitness, elapsed: float) -> bool:
        """Take a batch in; True when it holds a new best."""
        feasible = np.flatnonzero(np.isfinite(fitness))
        improved = False
        if feasible.size:
            k = int(feasible[np.argmin(fitness[feasible])])
            if fitness[k] < self.best_objective:
                self.best_objective = float(fitness[k])
                self.best = self.space.candidate(batch_row(configs, k), batch.latency[k], batch.dsp[k], batch.bram[k])
                self.trace.append(TracePoint(self.samples, elapsed, self.best.latency_cycles))
                improved = True
            self._update_pareto(configs, batch, feasible)
            self._recent.append(np.stack([batch.latency[feasible], batch.dsp[feasible]], axis=1))
        return improved

    def _update_pareto(self, configs, batch, feasible) -> None:
        points = np.stack([batch.latency[feasible], batch.dsp[feasible], batch.bram[feasible]], axis=1)
        staying, joining = merge_batch(self._pareto, points)
        if not len(joining):
            return
        self._pareto = np.vstack([self._pareto[staying], points[joining]])
        self._pareto_configs = ([self._pareto_configs[i] for i in staying]
                                + [batch_row(configs, i) for i in feasible[joining]])

    def pareto(self) -> tuple[Candidate, ...]:
        order = np.argsort(self._pareto[:, 0]) if len(self._pareto) else []
        return tuple(self.space.candidate(self._pareto_configs[i], *self._pareto[i]) for i in order)

    def _recent_points(self) -> tuple[tuple[float, float], ...]:
        if not self._recent:
            return ()
        points = np.vstack(self._recent)
        self._recent = []
        if len(points) > RECENT_POINTS:
            points = points[np.linspace(0, len(points) - 1, RECENT_POINTS).astype(int)]
        return tuple((float(lat), float(dsp)) for lat, dsp in points)

    def _report(self, elapsed: float) -> None:
        progress = Progress(self.space.design.id, self.strategy.name, self.samples, elapsed, self.best,
                            "; ".join(self.strategy.notes), self._recent_points())
        for callback in self.callbacks:
            callback(progress)

