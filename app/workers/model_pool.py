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

import multiprocessing
import os
import shutil
import tempfile
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal

from app.workers.parent_watchdog import watch_parent
from engine.models.cache import ModelCache, cached_model, model_key
from engine.models.device import load_device

POOL_NICENESS = 10
POOL_PROCESSES = 2


@dataclass(frozen=True)
class KernelSource:
    """What compiles a kernel anywhere: its text, the file name it goes by, the folder holding the
    headers it includes, the -D defines and the sizes the window's compilation found, and the device
    at the kernel clock the window's device bar chose (None: the device file's clock)."""

    text: str
    file_name: str
    headers: str  # a folder whose *.h are copied next to the kernel
    defines: dict
    sizes: dict
    device: str
    clock_mhz: float | None = None

    def key(self, design_id: str) -> str:
        return model_key(self.text, self.defines, self.sizes, self.load_device(), design_id)

    def load_device(self):
        """The device every model, search and plot of this source uses: its clock included."""
        return _device(self.device, self.clock_mhz)


@lru_cache(maxsize=8)
def _device(name: str, clock_mhz: float | None = None):
    """The device read once (keys are computed for every design of every compile, on the GUI thread)."""
    return load_device(name, clock_mhz=clock_mhz)


_SPACES: dict[tuple, object] = {}  # per pool process: the kernel compiled once for all its designs


def compile_source(source: KernelSource):
    """The design space of `source`, compiled in a private folder (the window's work copy may change
    under a running build). Raises EngineError if it does not compile."""
    key = (source.text, source.file_name, tuple(sorted(source.defines.items())))
    if key not in _SPACES:
        from engine.compiler.design_space import compile_kernel  # islpy, sympy: in the child, when needed

        with tempfile.TemporaryDirectory(prefix="systolic-model-") as folder:
            for header in Path(source.headers).glob("*.h") if source.headers else ():
                shutil.copy(header, folder)
            path = Path(folder) / source.file_name
            path.write_text(source.text)
            _SPACES.clear()
            _SPACES[key] = compile_kernel(path, defines=source.defines)
    return _SPACES[key]


def build_model(source: KernelSource, design_id: str, cache_folder: str) -> tuple[str, bool]:
    """In a pool process: (design id, whether it was built) once the model is in the cache."""
    space = compile_source(source)
    device = source.load_device()
    _, built = cached_model(ModelCache(cache_folder), source.key(design_id), space, space.design(design_id), device)
    return design_id, built


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
            self._executor = ProcessPoolExecutor(POOL_PROCESSES, mp_context=multiprocessing.get_context("spawn"),
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
