"""TaskWorker(fn): a QThread that runs one engine call (an export, a C simulation, a design's model)
and reports `succeeded(result)` or `failed(one-line message)` as queued signals; engine errors keep
their text, anything else becomes one line too, never a traceback.

Its owner must not be reachable from the worker: neither `fn` nor a slot connected to its signals may
be a closure over the owner (connect bound methods, keep per-call data on the owner). A worker that is
the owner's child and holds its last reference frees it from inside its own destructor (deleteLater),
and the owner's destructor then deletes that half-destroyed child again: a segfault. See
KernelSession.compile for a worker that belongs to the application and deletes itself when done.

`background=True` lowers the thread's scheduling priority where the system allows it (Linux: a
thread's own nice value), so that on a busy machine the GUI thread gets the core first: a worker
at the same priority takes half of it, and every repaint takes twice as long."""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

from PySide6.QtCore import QThread, Signal

from engine.errors import EngineError


class TaskWorker(QThread):
    succeeded = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[], object], parent=None, *, background: bool = False):
        super().__init__(parent)
        self.fn, self.background = fn, background

    def run(self) -> None:
        if self.background:
            _lower_this_thread()
        try:
            result = self.fn()
        except EngineError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 (shown in the dialog)
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.succeeded.emit(result)


BACKGROUND_NICENESS = 10


def _lower_this_thread() -> None:
    if not sys.platform.startswith("linux"):  # elsewhere a thread id is no process id: it could be another's
        return
    try:  # on Linux the id of a thread is a "process" id of its own for setpriority
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICENESS)
    except OSError:  # not allowed: the thread runs as is
        pass
