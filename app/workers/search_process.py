"""The search process: a child started when the window opens that warms up once (the search's
imports and the compiled Pareto sweeps), then serves what the window sends, in order: a Prepare
after each compile (the kernel compiled and the first design's model loaded, or built and stored
once for the model pool and the selection process too, and kept in memory, so that a Start on a
cold cache samples at once), and one SearchRequest after
another. The MP solver (pyomo, SCIP: ~3-4 s of CPU; pyomo 6.10 no longer
imports matplotlib) is warmed while the child is idle after a Prepare, and otherwise only by a run that solves a
seed (SearchRun's warm_up_for, before the budget starts): a short run over many designs never
solves one, so a first search does not wait for it. Requests report through a queue:
("phase", text) while it prepares, ("started", None) when the budget starts, ("progress", Progress),
("checkpoint", (position, DesignResult so far)) every few seconds and on new bests (the window
stores them as they come), ("design", DesignResult), then ("result", ExplorationResult) or
("error", str), then ("idle", None). A Prepare reports nothing (a failure shows when the search runs).

A child process rather than a thread: the tuner's MP seed (SCIP through pyomo) and long numpy
stretches hold the GIL, which would freeze the window; a process can also be stopped at once.
The child runs at a lower priority than the window and exits by itself when the window's process
dies (see parent_watchdog). No Qt here: the child imports only the engine.

The budget is sampling time or a number of samples, as `systolic search --seconds / --samples`
spends it, and the n-th design searched is seeded with seed + n, as explore() seeds it: the
warm-up and compiling the kernel come before the budget starts, and each design's model (loaded
from the model cache, which the window's model pool fills in the background after each compile;
built here only if missing) before that design's share starts, so a search started on a cold cache
samples its first design while the pool builds the others. Designs run one after another, each on
an even share of the budget, as explore() splits it: every design is searched, and a search ends
later than its budget by what the designs overran their shares (an MP solve, a last batch).
"""
from __future__ import annotations

import multiprocessing
import os
import threading
from dataclasses import dataclass

from app.workers.kernel_source import KernelSource, compile_source
from app.workers.parent_watchdog import watch_parent
from app.workers.spawning import spawn_context
from engine.errors import EngineError
from engine.models.cache import ModelCache, cached_model
from engine.search.progress import DesignResult, ExplorationResult

# The search modules (numba, pyomo) are imported by the functions below, in the child: the window
# imports this module for SearchRequest before it paints.

CHILD_NICENESS = 10  # added to the search process's nice value: the window's events come first
# ... but only from its first search's budget on: its warm-up and the first Prepare (~3 s of CPU the
# person waits for when Start comes early) run at +5, above the model pool and the compile process
# (+10), below the window; the child lowers its own priority (a process may, never raise it)
WARM_NICENESS = 5
WARM_METHOD = "hybrid"  # the method warmed up when the window opens (the default)


@dataclass(frozen=True)
class SearchRequest:
    source: KernelSource
    kernel_name: str
    method: str
    seconds: float | None  # sampling time, or None with a sample-count budget
    designs: tuple[str, ...] = ()  # empty: every design
    seed: int = 0
    cache_folder: str | None = None  # None: the default model cache
    samples: int | None = None  # evaluated configurations in all (split across the designs), as --samples

    def budget(self):
        """The request's budget as explore() takes it (EngineError for one neither positive nor finite)."""
        from engine.search.explore import Budget  # numba, pyomo: in the child (see the note above)

        return Budget(seconds=self.seconds, samples=self.samples)


@dataclass(frozen=True)
class Prepare:
    """Compile `source` and have `design`'s model in memory (the design a search of every design
    starts with), before any Start."""

    source: KernelSource
    design: str
    cache_folder: str | None = None


_PREPARED: dict[str, object] = {}  # cache key -> model kept in memory (the latest Prepare's design)
_MP_WARM: list[bool] = []  # the MP solver was warmed up in this process


def warm_up(method: str = WARM_METHOD) -> None:
    """What sampling needs loaded: the search's modules, `method`'s class and the compiled Pareto
    sweeps (not the MP solver: see the module docstring)."""
    from engine.search import pareto
    from engine.search.methods import strategy_class
    from engine.search.run import SearchRun  # noqa: F401 (the sampling loop's imports: sympy, the models)

    pareto.warm_up()
    strategy_class(method)


def warm_up_solver(method: str = WARM_METHOD) -> None:
    """The method's whole warm-up (the MP solver's imports for hybrid), once per process."""
    from engine.search.methods import strategy_class

    if not _MP_WARM:
        strategy_class(method).warm_up()
        _MP_WARM.append(True)


def prepare(message: Prepare) -> bool:
    """Compile the kernel and load the design's model from the cache, or build it and store it,
    kept in memory; whether it was built here. Right after a compile the model pool and the
    selection process ask for the same model: whoever comes first builds it, the others wait for
    its cache entry (engine/models/cache.cached_model), so the first design's model, on the path
    to a search's first sample, is built once rather than three times on the machine's cores."""
    key = message.source.key(message.design)
    if key in _PREPARED:
        return False
    space = compile_source(message.source)
    model, built = cached_model(ModelCache(message.cache_folder), key, space, space.design(message.design),
                                message.source.load_device())
    _PREPARED.clear()
    _PREPARED[key] = model
    return built


