"""SearchSession: one live or reopened search -> its traces (SearchTraces), the designs' status and
the stored run. It starts and stops the SearchWorker and stores finished or stopped runs in the
RunStore. Evented: `ticked(snapshots)`, `designFinished(result)`,
`phaseChanged()` (what the search process prepares, then the budget start), `stateChanged()`.

The session owns the search process (SearchHost): `prepare()` starts it (the window does when it
opens, so its warm-up is over before the first Start) and a process lost to a hard stop is replaced
at once; `prepare(source, design)` also has it compile the kernel and load the first design's model
while the person reads the tree (the window does after each compile). The budget is sampling time or a sample count (see app.workers.search_process)."""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.models.search_data import SearchTraces
from app.workers.kernel_source import KernelSource
from app.workers.search_process import Prepare, SearchHost, SearchRequest, start_search_host
from app.workers.search_worker import SearchWorker
from engine.search.progress import ExplorationResult
from engine.search.store import RunStore, StoredRun


class SearchSession(QObject):
    ticked = Signal(list)  # Progress snapshots of the latest tick
    designFinished = Signal(object)  # DesignResult
    stateChanged = Signal()  # started, stopped, finished, replayed or failed
    phaseChanged = Signal()  # `phase` changed (the budget started: phase == "searching")

    def __init__(self, parent=None, host: SearchHost | None = None):
        """`host`: a search process already started (the window starts it before building the session)."""
        super().__init__(parent)
        self.traces = SearchTraces()
        self.elapsed = 0.0
        self.budget = 0.0  # seconds of the running (or last) search; 0 with a sample budget
        self.samples_budget: int | None = None  # samples of the running (or last) search, if so budgeted
        self.worker: SearchWorker | None = None
        self.result: ExplorationResult | None = None
        self.status = "idle"  # idle, running, stopping, finished, interrupted, failed, replayed
        self.message = ""
        self.run_ids: list[int] = []
        self.database: str | None = None  # None: the default run database
        self.host: SearchHost | None = host
        self.phase = ""  # what the search process is doing before the budget starts, then "searching"
        self.budget_started_at: float | None = None  # perf_counter when the budget started

    def prepare(self, source: KernelSource | None = None, design: str | None = None,
                cache_folder: str | None = None) -> None:
        """Start the search process (it warms up in the background) unless one is alive; with a
        `source` and a `design`, have it compile the kernel and load (or build) that design's model
        (None cache folder: the default model cache)."""
        if self.host is None or not self.host.alive:
            if self.host is not None:
                self.host.close()
            self.host = start_search_host()
        if source is not None and design is not None:
            self.host.prepare(Prepare(source, design, cache_folder))

    @property
    def warm(self) -> bool:
        return self.host is not None and self.host.ready.is_set()

    def budget_fraction(self) -> float:
        """The share of the running search's budget spent (0 before the budget starts)."""
        if self.budget_started_at is None:
            return 0.0
        if self.samples_budget:
            return min(1.0, self.traces.total_samples / self.samples_budget)
        if self.budget <= 0:
            return 0.0
        return min(1.0, (time.perf_counter() - self.budget_started_at) / self.budget)

    def budget_text(self) -> str:
        """The budget in a few words: "6 s" or "2,000 samples"."""
        return f"{self.samples_budget:,} samples" if self.samples_budget else f"{self.budget:g} s"

    @property
    def running(self) -> bool:
        return self.worker is not None

    def start(self, request: SearchRequest, *, kernel_text: str, sizes: dict[str, int], kernel_name: str,
              kernel_path: str | None = None) -> None:
        """`kernel_path`: the file the run is stored under (the request may point at a work copy)."""
        if self.running:
            return
        self.traces, self.elapsed, self.result, self.message = SearchTraces(), 0.0, None, ""
        self.budget, self.samples_budget = request.seconds or 0.0, request.samples
        self.budget_started_at, self.phase = None, "starting the search"
        record = {"kernel": kernel_name, "kernel_path": kernel_path or request.source.file_name,
                  "kernel_text": kernel_text, "sizes": sizes, "database": self.database}
        self.prepare()
        self.worker = SearchWorker(self.host, request, record)
        self.worker.phase.connect(self._phase)
        self.worker.budgetStarted.connect(self._budget_started)
        self.worker.ticked.connect(self._tick)
        self.worker.designDone.connect(self.designFinished)
        self.worker.searchFinished.connect(self._finished)
        self.status = "running"
        self.worker.start()
        self.stateChanged.emit()

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.status = "stopping"
            self.stateChanged.emit()

    def shutdown(self, timeout_ms: int = 2000) -> None:
        """Stop and wait for the worker, end the search process (the window is closing)."""
        if self.worker is not None:
            self.worker.stop()
            self.worker.wait(timeout_ms)
        if self.host is not None:
            self.host.close()
            self.host = None

    def _phase(self, text: str) -> None:
        self.phase = text
        self.phaseChanged.emit()

    def _budget_started(self) -> None:
        self.budget_started_at, self.phase = time.perf_counter(), "searching"
        self.phaseChanged.emit()

    def _tick(self, snapshots: list, elapsed: float) -> None:
        self.elapsed = elapsed
        self.traces.add(snapshots, elapsed)
        self.ticked.emit(snapshots)

    def _finished(self, result: ExplorationResult, status: str, error: str) -> None:
        worker, self.worker = self.worker, None
        worker.wait()
        worker.deleteLater()
        if worker.host_lost and self.host is worker.host:
            self.host = None
            self.prepare()  # a fresh process warms up for the next search
        self.phase = ""
        self.result, self.status, self.message = result, ("failed" if error and not result.designs else status), error
        if worker.run_id is not None:
            self.run_ids.append(worker.run_id)
        self.stateChanged.emit()

    def clear(self) -> None:
        """Forget the shown search (another kernel was opened)."""
        if self.running:
            return
        self.traces, self.elapsed, self.result, self.message, self.status = SearchTraces(), 0.0, None, "", "idle"
        self.stateChanged.emit()

    def load_run(self, run_id: int) -> StoredRun:
        with RunStore(self.database) as store:
            return store.load(run_id)

    def replay(self, run: StoredRun) -> None:
        """Show a stored run's traces as if it had just run."""
        self.traces = SearchTraces.from_result(run.result)
        self.result, self.status = run.result, "replayed"
        self.elapsed = self.traces.duration
        budget, samples = run.budget.get("seconds"), run.budget.get("samples")
        self.budget, self.samples_budget = float(budget or self.traces.duration), samples
        self.message = (f"stored run {run.id} of {Path(run.kernel_path).name} ({run.method}, seed {run.seed}, "
                        f"{run.created}): {self.traces.total_samples:,} samples in {self.traces.duration:.1f} s "
                        "of sampling" + (f", budget {self.budget_text()}" if budget or samples else ""))
        if run.id not in self.run_ids:
            self.run_ids.append(run.id)
        self.stateChanged.emit()
