"""A KernelSession freed while its compilation runs, or right after it, is destroyed at once on the
GUI thread and its worker thread ends and is deleted on its own (real Qt offscreen, pytest-qt).

Before the fix the worker, a child of the session, held the session through a closure connected to
its `failed` signal: the session outlived its last reference, and the worker's deleteLater then freed
it from inside the worker's destructor, which deleted that half-destroyed worker a second time (a
segfault in the event loop); freed mid-compile, it would have been destroyed with its thread running
once the worker let go (Qt aborts: "QThread: Destroyed while thread is still running")."""
from __future__ import annotations

import threading
import time
import weakref

from PySide6.QtCore import QCoreApplication, QEvent

from app.models.kernel_session import KernelSession
from app.workers.compile_process import compile_work_copy

SIZES = {"I": 32, "J": 32, "K": 32}


class GatedHost:
    """Compiles in the worker thread as a compile process's fallback would, once the test opens the
    gate: the test frees the session while the compilation is certainly running."""

    def __init__(self, error: str | None = None):
        self.started, self.gate, self.error = threading.Event(), threading.Event(), error

    def compile(self, path, text, defines, simd_touch_space=False):  # CompileHost.compile's signature
        self.started.set()
        self.gate.wait(120)
        if self.error is not None:
            raise RuntimeError(self.error)
        return compile_work_copy(path, text, defines, simd_touch_space)


def _open(bundled, host=None) -> tuple[KernelSession, weakref.ref]:
    session = KernelSession()
    session.asynchronous = True
    session.host = host
    session.open(bundled("mm"), overrides=SIZES)
    assert session.compiling and session._worker is not None
    return session, weakref.ref(session._worker)


def _deleted(worker: weakref.ref) -> bool:
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return worker() is None


def test_a_session_freed_mid_compile_is_destroyed_and_its_worker_ends(bundled, qtbot):
    host = GatedHost()
    session, worker = _open(bundled, host)
    assert host.started.wait(60)
    freed = weakref.ref(session)
    del session
    assert freed() is None, "something still holds the session whose owner let it go"
    assert worker() is not None and worker().isRunning()
    host.gate.set()
    qtbot.waitUntil(lambda: _deleted(worker), timeout=120000)


def test_a_session_freed_after_its_compile_is_destroyed_and_its_worker_deleted(bundled, qtbot):
    session, worker = _open(bundled)
    # processEvents alone (qtbot's waits also deliver deleteLater's events): the worker's deletion is
    # still pending when the session is freed, as it was when the process segfaulted
    deadline = time.monotonic() + 120
    while session.compiling and time.monotonic() < deadline:
        QCoreApplication.processEvents()
        time.sleep(0.01)
    assert session.space is not None and session.error == ""
    assert worker() is not None, "the worker was deleted before the session was freed"
    freed = weakref.ref(session)
    del session
    assert freed() is None, "something still holds the session whose owner let it go"
    qtbot.waitUntil(lambda: _deleted(worker), timeout=10000)


def test_a_compilation_that_raises_reports_its_error(bundled, qtbot):
    host = GatedHost("the compile process vanished")
    host.gate.set()
    session, worker = _open(bundled, host)
    qtbot.waitUntil(lambda: not session.compiling, timeout=120000)
    assert session.space is None and session.error == "RuntimeError: the compile process vanished"
    assert session.compiled_text == ""
    qtbot.waitUntil(lambda: _deleted(worker), timeout=10000)
