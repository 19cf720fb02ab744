"""SearchRequest -> the engine's exploration run in a child process, reported through a queue as
("progress", Progress), ("design", DesignResult), then ("result", ExplorationResult) or ("error", str).

A child process rather than a thread: the tuner's MP seed (SCIP through pyomo) and long numpy
stretches hold the GIL, which would freeze the window; a process can also be stopped at once.
No Qt here: the child imports only the engine.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.compiler.design_space import compile_kernel
from engine.errors import EngineError
from engine.models.device import load_device
from engine.search.explore import Budget, explore


@dataclass(frozen=True)
class SearchRequest:
    kernel_path: str
    defines: dict[str, str]
    device: str
    method: str
    seconds: float
    designs: tuple[str, ...] = ()  # empty: every design
    seed: int = 0


def run_search(request: SearchRequest, queue, cancel) -> None:
    try:
        space = compile_kernel(request.kernel_path, defines=request.defines)
        result = explore(space, load_device(request.device), method=request.method,
                         budget=Budget(seconds=request.seconds), designs=list(request.designs) or None,
                         seed=request.seed, cancel_event=cancel,
                         callbacks=(lambda p: queue.put(("progress", p)),),
                         on_design_done=lambda r: queue.put(("design", r)))
        queue.put(("result", result))
    except EngineError as error:
        queue.put(("error", str(error)))
    except Exception as error:  # noqa: BLE001 (reported in the window, never a traceback)
        queue.put(("error", f"search failed: {type(error).__name__}: {error}"))
