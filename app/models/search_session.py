"""SearchSession: one live or reopened search -> its traces (SearchTraces), the designs' status and
the stored run. It starts and stops the SearchWorker and stores finished or stopped runs in the
RunStore. Evented: `ticked(snapshots)`, `designFinished(result)`, `designsSkipped(ids)`, `stateChanged()`.

The budget counts from the moment the search process is ready; model building counts against it
(see app.workers.search_process)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.models.search_data import SearchTraces
from app.workers.search_process import SearchRequest
from app.workers.search_worker import SearchWorker
from engine.search.progress import ExplorationResult
from engine.search.store import RunStore, StoredRun


class SearchSession(QObject):
    ticked = Signal(list)  # Progress snapshots of the latest tick
    designFinished = Signal(object)  # DesignResult
    designsSkipped = Signal(tuple)  # design ids the budget did not reach
    stateChanged = Signal()  # started, stopped, finished, replayed or failed

    def __init__(self, parent=None):
        super().__init__(parent)
        self.traces = SearchTraces()
        self.elapsed = 0.0
        self.budget = 0.0  # seconds of the running (or last) search
        self.skipped: tuple[str, ...] = ()
        self.worker: SearchWorker | None = None
        self.result: ExplorationResult | None = None
        self.status = "idle"  # idle, running, stopping, finished, interrupted, failed, replayed
        self.message = ""
        self.run_ids: list[int] = []
        self.database: str | None = None  # None: the default run database

    @property
    def running(self) -> bool:
        return self.worker is not None

    def start(self, request: SearchRequest, *, kernel_text: str, sizes: dict[str, int], kernel_name: str,
              kernel_path: str | None = None) -> None:
        """`kernel_path`: the file the run is stored under (the request may point at a work copy)."""
        if self.running:
            return
        self.traces, self.elapsed, self.result, self.message = SearchTraces(), 0.0, None, ""
        self.budget, self.skipped = request.seconds, ()
        record = {"kernel": kernel_name, "kernel_path": kernel_path or request.kernel_path,
                  "kernel_text": kernel_text, "sizes": sizes, "database": self.database}
        self.worker = SearchWorker(request, record)
        self.worker.ticked.connect(self._tick)
        self.worker.designDone.connect(self.designFinished)
        self.worker.designsSkipped.connect(self._skipped)
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
        """Stop and wait for the worker (the window is closing)."""
        if self.worker is not None:
            self.worker.stop()
            self.worker.wait(timeout_ms)

    def _tick(self, snapshots: list, elapsed: float) -> None:
        self.elapsed = elapsed
        self.traces.add(snapshots, elapsed)
        self.ticked.emit(snapshots)

    def _skipped(self, designs: tuple) -> None:
        self.skipped = tuple(designs)
        self.designsSkipped.emit(self.skipped)

    def _finished(self, result: ExplorationResult, status: str, error: str) -> None:
        worker, self.worker = self.worker, None
        worker.wait()
        worker.deleteLater()
        self.result, self.status, self.message = result, ("failed" if error and not result.designs else status), error
        if self.skipped and not error:
            self.message = (f"the {self.budget:g} s budget (model building included) ran out before "
                            f"{len(self.skipped)} of the designs: they were not searched")
        if worker.run_id is not None:
            self.run_ids.append(worker.run_id)
        self.stateChanged.emit()

    def load_run(self, run_id: int) -> StoredRun:
        with RunStore(self.database) as store:
            return store.load(run_id)

    def replay(self, run: StoredRun) -> None:
        """Show a stored run's traces as if it had just run."""
        self.traces = SearchTraces.from_result(run.result)
        self.result, self.status = run.result, "replayed"
        self.elapsed = self.traces.duration
        self.message = f"run {run.id} of {Path(run.kernel_path).name} ({run.method}, {run.created})"
        if run.id not in self.run_ids:
            self.run_ids.append(run.id)
        self.stateChanged.emit()
