"""SearchWorker(host, request): a QThread that hands the request to the warm search process and
relays what it reports as queued signals: `phase(text)` while it prepares, `budgetStarted()` when
the budget starts, `ticked` at a steady 10 Hz from then on, `designDone` per finished design,
and `searchFinished` with the (possibly partial) ExplorationResult, how the run ended and an error text.

The run is stored as it goes, as `systolic search` stores it (engine.search.recorder): its row is
created ("running") before the request goes to the search process, so a database that cannot be
written is an error before any search; each design's result so far is written as the process
checkpoints it and when it is done, from a writer thread; the final status comes last. A window
killed mid-search leaves an "incomplete" run with everything up to its last checkpoint.

Stop: the cancel event asks the engine to stop after its current batch; if the process has not
finished 0.25 s later (e.g. inside an MP solve) it is terminated (`host_lost` is then True: the
session starts a fresh one) and the designs it finished are kept.
"""
from __future__ import annotations

import queue as queue_module
import threading
import time

from PySide6.QtCore import QThread, Signal

from app.workers.search_process import SearchHost, SearchRequest
from engine.errors import EngineError
from engine.search.progress import ExplorationResult
from engine.search.recorder import RunRecorder
from engine.search.store import RunStore

TICK = 0.1  # seconds between `ticked` signals
STOP_GRACE = 0.25  # seconds the child gets to stop by itself


class SearchWorker(QThread):
    phase = Signal(str)  # what the search process prepares (before the budget starts)
    budgetStarted = Signal()
    ticked = Signal(list, float)  # Progress snapshots since the previous tick, seconds since the budget started
    designDone = Signal(object)  # DesignResult
    searchFinished = Signal(object, str, str)  # ExplorationResult, "finished" | "interrupted", error text

    def __init__(self, host: SearchHost, request: SearchRequest, record: dict | None = None, parent=None):
        """`record`: kernel, kernel_path, kernel_text, sizes, database - to store the run when it ends."""
        super().__init__(parent)
        self.host, self.request, self.record = host, request, record or {}
        self.host_lost = False  # the process was terminated or died: it cannot serve another search
        self._stop = threading.Event()
        self.stop_requested_at: float | None = None
        self.search_ended_at: float | None = None  # the search process has stopped computing
        self.run_id: int | None = None
        self._recorder: RunRecorder | None = None

    def stop(self) -> None:
        if not self._stop.is_set():
            self.stop_requested_at = time.perf_counter()
            self._stop.set()

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # noqa: BLE001 (e.g. the process cannot start): reported, never hangs
            try:
                self._finish_run("failed")  # what was stored stays, under its final status
            except Exception:  # noqa: BLE001 - the error below is the one worth reporting
                pass
            result = ExplorationResult("", self.request.method, self.request.seed, ())
            self.searchFinished.emit(result, "interrupted", f"the search could not run: {type(exc).__name__}: {exc}")

    def _run(self) -> None:
        with self.host.lock:
            self._serve()

    def _serve(self) -> None:
        host = self.host
        process, queue, cancel = host.process, host.replies, host.cancel
        cancel.clear()
        try:
            self._recorder = self._begin() if self.record else None
        except EngineError as exc:  # before any search: nothing is lost
            result = ExplorationResult(self.record.get("kernel", ""), self.request.method, self.request.seed, ())
            self.searchFinished.emit(result, "failed", f"the run cannot be stored, so it was not started: {exc}")
            return
        if self._recorder is not None:
            self.run_id = self._recorder.run_id
        if not host.ready.is_set():
            self.phase.emit("warming up the search (once per window)")
        host.requests.put(self.request)
        start = None
        pending, done, result, error = [], [], None, ""
        next_tick, stop_at, broken = time.perf_counter() + TICK, None, False
        while True:
            try:
                kind, payload = queue.get(timeout=0.02)
            except queue_module.Empty:
                kind = payload = None
            now = time.perf_counter()
            if kind == "phase":
                self.phase.emit(payload)
            elif kind == "started":
                start, next_tick = now, now + TICK
                self.budgetStarted.emit()
            elif kind == "progress":
                pending.append(payload)
            elif kind == "checkpoint":
                if self._recorder is not None:
                    self._recorder.put(*payload)
            elif kind == "design":
                if self._recorder is not None:
                    self._recorder.put(len(done), payload)
                done.append(payload)
                self.designDone.emit(payload)
            elif kind == "result":
                result = payload
            elif kind == "error":
                error = payload
            if result is not None or error:
                break
            if self._stop.is_set() and stop_at is None:
                cancel.set()
                stop_at = now
            if stop_at is not None and now - stop_at > STOP_GRACE:
                broken = True
                break
            if kind is None and not process.is_alive():
                error = f"the search process ended unexpectedly (exit code {process.exitcode})"
                broken = True
                break
            if start is not None and now >= next_tick:
                self.ticked.emit(pending, now - start)
                pending, next_tick = [], now + TICK
        if start is not None:
            self.ticked.emit(pending, time.perf_counter() - start)
        if broken:
            # stopped in the middle (or broken): the process cannot be trusted with the next search
            self.host_lost = True
            host.kill()
            self.search_ended_at = time.perf_counter()
            host.close()
        else:
            self.search_ended_at = time.perf_counter()
            self._wait_idle(queue)
        if result is None:
            result = ExplorationResult(self.record.get("kernel", ""), self.request.method, self.request.seed,
                                       tuple(done))
        status = "interrupted" if self._stop.is_set() or any(d.stopped == "cancelled" for d in result.designs) \
            else "finished"
        stored = self._finish_run("failed" if error and not result.designs else status)
        if stored is not None:
            error = (error + "; " if error else "") + f"the run was not stored: {stored}"
        self.searchFinished.emit(result, status, error)

    def _finish_run(self, status: str) -> EngineError | None:
        """Write what is pending and the final status, close the database; the storing error, if any."""
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return None
        try:
            recorder.finish(status)
        finally:
            recorder.store.close()
        if recorder.error is not None:
            self.run_id = None
        return recorder.error

    def _wait_idle(self, queue) -> None:
        """The process says it is idle right after the result; wait briefly so the next search's
        replies do not start with this one's."""
        deadline = time.perf_counter() + 1.0
        while time.perf_counter() < deadline:
            try:
                kind, _ = queue.get(timeout=0.05)
            except queue_module.Empty:
                if not self.host.process.is_alive():
                    self.host_lost = True
                    return
                continue
            if kind == "idle":
                return
        self.host_lost = True
        self.host.close()

    def _begin(self) -> RunRecorder:
        """The run's row, "running", written here, off the GUI thread (an SQLite commit can take a
        while on a busy disk); raises EngineError when the database cannot be written."""
        r, request = self.record, self.request
        store = RunStore(r["database"])
        try:
            run_id = store.begin(kernel_path=r["kernel_path"], kernel_text=r["kernel_text"], sizes=r["sizes"],
                                 device=request.source.device, method=request.method, seed=request.seed,
                                 budget={"seconds": request.seconds, "samples": request.samples}, kernel=r["kernel"],
                                 options={"source": "systolic-studio", "designs": list(request.designs)})
        except BaseException:
            store.close()
            raise
        return RunRecorder(store, run_id)
