"""SearchRequest -> the engine's exploration in a child process, reported through a queue as
("progress", Progress), ("design", DesignResult), ("skipped", design ids the budget did not reach),
then ("result", ExplorationResult) or ("error", str).

A child process rather than a thread: the tuner's MP seed (SCIP through pyomo) and long numpy
stretches hold the GIL, which would freeze the window; a process can also be stopped at once.
The child runs at a lower priority than the window (it would otherwise take half of the window's
core on a busy machine) and exits by itself when the window's process dies (see parent_watchdog).
No Qt here: the child imports only the engine.

The budget is wall time from the moment the child is ready (its imports done, about a second
after Start, which the window says): compiling the kernel and building each design's model count.
Designs run one after another, each getting an even share of what is left, so the time a design's
model build overran its share is taken from the next ones; designs not started when the budget is
spent are reported as skipped. So a search ends within one model build of its budget.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import dataclass

from app.workers.parent_watchdog import watch_parent
from engine.compiler.design_space import compile_kernel
from engine.errors import EngineError
from engine.models.device import load_device
from engine.search.explore import Budget, explore
from engine.search.progress import ExplorationResult

CHILD_NICENESS = 10  # added to the search process's nice value: the window's events come first
MIN_DESIGN_SECONDS = 0.05  # a design is not started with less of the budget left than this


@dataclass(frozen=True)
class SearchRequest:
    kernel_path: str
    defines: dict[str, str]
    device: str
    method: str
    seconds: float
    designs: tuple[str, ...] = ()  # empty: every design
    seed: int = 0


def design_seconds(deadline: float, now: float, designs_left: int) -> float | None:
    """The next design's share of the budget left (its model build included), None when spent."""
    left = deadline - now
    if designs_left <= 0 or left < MIN_DESIGN_SECONDS:
        return None
    return left / designs_left


@dataclass
class SearchProcess:
    """A started search child and the two channels to it."""

    process: multiprocessing.Process
    queue: multiprocessing.Queue
    cancel: multiprocessing.Event


def start_search_process(request: SearchRequest) -> SearchProcess:
    """Start `run_search` in a spawned child at a lower priority; it watches this process."""
    context = multiprocessing.get_context("spawn")
    queue, cancel = context.Queue(), context.Event()
    process = context.Process(target=run_search, args=(request, queue, cancel, os.getpid()), daemon=True,
                              name="systolic-search")
    process.start()
    try:
        os.setpriority(os.PRIO_PROCESS, process.pid, os.getpriority(os.PRIO_PROCESS, 0) + CHILD_NICENESS)
    except (AttributeError, OSError):  # no setpriority (Windows) or not allowed: the child runs as is
        pass
    return SearchProcess(process, queue, cancel)


def run_search(request: SearchRequest, queue, cancel, parent_pid: int | None = None) -> None:
    if parent_pid is not None:
        watch_parent(parent_pid)
    deadline = time.monotonic() + request.seconds
    try:
        space = compile_kernel(request.kernel_path, defines=request.defines)
        device = load_device(request.device)
        designs = list(request.designs) or [d.id for d in space.designs]
        for d in designs:
            space.design(d)  # an unknown id is an error before anything runs
        results = []
        for n, design in enumerate(designs):
            if cancel.is_set():
                break
            seconds = design_seconds(deadline, time.monotonic(), len(designs) - n)
            if seconds is None:
                queue.put(("skipped", tuple(designs[n:])))
                break
            # one design per call, seeded as explore() seeds the n-th design of a whole run
            run = explore(space, device, method=request.method, budget=Budget(seconds=seconds), designs=[design],
                          seed=request.seed + n, cancel_event=cancel,
                          callbacks=(lambda p: queue.put(("progress", p)),))
            results.extend(run.designs)
            queue.put(("design", run.designs[0]))
        queue.put(("result", ExplorationResult(space.kernel.name, request.method, request.seed, tuple(results))))
    except EngineError as error:
        queue.put(("error", str(error)))
    except Exception as error:  # noqa: BLE001 (reported in the window, never a traceback)
        queue.put(("error", f"search failed: {type(error).__name__}: {error}"))
