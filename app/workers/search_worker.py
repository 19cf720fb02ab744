"""SearchWorker(request): a QThread that runs the search process and relays what it reports as
queued signals, at a steady 10 Hz (`ticked`), plus `designDone` per finished design and `finished`
with the (possibly partial) ExplorationResult and how the run ended.

Stop: the cancel event asks the engine to stop after its current batch; if the child has not
finished 0.3 s later (e.g. inside an MP solve) it is terminated and the designs it finished are kept.
"""
from __future__ import annotations

import multiprocessing
import queue as queue_module
import threading
import time

from PySide6.QtCore import QThread, Signal

from app.workers.search_process import SearchRequest, run_search
from engine.search.progress import ExplorationResult

TICK = 0.1  # seconds between `ticked` signals
STOP_GRACE = 0.3  # seconds the child gets to stop by itself


class SearchWorker(QThread):
    ticked = Signal(list, float)  # Progress snapshots since the previous tick, seconds since start
    designDone = Signal(object)  # DesignResult
    searchFinished = Signal(object, str, str)  # ExplorationResult, "finished" | "interrupted", error text

    def __init__(self, request: SearchRequest, parent=None):
        super().__init__(parent)
        self.request = request
        self._stop = threading.Event()
        self.stop_requested_at: float | None = None

    def stop(self) -> None:
        if not self._stop.is_set():
            self.stop_requested_at = time.perf_counter()
            self._stop.set()

    def run(self) -> None:
        context = multiprocessing.get_context("spawn")
        queue, cancel = context.Queue(), context.Event()
        process = context.Process(target=run_search, args=(self.request, queue, cancel), daemon=True)
        start = time.perf_counter()
        process.start()
        pending, done, result, error = [], [], None, ""
        next_tick, stop_at = start + TICK, None
        while True:
            try:
                kind, payload = queue.get(timeout=0.02)
            except queue_module.Empty:
                kind = payload = None
            now = time.perf_counter()
            if kind == "progress":
                pending.append(payload)
            elif kind == "design":
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
                break
            if kind is None and not process.is_alive():
                error = f"the search process ended unexpectedly (exit code {process.exitcode})"
                break
            if now >= next_tick:
                self.ticked.emit(pending, now - start)
                pending, next_tick = [], now + TICK
        self.ticked.emit(pending, time.perf_counter() - start)
        if process.is_alive():
            process.join(0.05)
        if process.is_alive():
            process.terminate()
            process.join(1.0)
        queue.cancel_join_thread()
        queue.close()
        if result is None:
            result = ExplorationResult("", self.request.method, self.request.seed, tuple(done))
        stopped = self._stop.is_set() or any(d.stopped == "cancelled" for d in result.designs)
        self.searchFinished.emit(result, "interrupted" if stopped else "finished", error)
