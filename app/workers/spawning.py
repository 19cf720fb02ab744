"""multiprocessing's spawn start method -> one whose children leave the parent's main script alone.

A spawned child re-runs the parent's main script (as `__mp_main__`) before it runs its target,
unless that script is a package's `__main__` (`python -m app`). The installed `systolic-studio`
command and scripts such as bench/bench_gui.py are plain scripts whose imports are the whole
window (PySide6, app.main_window, the views): each child of the window (search, compile,
selection, model pool, verification, floorplan) paid for them before its own work, ~2 s of CPU at
start that a search started on a cold cache waited for. The targets of these children live in
app.workers and the engine, never in a main script, so the children need nothing from it."""
from __future__ import annotations

import sys
import threading
from importlib.machinery import ModuleSpec
from multiprocessing.context import SpawnContext, SpawnProcess

_MAIN_LOCK = threading.Lock()  # processes are started from the GUI thread and from executors' threads


class _Process(SpawnProcess):
    @staticmethod
    def _Popen(process_obj):  # noqa: N802 (multiprocessing's name)
        """The child's preparation data are read while the main module is named `__main__`: the child
        then leaves its own main module as it is (multiprocessing.spawn._fixup_main_from_name)."""
        main = sys.modules["__main__"]
        with _MAIN_LOCK:
            saved = getattr(main, "__spec__", None)
            main.__spec__ = ModuleSpec("__main__", None)
            try:
                return SpawnProcess._Popen(process_obj)
            finally:
                main.__spec__ = saved


class _Context(SpawnContext):
    Process = _Process


CONTEXT = _Context()


def spawn_context() -> SpawnContext:
    """The context every child process of the window is started with (Process, Queue, Event, and
    `mp_context` of a ProcessPoolExecutor)."""
    return CONTEXT
