"""DesignSelection: the chosen design and configuration -> its performance report, descriptor and
topology graph, or the constraint it breaks. Evented: every view follows `changed`.

The engine work (the design's model, the report, the descriptor and the topology graph, see
selection_evaluation) runs in the selection process (app/workers/selection_process.py) once
`use_process` gave one, the space came with its KernelSource (the window) and the child has
compiled it (SelectionHost.ready), else in a TaskWorker (then `model` holds the built model); never
on the GUI thread: select() and set_value() take
effect at once for the design and the values (select() emits `changed` at once), and `report`,
`error` and topology() follow when the worker is done (`busy` until then, `changed` again then).
One evaluation at a time: a request made while one runs replaces any waiting one, so typing fast
evaluates the latest text only. Models come from the on-disk model cache (keys from the
KernelSource given with the space) and are kept in memory per design.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

from app.gc_pauses import freeze_long_lived
from app.models.selection_evaluation import (
    Evaluation,
    SelectionRequest,
    evaluate_selection,
)
from app.workers.kernel_source import KernelSource
from app.workers.task_worker import TaskWorker
from engine.errors import EngineError
from engine.models.cache import ModelCache, cached_model
from engine.models.device import Device, load_device

if TYPE_CHECKING:  # sympy, islpy and networkx are imported where used, in workers: not before the window paints
    import networkx as nx

    from app.workers.selection_process import SelectionHost
    from engine.compiler.design import Design
    from engine.compiler.design_space import DesignSpace
    from engine.models.evaluate import PerformanceModel

DEFAULT_T1 = 8  # PEs per space loop of a design nobody has tuned yet


def default_values(design: Design) -> dict[str, int]:
    """A small legal configuration: t1 = min(8, bound), latency hiding 1, SIMD the largest legal."""
    values = {}
    for p in design.params:
        if p.tunable and p.role == "array_partition":
            values[p.name] = max(p.lower, min(DEFAULT_T1, p.upper))
    for p in design.params:
        if p.tunable and p.role != "array_partition":
            t1 = values.get(f"{p.loop}_t1", 1)
            # divisors of t1 (at most DEFAULT_T1): never a walk over the parameter's bound, which may be 10^9
            choices = [d for d in range(max(p.lower, 1), min(p.upper, t1) + 1) if t1 % d == 0
                       and (p.role != "simd" or d & (d - 1) == 0)]
            values[p.name] = (max(choices) if p.role == "simd" else min(choices)) if choices else p.lower
    return values


MEASURED_SOURCES = ("timed C simulation", "simulator")  # most trusted first: the heat colours' sources


def values_key(design_id: str, values: dict) -> tuple:
    return design_id, tuple(sorted((k, int(v)) for k, v in values.items()))


class DesignSelection(QObject):
    changed = Signal()  # design, values, report or error changed
    measuredChanged = Signal()  # a simulation of some configuration reported its modules' cycles
    _processed = Signal(object, object)  # SelectionRequest, its Future (from the executor's thread)
    _warmed = Signal(object)  # a warm-up Future is done (from the executor's thread)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.space: DesignSpace | None = None
        self.device_name = "u250"
        self.device: Device = load_device(self.device_name)
        self.design: Design | None = None
        self.values: dict[str, int] = {}
        self.report: dict | None = None
        self.error = ""
        self._models: dict[str, PerformanceModel] = {}
        self._descriptors: dict[str, dict] = {}
        self._graph: nx.MultiDiGraph | None = None
        self._generation = 0  # bumped by every change: older results are stale
        self._shown_generation = 0  # the generation report and error belong to
        self._worker_generation = 0  # the generation the running worker evaluates
        self._worker: TaskWorker | None = None
        self._waiting = False  # a request is due when the running worker is done
        self.source: KernelSource | None = None  # what the model cache keys are made of
        self.cache = ModelCache()
        self.built: list[str] = []  # designs whose model this selection had to build (not cached)
        self.levers: dict = {}  # module -> [Lever] of the report shown (selection_evaluation.module_levers)
        self.topology_note = ""  # why a valid configuration has no topology graph (too many instances)
        self.clock_estimate = None  # the report's quick ClockEstimate (engine/floorplan/clock.py), or None
        # design id -> True while a model pool builds that design's model: wait for it rather than
        # build it here (a build in this process holds the GIL the window needs)
        self.model_pending = lambda design_id: False
        self._awaiting: str | None = None
        # (design id, full values) -> {source: {module: busy cycles}}, from the simulator or the timed
        # C simulation; kept per kernel (set_space forgets them)
        self.measured: dict[tuple, dict[str, dict[str, float]]] = {}
        self.host: SelectionHost | None = None
        self._to_prepare: KernelSource | None = None  # for the host, after the first evaluation
        self._to_warm: list[str] = []  # designs whose model and descriptor the host loads while idle
        self._warming: Future | None = None
        self._future: Future | None = None
        self._lock, self._closed = threading.Lock(), False  # no signal from the executor's thread after shutdown
        # queued even when emitted on this thread: a future already done runs its callback inside
        # add_done_callback, under the lock, and a direct call would come back here and take the
        # lock again (the CI dry run hung in test_selection_process with the warm-up doing that)
        self._processed.connect(self._process_done, Qt.ConnectionType.QueuedConnection)
        self._warmed.connect(self._warm_done, Qt.ConnectionType.QueuedConnection)

    def use_process(self, host: SelectionHost) -> None:
        """Evaluate in this selection process from now on (for spaces given with their KernelSource)."""
        self.host = host

    @property
    def busy(self) -> bool:
        """The report, error and topology do not yet follow the design and values."""
        return self._shown_generation != self._generation

    def set_space(self, space: DesignSpace | None, device: str = "u250", source: KernelSource | None = None) -> None:
        self.space, self.device_name = space, device
        self.device = source.load_device() if source is not None else load_device(device)  # at the bar's clock
        self.source = source
        # the child compiles the kernel once the first evaluation (in a thread) is done: started
        # sooner, its imports would compete with the window's launch and delay the first numbers
        self._to_prepare = source if self.host is not None else None
        self._to_warm = []
        self._models, self._descriptors, self.built = {}, {}, []
        self.measured = {}
        self._clear()
        self.changed.emit()

    def _clear(self) -> None:
        self._generation += 1
        self._shown_generation = self._generation
        self._waiting, self._awaiting = False, None
        self.design, self.values, self.report, self.error, self._graph = None, {}, None, "", None
        self.clock_estimate = None

    @property
    def model(self) -> PerformanceModel | None:
        """The selected design's model once a worker has built it (None before, and when the
        selection process evaluates: see load_model)."""
        return self._models.get(self.design.id) if self.design is not None else None

    def load_model(self, design: Design) -> PerformanceModel:
        """The design's model for a worker thread: the one in memory, else from the model cache,
        else built (and stored). Slow: never on the GUI thread."""
        if design.id in self._models:
            return self._models[design.id]
        if self.source is None:
            from engine.models.evaluate import PerformanceModel

            return PerformanceModel(self.space, design, self.device)
        return cached_model(self.cache, self.source.key(design.id), self.space, design, self.device)[0]

    @property
    def descriptor(self) -> dict | None:
        return self._descriptors.get(self.design.id) if self.design is not None else None

    def select(self, design_id: str | None, values: dict[str, int] | None = None) -> None:
        if self.space is None or design_id is None:
            self._clear()
            self.changed.emit()
            return
        design = self.space.design(design_id)
        tunable = {p.name for p in design.params if p.tunable}
        given = {k: int(v) for k, v in (values or {}).items() if k in tunable}
        if design is not self.design:  # the old design's numbers must not show under the new one's name
            self.report, self.error, self._graph = None, "", None
        self.design = design
        self.values = given if set(given) == tunable else default_values(design)
        self._request()
        self.changed.emit()

    def set_value(self, name: str, text: str) -> None:
        """A value as typed: anything not a whole number, or breaking a constraint, becomes `error`."""
        if self.design is None:
            return
        try:
            value = int(str(text).strip())
        except ValueError:
            self._generation += 1
            self._shown_generation = self._generation
            self._waiting = False
            self.report, self.error, self._graph = None, f"{name}: '{text}' is not a whole number", None
            self.changed.emit()
            return
        self.values = {**self.values, name: value}
        self._request()

    def model_ready(self, design_id: str) -> None:
        """The pool has stored this design's model (or given up on it): evaluate if waiting for it."""
        if self._awaiting == design_id:
            self._awaiting = None
            self._request()

    def _request(self) -> None:
        self._generation += 1
        if self._worker is not None or self._future is not None:
            self._waiting = True
            return
        if self.design.id not in self._models and self.model_pending(self.design.id):
            self._awaiting = self.design.id
            return
        self._awaiting = None
        self._waiting = False
        request = SelectionRequest(self._generation, self.space, self.design, self.device, dict(self.values),
                                   self._models.get(self.design.id), self._descriptors.get(self.design.id),
                                   self.cache if self.source is not None else None,
                                   self.source.key(self.design.id) if self.source is not None else None)
        if self.host is not None and self.source is not None and self.host.ready:
            try:
                future = self._future = self.host.submit(self.source, self.design.id, self.values,
                                                         str(self.cache.folder))
            except (BrokenProcessPool, RuntimeError):  # the child died (or was shut down): threads from now on
                self.host = None
            else:
                future.add_done_callback(lambda f, r=request: self._hand_over(r, f))
                return
        # the worker holds nothing of this object (no closure over `self`) and belongs to the
        # application, deleting itself once its thread has ended (KernelSession.compile says why)
        self._worker_generation = request.generation
        worker = self._worker = TaskWorker(lambda: evaluate_selection(request), QCoreApplication.instance(),
                                           background=True)
        worker.succeeded.connect(self._evaluated)
        worker.failed.connect(self._evaluation_failed)
        worker.finished.connect(self._worker_done)
        worker.finished.connect(worker.deleteLater)  # queued after _worker_done, which waits for the thread
        worker.start()

    def _evaluation_failed(self, message: str) -> None:
        self._failed(self._worker_generation, message)

    def _hand_over(self, request: SelectionRequest, future: Future) -> None:
        """In the executor's thread: to the GUI thread (a queued signal), unless shut down."""
        with self._lock:
            if not self._closed:
                self._processed.emit(request, future)

    def _warm_next(self) -> None:
        """One design warmed at a time, only while no evaluation waits (a click waits for one at most)."""
        if self.host is None or self._warming is not None or self._future is not None or not self._to_warm:
            return
        try:
            self._warming = self.host.warm(self.source, self._to_warm.pop(0), str(self.cache.folder))
        except (BrokenProcessPool, RuntimeError):
            self._to_warm = []
            return
        self._warming.add_done_callback(self._hand_over_warm)

    def _hand_over_warm(self, future: Future) -> None:
        with self._lock:
            if not self._closed:
                self._warmed.emit(future)

    def _warm_done(self, future: Future) -> None:
        if future is self._warming:
            self._warming = None
            self._warm_next()

    def _process_done(self, request: SelectionRequest, future: Future) -> None:
        if future is not self._future:
            return
        self._future = None
        error = None if future.cancelled() else future.exception()
        if future.cancelled():
            pass
        elif error is None:
            e = future.result()
            self._evaluated(Evaluation(request, None, e.descriptor, e.report, e.error, e.graph, e.built, e.levers,
                                       e.topology_note, e.clock))
        elif isinstance(error, EngineError):
            self._failed(request.generation, str(error))
        else:
            if isinstance(error, BrokenProcessPool):  # the child died: evaluate in threads from now on
                self.host = None
            self._failed(request.generation, f"{type(error).__name__}: {error}")
        if self._waiting and self.design is not None:
            self._request()
        self._prepare_host()

    def _evaluated(self, evaluation: Evaluation) -> None:
        request = evaluation.request
        if request.space is self.space and request.device is self.device:  # keep what was built
            if evaluation.model is None:  # evaluated in the selection process: the model stays there
                if evaluation.built and request.design.id not in self.built:
                    self.built.append(request.design.id)
            elif request.design.id not in self._models:
                self._models[request.design.id] = evaluation.model
                if evaluation.built:
                    self.built.append(request.design.id)
                freeze_long_lived()  # the model lives as long as the kernel: see gc_pauses
            if evaluation.descriptor is not None:
                self._descriptors.setdefault(request.design.id, evaluation.descriptor)
        if request.generation == self._generation:
            self._shown_generation = request.generation
            self.report, self.error, self._graph = evaluation.report, evaluation.error, evaluation.graph
            self.levers = evaluation.levers or {}
            self.topology_note = evaluation.topology_note
            self.clock_estimate = evaluation.clock  # quick: no floorplan solved (FloorplanSession solves)
            self.changed.emit()

    def _failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._shown_generation = generation
            self.report, self.error, self._graph, self.clock_estimate = None, message, None, None
            self.changed.emit()

    def _worker_done(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.wait()
        if self._waiting and self.design is not None:
            self._request()
        self._prepare_host()

    def _prepare_host(self) -> None:
        """After a kernel's first evaluation: the host compiles it and then warms its designs."""
        if self._to_prepare is not None and self.host is not None and self._to_prepare == self.source:
            self.host.prepare(self._to_prepare)
            self._to_warm = [d.id for d in self.space.designs]
        self._to_prepare = None
        self._warm_next()

    def shutdown(self, timeout_ms: int = 10000) -> None:
        """Forget waiting requests, stop the selection process and wait for the running worker (the
        window is closing); what the worker queued for this object is delivered now, on this thread,
        so nothing stays queued for an object about to be deleted."""
        self._generation += 1
        self._shown_generation = self._generation
        self._waiting = False
        with self._lock:
            self._closed = True
        self._future = self._warming = self._to_prepare = None
        self._to_warm = []
        if self.host is not None:
            self.host.shutdown()
            self.host = None
        if self._worker is not None:
            self._worker.wait(timeout_ms)
            QCoreApplication.sendPostedEvents(self)  # its succeeded / finished (stale: they change nothing)

    def full_values(self) -> dict[str, int] | None:
        """Tuning parameters plus the data-packing factors the report inferred (None if invalid)."""
        return dict(self.report["params"]) if self.report else None

    def set_measured(self, design_id: str, values: dict, source: str, cycles: dict[str, float]) -> None:
        """A simulation's busy cycles per module for a configuration (full values, packing included)."""
        self.measured.setdefault(values_key(design_id, values), {})[source] = dict(cycles)
        self.measuredChanged.emit()

    def measured_cycles(self) -> tuple[str, dict[str, float]] | None:
        """(source, module -> busy cycles) of the configuration shown, the most trusted source first
        (None when nothing has been simulated for it)."""
        values = self.full_values()
        if self.design is None or values is None:
            return None
        found = self.measured.get(values_key(self.design.id, values), {})
        for source in MEASURED_SOURCES:
            if found.get(source):
                return source, found[source]
        return None

    def topology(self) -> nx.MultiDiGraph | None:
        """The configuration's topology graph (None while invalid or being evaluated)."""
        return self._graph if self.report else None
