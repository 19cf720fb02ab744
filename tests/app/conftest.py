"""Fixtures of the GUI tests: fail any test that leaves a QThread running or a QTimer active
(napari's `_dangling_qthreads` idea: starts are recorded by patching QThread.start / QTimer.start),
a run database and QSettings in the test's temp folder, a main window that is closed after, and a
wait for a DesignSelection's worker."""
from __future__ import annotations

import gc
import os
import weakref

import pytest
from PySide6.QtCore import QSettings, QThread, QTimer


@pytest.fixture(autouse=True)
def no_dangling_threads_or_timers(monkeypatch, qtbot):
    threads, timers = weakref.WeakSet(), weakref.WeakSet()
    thread_start, timer_start = QThread.start, QTimer.start

    def start_thread(self, *args):
        threads.add(self)
        return thread_start(self, *args)

    def start_timer(self, *args):
        timers.add(self)
        return timer_start(self, *args)

    monkeypatch.setattr(QThread, "start", start_thread)
    monkeypatch.setattr(QTimer, "start", start_timer)
    yield
    running = [t for t in threads if _alive(t, "isRunning")]
    active = [t for t in timers if _alive(t, "isActive")]
    names = sorted(type(t).__name__ + (f" {t.objectName()!r}" if t.objectName() else "") for t in running)
    for thread in running:  # do not leak into the next test, but still fail this one
        thread.quit()
        thread.wait(3000)
    assert not running, f"test left {len(running)} QThread(s) running: {', '.join(names)}"
    assert not active, f"test left {len(active)} QTimer(s) active"


def _alive(obj, method: str) -> bool:
    try:
        return getattr(obj, method)()
    except RuntimeError:  # the C++ object is already deleted
        return False


@pytest.fixture(autouse=True)
def collect_on_the_gui_thread():
    """After each test, collect its cyclic garbage here, on the GUI thread: left to a collection that
    an allocation in a later test's worker thread triggers, Qt objects of this test would be
    destroyed from that thread while the GUI thread may deliver events to them (a suspect of the
    intermittent "pure virtual method called" aborts when many GUI tests run in one process)."""
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def run_database(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    monkeypatch.setenv("SYSTOLIC_STUDIO_DB", str(path))
    return path


@pytest.fixture(scope="session")
def model_cache_folder(tmp_path_factory):
    """Under xdist, one folder for the run's workers (their temporary folders' parent): entries are
    keyed by content and written whole, and a model is built once however many processes ask for it
    (engine/models/cache.py), so a worker reads the bundled kernel's models another one built."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / "model-cache"
        folder.mkdir(exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def model_cache(model_cache_folder, monkeypatch):
    """One model cache for the session's tests (not the user's): built models are reused across tests."""
    monkeypatch.setenv("SYSTOLIC_STUDIO_CACHE", str(model_cache_folder))
    return model_cache_folder


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture
def make_window(qtbot, settings):
    from app.main_window import MainWindow

    windows = []

    def make(*args, **kwargs):
        window = MainWindow(*args, settings=settings, **kwargs)
        qtbot.addWidget(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.topology_panel.floorplan.shutdown()
        if window.sweep_view is not None:
            window.sweep_view.sweep.wait()
        window.points.wait()
        window.session.wait()
        window.models.shutdown()
        window.search.shutdown()
        window.selection.shutdown(60000)


@pytest.fixture
def settle(qtbot):
    """settle(selection): wait until its worker has evaluated the latest design and values."""
    # the cap only matters when something is wrong: a busy 2-core machine (CI beside other work) can
    # take a minute to build a design's models the first time

    def wait(selection, timeout: int = 180000):
        qtbot.waitUntil(lambda: not selection.busy, timeout=timeout)

    return wait


@pytest.fixture
def compiled(qtbot):
    """compiled(window): wait until the window's kernel is compiled (it compiles off the GUI thread)."""

    def wait(window, timeout: int = 180000):
        qtbot.waitUntil(lambda: not window.session.compiling, timeout=timeout)

    return wait


@pytest.fixture
def small_mm(bundled):
    """The bundled matrix multiply, resized small so that searches and topologies are quick."""
    return bundled("mm")


@pytest.fixture
def tiny_mm(write_kernel):
    """A matrix multiply of 32^3: quick models, quick searches."""
    return write_kernel("""\
        for (int i = 0; i < 32; i++)
          for (int j = 0; j < 32; j++)
            for (int k = 0; k < 32; k++)
              C[i][j] += A[i][k] * B[k][j];
        """, prelude="float A[32][32], B[32][32], C[32][32];\n", name="tiny.c")


@pytest.fixture
def matrix_vector(write_kernel):
    """A matrix-vector product of 16^2: 15 designs of two loops, whose models build in about a third
    of the time of the matrix multiply's 27 (for tests of what happens per design, not of a design)."""
    return write_kernel("""\
        for (int i = 0; i < 16; i++)
          for (int j = 0; j < 16; j++)
            y[i] += A[i][j] * x[j];
        """, prelude="float A[16][16], x[16], y[16];\n", name="mv.c")
