"""The compile process: a child that compiles the window's kernel (the front end: pycparser, islpy,
sympy) and sends the DesignSpace back pickled, a few tens of kB that the window's worker thread
unpickles in a few milliseconds of many short steps.

A process rather than the worker thread alone: islpy's calls hold the GIL for their whole length
(CNN's dataflow analysis, `compute_flow`, is ~25 ms of CPU per call, several times that on a loaded
machine), and the window's thread waited behind them (stalls of 60-120 ms while CNN compiled).
Unpickling the space rebuilds each isl object from its text in a call of its own, so the GIL
changes hands between them. The child is started from the GUI thread (a child started from a
worker thread would get the kernel's parent-death signal when that thread ends, see
parent_watchdog), warms up its imports at once, runs at a lower priority and ends with the window.
No Qt here.
"""
from __future__ import annotations

import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.workers.parent_watchdog import watch_parent
from app.workers.spawning import spawn_context
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.compiler.design_space import DesignSpace

CHILD_NICENESS = 10


@dataclass(frozen=True)
class Compiled:
    text: str
    defines: dict
    space: DesignSpace | None
    error: str
    error_line: int | None
    simd_touch_space: bool = False  # compiled with AutoSA's --simd-touch-space


def compile_work_copy(path: Path, text: str, defines: dict, simd_touch_space: bool = False) -> Compiled:
    """Compile the work copy: a DesignSpace, or the error with the editor line it points at
    (`simd_touch_space`: AutoSA's --simd-touch-space, compile_kernel's)."""
    from engine.compiler.design_space import compile_kernel
    from engine.models.cache import model_version

    try:
        space = compile_kernel(path, defines=defines, simd_touch_space=simd_touch_space)
        model_version()  # read once here: the model cache's keys need it next, on the GUI thread
        return Compiled(text, defines, space, "", None, simd_touch_space)
    except EngineError as exc:
        location = exc.location
        line = location.line if location and location.file and Path(location.file).name == path.name else None
        return Compiled(text, defines, None, (f"line {line}: " if line else "") + exc.reason, line, simd_touch_space)
    except Exception as exc:  # noqa: BLE001 (a kernel the front end trips on must not crash the window)
        return Compiled(text, defines, None, f"the compiler failed on this kernel: {type(exc).__name__}: {exc}", None,
                        simd_touch_space)


def _start(parent_pid: int) -> None:
    watch_parent(parent_pid)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + CHILD_NICENESS)
    except (AttributeError, OSError):
        pass


def _warm_up() -> None:
    """In the child: the front end's imports, before the first kernel arrives."""
    import engine.compiler.design_space  # noqa: F401


def _compile_pickled(path: str, text: str, defines: dict, simd_touch_space: bool = False
                     ) -> tuple[bytes | None, str, int | None]:
    """In the child: (the pickled DesignSpace or None, error, error line)."""
    result = compile_work_copy(Path(path), text, defines, simd_touch_space)
    space = pickle.dumps(result.space, protocol=pickle.HIGHEST_PROTOCOL) if result.space is not None else None
    return space, result.error, result.error_line


class CompileHost:
    """One child process, started (from the GUI thread) when made."""

    def __init__(self):
        self._executor = ProcessPoolExecutor(1, mp_context=spawn_context(),
                                             initializer=_start, initargs=(os.getpid(),))
        self._executor.submit(_warm_up)
        self.broken = False

    def compile(self, path: Path, text: str, defines: dict, simd_touch_space: bool = False) -> Compiled:
        """In a worker thread: the child compiles (this thread waits without the GIL, importing the
        compiler meanwhile, which unpickling needs); a child that died, or a pickling failure, falls
        back to compiling in this thread."""
        if not self.broken:
            try:
                future = self._executor.submit(_compile_pickled, str(path), text, dict(defines), simd_touch_space)
            except (BrokenProcessPool, RuntimeError):
                self.broken = True
            else:
                import engine.compiler.design_space  # noqa: F401 (while the child works)

                try:
                    data, error, line = future.result()
                    return Compiled(text, defines, pickle.loads(data) if data is not None else None, error, line,
                                    simd_touch_space)
                except BrokenProcessPool:  # the child died: compiled in this thread from now on
                    self.broken = True
                except Exception:  # noqa: BLE001 (a space that did not pickle: compiled here this time)
                    pass
        return compile_work_copy(path, text, defines, simd_touch_space)

    def shutdown(self, timeout: float = 2.0) -> None:
        """End the child (idle: the window waited for its compilation). Joined here, then terminated
        if need be: left to the executor's thread at interpreter exit, the stop message could be
        lost with the queue's feeder thread and the exit wait for the child for ever."""
        processes = list((getattr(self._executor, "_processes", None) or {}).values())
        self._executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(timeout)
            if process.is_alive():
                process.terminate()
                process.join(timeout)
