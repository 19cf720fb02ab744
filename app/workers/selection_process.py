"""The selection process: a child that evaluates the window's selected design and configuration
(selection_evaluation.evaluate_selection: the model from the model cache, the report, the levers,
the descriptor and the topology graph) and sends back only what the views draw, a few tens of kB.

A process rather than a thread: those steps are 0.1-0.3 s of Python per design on MM (unpickling
the model ~40 ms, the descriptor's isl work ~80 ms, the levers ~35 ms, the graph ~20 ms) holding
the GIL, and on a loaded machine the window's thread waited for the GIL behind them (stalls of
100-300 ms while clicking through the designs, with the GUI thread itself using ~10 ms of CPU per
event). The child keeps each design's model and descriptor in memory, so editing a value costs it
only the report; it compiles the kernel once per KernelSource (model_pool.compile_source), which
`prepare` asks for after each compile's first evaluation; then, one design at a time while the
window is idle, `warm` loads every cached model and builds its descriptor, so that a later click
costs the child only the report, the levers and the graph. No Qt calls here; the result
comes back through a Future whose callback runs in the executor's thread (DesignSelection hands it
to the GUI thread with a queued signal). The child ends with the window (parent_watchdog).
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.models.selection_evaluation import SelectionRequest, evaluate_selection
from app.workers.kernel_source import KernelSource, compile_source
from app.workers.parent_watchdog import watch_parent
from app.workers.spawning import spawn_context
from engine.models.cache import ModelCache

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Evaluated:
    """What the views need of an evaluation, without the model (it stays in the child)."""

    report: dict | None
    error: str
    descriptor: dict | None
    graph: nx.MultiDiGraph | None
    built: bool
    levers: dict | None
    topology_note: str
    clock: object | None = None  # the quick ClockEstimate


_MODELS: dict[str, object] = {}  # per child: cache key -> model of the latest kernel
_DESCRIPTORS: dict[str, dict] = {}


def prepare(source: KernelSource) -> None:
    """In the child: compile the kernel now, so the first selection does not wait for it."""
    compile_source(source)


def evaluate(source: KernelSource, design_id: str, values: dict, cache_folder: str) -> Evaluated:
    """In the child: evaluate_selection on the kernel of `source` (EngineError if the model cannot be built)."""
    space = compile_source(source)
    key = source.key(design_id)
    if key not in _MODELS:
        keep = {source.key(d.id) for d in space.designs}  # models of another kernel are dropped
        for old in [k for k in _MODELS if k not in keep]:
            _MODELS.pop(old)
            _DESCRIPTORS.pop(old, None)
    request = SelectionRequest(0, space, space.design(design_id), source.load_device(), dict(values),
                               _MODELS.get(key), _DESCRIPTORS.get(key), ModelCache(cache_folder), key)
    result = evaluate_selection(request)
    _MODELS[key] = result.model
    if result.descriptor is not None:
        _DESCRIPTORS[key] = result.descriptor
    return Evaluated(result.report, result.error, result.descriptor, result.graph, result.built, result.levers,
                     result.topology_note, result.clock)


def warm(source: KernelSource, design_id: str, cache_folder: str) -> None:
    """In the child, while the window is idle: a design's model (only if cached: the model pool
    builds missing ones) and descriptor into memory, so that selecting it costs only the report,
    the levers and the graph."""
    space = compile_source(source)
    key = source.key(design_id)
    if key in _MODELS:
        return
    model = ModelCache(cache_folder).load(key, design_id)
    if model is None:
        return
    from engine.compiler.descriptor import build_descriptor

    _MODELS[key] = model
    _DESCRIPTORS[key] = build_descriptor(space, space.design(design_id), model.architecture)


def _start(parent_pid: int) -> None:
    watch_parent(parent_pid)


class SelectionHost:
    """One child process, started by the first request (`prepare`, which DesignSelection sends after
    the first evaluation of a kernel: not while the window itself is still importing, painting and
    showing its first numbers, which the child's imports would slow down on a small machine)."""

    def __init__(self):
        self._executor = ProcessPoolExecutor(1, mp_context=spawn_context(),
                                             initializer=_start, initargs=(os.getpid(),))
        self._prepared: Future | None = None

    def prepare(self, source: KernelSource) -> None:
        self._prepared = self._executor.submit(prepare, source)

    @property
    def ready(self) -> bool:
        """The child has started and compiled the latest kernel given to `prepare` (until then a
        selection evaluates in a thread of the window: the child's start-up, ~1.5 s of imports,
        would delay the first design's numbers)."""
        return self._prepared is not None and self._prepared.done()

    def submit(self, source: KernelSource, design_id: str, values: dict, cache_folder: str) -> Future:
        return self._executor.submit(evaluate, source, design_id, dict(values), cache_folder)

    def warm(self, source: KernelSource, design_id: str, cache_folder: str) -> Future:
        return self._executor.submit(warm, source, design_id, cache_folder)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
