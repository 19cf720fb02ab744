"""A compiled kernel -> every design's performance model built in a pool of background processes and
stored in the ModelCache (engine/models/cache.py); `modelReady(design)` tells the window, design by
design, that its model is on disk, `allReady()` when none is missing.

Processes, not threads: a model build is 0.05-0.5 s of sympy holding the GIL, which in the window's
process would stall the event loop. The pool's processes run at a lower priority and end with the
window (parent_watchdog). Designs already cached are reported ready without any work; a kernel
compiled again while builds run makes the older builds' reports stale (they are ignored, and the
ones not started yet are cancelled).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor

from PySide6.QtCore import QObject, Qt, Signal

from app.workers.kernel_source import KernelSource, build_model, compile_source  # noqa: F401 (also imported from here)
from app.workers.parent_watchdog import watch_parent
from app.workers.spawning import spawn_context
from engine.models.cache import ModelCache

POOL_NICENESS = 10
POOL_PROCESSES = 2


def _pool_process_start(parent_pid: int) -> None:
    watch_parent(parent_pid)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + POOL_NICENESS)
    except (AttributeError, OSError):
        pass


class ModelPool(QObject):
    modelReady = Signal(str)  # a design's model is in the cache
    modelFailed = Signal(str, str)  # design, one-line reason
    allReady = Signal()  # every design of the latest kernel has its model in the cache
    _finished = Signal(int, str, bool, str)  # generation, design, built, error (from the pool's thread)

    def __init__(self, cache=None, parent=None):
        super().__init__(parent)
        self.cache = cache or ModelCache()
        self._executor: ProcessPoolExecutor | None = None
        self._futures: list[Future] = []
        self._generation = 0
        self.source: KernelSource | None = None
        self.pending: set[str] = set()
        self.submitted: list[str] = []  # designs sent to the pool for the latest kernel
        self.built: list[str] = []  # designs whose model a pool process had to build (not cached)
        # a build running at shutdown still finishes and calls _report from the executor's thread:
        # after shutdown it must not emit (the pool may be mid-destruction: "pure virtual method called")
        self._lock, self._closed = threading.Lock(), False
        # queued even from this thread (a future already done calls back inside add_done_callback,
        # under the lock): what the slot starts must not run while the lock is held
        self._finished.connect(self._on_finished, Qt.ConnectionType.QueuedConnection)

    @property
    def busy(self) -> bool:
        return bool(self.pending)

    def build(self, source: KernelSource, design_ids: list[str]) -> None:
        """Have every design's model of `source` in the cache (cached ones are ready at once)."""
        with self._lock:
            self._closed = False
        self._generation += 1
        for future in self._futures:
            future.cancel()
        self._futures, self.source, self.submitted, self.built = [], source, [], []
        missing = [d for d in design_ids if not self.cache.has(source.key(d))]
        self.pending = set(missing)
        for design in design_ids:
            if design not in self.pending:
                self.modelReady.emit(design)
        if not missing:
            self.allReady.emit()
            return
        executor = self._pool()
        for design in missing:
            future = executor.submit(build_model, source, design, str(self.cache.folder))
            future.add_done_callback(lambda f, g=self._generation, d=design: self._report(g, d, f))
            self._futures.append(future)
            self.submitted.append(design)

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(POOL_PROCESSES, mp_context=spawn_context(),
                                                 initializer=_pool_process_start, initargs=(os.getpid(),))
        return self._executor

    def _report(self, generation: int, design: str, future: Future) -> None:
        """In the pool's thread: hand over to the GUI thread (a queued signal)."""
        if future.cancelled():
            return
        error = future.exception()
        with self._lock:
            if self._closed:
                return
            if error is not None:
                self._finished.emit(generation, design, False, str(error) or type(error).__name__)
            else:
                self._finished.emit(generation, design, bool(future.result()[1]), "")

    def _on_finished(self, generation: int, design: str, built: bool, error: str) -> None:
        if generation != self._generation or design not in self.pending:
            return
        self.pending.discard(design)
        if error:
            self.modelFailed.emit(design, error)
        else:
            if built:
                self.built.append(design)
            self.modelReady.emit(design)
        if not self.pending:
            self.allReady.emit()

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
        self._generation += 1
        self.pending = set()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