def load_model(request: SearchRequest, design: str, n: int, total: int, queue, spaces: dict):
    """The design's model: prepared in memory, from the cache, or built now (reported as a phase);
    before its share starts. `spaces` holds the kernel compiled once for the designs built here."""
    key = request.source.key(design)
    model = _PREPARED.get(key) or ModelCache(request.cache_folder).load(key, design)
    if model is None:
        queue.put(("phase", f"building the model of {design} ({n + 1} of {total})"))
        if "space" not in spaces:
            spaces["space"] = compile_source(request.source)
        space = spaces["space"]
        model, _ = cached_model(ModelCache(request.cache_folder), key, space, space.design(design),
                                request.source.load_device())
        queue.put(("phase", "searching"))
    return model


def search_design(model, method: str, seconds: float | None, seed: int, cancel, callbacks,
                  checkpoint=None, samples: int | None = None, designs: int = 1) -> DesignResult:
    """One design on its share, as explore() runs each design of a `systolic search`; `checkpoint`
    gets its result so far every few seconds and on new bests (engine.search.run says when);
    `designs`: how many designs share the run's budget (the hybrid method's solver step decides on
    it, so the window and the CLI take the same steps)."""
    from engine.search.methods import strategy_class
    from engine.search.run import SearchRun
    from engine.search.space import SearchSpace

    space = SearchSpace(model)
    run = SearchRun(space, strategy_class(method)(space, seed=seed), seconds=seconds, samples=samples,
                    callbacks=callbacks, cancel_event=cancel, checkpoint=checkpoint, designs=designs)
    return run.run()


_RENICED: list[bool] = []


def _search_priority() -> None:
    """From WARM_NICENESS to CHILD_NICENESS, once (the searches run below the window's events)."""
    if not _RENICED:
        _RENICED.append(True)
        try:
            os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + CHILD_NICENESS - WARM_NICENESS)
        except (AttributeError, OSError):
            pass


def run_search(request: SearchRequest, queue, cancel) -> None:
    try:
        from engine.search.methods import strategy_class

        strategy_class(request.method)
        budget = request.budget()
        queue.put(("phase", "warming up the search"))
        warm_up(request.method)
        spaces: dict = {}
        designs = list(request.designs)
        if not designs:
            spaces["space"] = compile_source(request.source)
            designs = [d.id for d in spaces["space"].designs]
        queue.put(("started", None))
        _search_priority()
        share = budget.split(len(designs))
        results = []
        for n, design in enumerate(designs):
            if cancel.is_set():
                break
            model = load_model(request, design, n, len(designs), queue, spaces)
            # seeded as explore() seeds the n-th design of a whole run
            result = search_design(model, request.method, share.seconds, request.seed + n, cancel,
                                   (lambda p: queue.put(("progress", p)),),
                                   lambda so_far, n=n: queue.put(("checkpoint", (n, so_far))), samples=share.samples,
                                   designs=len(designs))
            results.append(result)
            queue.put(("design", result))
        queue.put(("result", ExplorationResult(request.kernel_name, request.method, request.seed, tuple(results))))
    except EngineError as error:
        queue.put(("error", str(error)))
    except Exception as error:  # noqa: BLE001 (reported in the window, never a traceback)
        queue.put(("error", f"search failed: {type(error).__name__}: {error}"))


def host(requests, replies, cancel, ready, parent_pid: int | None = None) -> None:
    """The child's life: warm up, then serve Prepares and requests until a None arrives; the MP
    solver is warmed once the child is idle after a Prepare."""
    if parent_pid is not None:
        watch_parent(parent_pid)
    try:
        warm_up()
    except Exception:  # noqa: BLE001 (a method that cannot warm up reports its error when it is used)
        pass
    ready.set()
    while True:
        message = requests.get()
        if message is None:
            return
        if isinstance(message, Prepare):
            try:
                prepare(message)
                if requests.empty():
                    warm_up_solver()
            except Exception:  # noqa: BLE001 (the search that needs it reports the error)
                pass
            continue
        run_search(message, replies, cancel)
        replies.put(("idle", None))


@dataclass
class SearchHost:
    """A started search process and its channels: requests in, replies out, cancel, warmed up."""

    process: multiprocessing.Process
    requests: multiprocessing.Queue
    replies: multiprocessing.Queue
    cancel: multiprocessing.Event
    ready: multiprocessing.Event
    lock: threading.Lock  # one search at a time

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def prepare(self, message: Prepare) -> None:
        """Have the process compile a kernel and load its first design's model while it waits."""
        try:
            self.requests.put(message)
        except (OSError, ValueError):  # closed: the next search starts a fresh process
            pass

    def kill(self) -> None:
        """End the process now (it is inside a step that does not check the cancel flag)."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(1.0)

    def close(self, timeout: float = 1.0) -> None:
        if self.process.is_alive():
            self.cancel.set()
            try:
                self.requests.put(None)
            except (OSError, ValueError):
                pass
            self.process.join(0.2)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout)
        for queue in (self.requests, self.replies):
            queue.cancel_join_thread()
            queue.close()


def start_search_host() -> SearchHost:
    """Start the search process at a lower priority (WARM_NICENESS, then CHILD_NICENESS from its
    first search on); it warms up at once and watches this process."""
    context = spawn_context()
    requests, replies, cancel, ready = context.Queue(), context.Queue(), context.Event(), context.Event()
    process = context.Process(target=host, args=(requests, replies, cancel, ready, os.getpid()), daemon=True,
                              name="systolic-search")
    process.start()
    try:
        os.setpriority(os.PRIO_PROCESS, process.pid, os.getpriority(os.PRIO_PROCESS, 0) + WARM_NICENESS)
    except (AttributeError, OSError):  # no setpriority (Windows) or not allowed: the child runs as is
        pass
    return SearchHost(process, requests, replies, cancel, ready, threading.Lock())
