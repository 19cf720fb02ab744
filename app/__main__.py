"""`systolic-studio [PROJECT | KERNEL.c]` / `python -m app`: opens the explorer (on the bundled
matrix-multiply kernel by default).

`--screenshot PATH [--search-seconds S]` opens the window offscreen, runs a short search on the
kernel, prints its best on one line (`search: GOP/s on DESIGN, ...`), selects the best design, writes a PNG of the whole window, one with the Bottleneck view
(`<PATH stem>-bottleneck.png`) and one with the two best designs pinned in the Compare view
(`<PATH stem>-compare.png`), with the default layout (fresh settings, nothing remembered), and exits 0; it exits 2 with the reason when the project or kernel
cannot be opened or does not compile.

`--demo` starts the demo (Search > Demo: the bundled MM, every design, hybrid, a fixed seed and
sample budget: the same result every time).
`--time-launch` prints the wall-clock times (time.time()) of the window's first paint (with the
process's CPU seconds until then), of its parts built after the first paint (search panel, Pods,
Network, Proof: `panels`) and of its designs listed, then exits: bench/bench_gui.py --launch
measures the launch with it.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from app.main_window import MainWindow
from app.views import theme
from engine.resources import DEFAULT_KERNEL

SCREEN_SIZE = (1680, 1020)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="systolic-studio", description="Explore, tune and export systolic arrays.")
    parser.add_argument("file", nargs="?", help="a project file or a C kernel (default: the bundled mm.c)")
    parser.add_argument("--screenshot", metavar="PATH", help="run a short search offscreen, save a PNG, exit")
    parser.add_argument("--search-seconds", type=float, default=6.0, metavar="S",
                        help="search budget of --screenshot (default 6)")
    parser.add_argument("--method", default="hybrid", help="search method of --screenshot (default hybrid)")
    parser.add_argument("--demo", action="store_true",
                        help="start the demo: the bundled MM, every design, a fixed seed and sample budget "
                             "(Search > Demo)")
    parser.add_argument("--time-launch", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # read when the QApplication is made
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("Systolic Studio")
    theme.apply(app, str(QSettings("systolic-studio", "systolic-studio").value("theme", "system")))
    path = Path(args.file) if args.file else DEFAULT_KERNEL
    is_kernel = path.suffix == ".c"
    # --screenshot: the default layout, never one remembered from an earlier session
    settings = QSettings(str(Path(tempfile.mkdtemp(prefix="systolic-screenshot-")) / "settings.ini"),
                         QSettings.IniFormat) if args.screenshot else None
    window = MainWindow(path if is_kernel else DEFAULT_KERNEL, settings=settings)
    opened = window.session.path == path if is_kernel else window.open_project(path)
    window.resize(*SCREEN_SIZE)
    if args.time_launch:
        probe = _LaunchProbe(window)  # noqa: F841 (kept alive until the loop ends)
    window.show()
    if args.screenshot and not opened:  # the message box says why in the window; the command says it here
        print(f"error: {window.last_message or f'cannot open {path}'}", file=sys.stderr)
        code = 2
    elif args.screenshot:
        code = _screenshot(window, Path(args.screenshot), args.search_seconds, args.method)
    else:
        if args.demo:
            window.start_demo()
        code = app.exec()
    _dispose(app, window)
    if argv is None:  # the real command: skip interpreter finalization, see _exit_now
        _exit_now(code)
    return code


class _LaunchProbe(QObject):
    """--time-launch: prints when the window first paints, when its deferred parts are built and
    when its designs are listed, then quits."""

    def __init__(self, window):
        super().__init__(window)
        self.window, self.painted, self.panels = window, False, False
        window.installEventFilter(self)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._check)
        self.timer.start(20)

    def eventFilter(self, obj, event) -> bool:
        if not self.painted and event.type() == QEvent.Paint:
            self.painted = True
            print(f"first-paint {time.time():.3f} {time.process_time():.3f}", flush=True)
        return False

    def _check(self) -> None:
        w = self.window
        if self.painted and not self.panels and w.panels_built:
            self.panels = True
            print(f"panels {time.time():.3f}", flush=True)
        if self.painted and self.panels and not w.session.compiling and w.tree_model.design_ids() and not w.selection.busy:
            print(f"designs {time.time():.3f}", flush=True)
            self.timer.stop()
            QTimer.singleShot(0, QApplication.instance().quit)


def _exit_now(code: int) -> None:
    """Exit without interpreter finalization: with PySide6 6.12 on Python 3.11 the final garbage
    collection of Qt wrappers sometimes aborts the process after the work is done (exit code 134).
    Everything worth keeping is already written: runs are committed, settings synced on close."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _dispose(app, window) -> None:
    """Delete the window while Python still runs: left to interpreter shutdown, PySide6 and
    pyqtgraph objects can be collected in an order that crashes."""
    window.close()
    window.deleteLater()
    app.sendPostedEvents(None, 0)
    app.processEvents()
    gc.collect()


def _search_line(result, seconds: float, designs: int) -> str:
    """`search: BEST GOP/s on DESIGN, SEARCHED of DESIGNS designs searched, SAMPLES samples, S s budget`."""
    if result is None:
        return f"search: none, {seconds:g} s budget"
    best = result.best
    return (f"search: {best.best.throughput_gops if best else 0.0:.1f} GOP/s on {best.design if best else '-'}, "
            f"{sum(1 for d in result.designs if d.samples)} of {designs} designs searched, "
            f"{sum(d.samples for d in result.designs)} samples, {seconds:g} s budget")


def _screenshot(window, path: Path, seconds: float, method: str) -> int:
    """A local event loop, not app.exec()/quit(): quitting the application would stop later loops
    of a process that goes on (tests call main())."""
    outcome, loop = {"code": 1}, QEventLoop()

    def finished():
        if window.search.running:
            return
        print(_search_line(window.search.result, seconds, len(window.tree_model.design_ids())), flush=True)  # bench/bench_gui.py --screenshot reads it
        window.focus.select_best()
        QTimer.singleShot(500, grab)

    def grab():
        if window.selection.busy:  # the best design's model and topology are built in a worker
            QTimer.singleShot(100, grab)
            return
        window.search_panel.redraw()
        ok = window.grab().save(str(path))
        window.views.setCurrentWidget(window.bottleneck)
        ok = ok and window.grab().save(str(path.with_name(f"{path.stem}-bottleneck{path.suffix}")))
        window.compare_view.pin_selected()
        ranked = sorted(window.tree_model.best, key=lambda d: -window.tree_model.best[d].throughput_gops)
        if len(ranked) > 1:
            window.focus.load(ranked[1], window.tree_model.best[ranked[1]].params)
            QTimer.singleShot(100, compare)
        else:
            compare()

    def compare():
        if window.selection.busy:
            QTimer.singleShot(100, compare)
            return
        window.compare_view.pin_selected()
        window.show_view(window.compare_view)
        window.focus.select_best()
        QTimer.singleShot(300, finish)

    def finish():
        if window.selection.busy:
            QTimer.singleShot(100, finish)
            return
        ok = window.grab().save(str(path.with_name(f"{path.stem}-compare{path.suffix}")))
        window.views.setCurrentWidget(window.topology_panel)
        if not ok:
            print(f"error: cannot write the screenshots next to {path}", file=sys.stderr)
        outcome["code"] = 0 if ok else 2
        loop.quit()

    while window.session.compiling:  # the kernel compiles off the GUI thread
        QApplication.processEvents(QEventLoop.AllEvents, 50)
    if window.session.space is None:
        print(f"error: {window.session.error or window.last_message or 'the kernel did not compile'}",
              file=sys.stderr)
        return 2
    window.search.stateChanged.connect(finished)
    window.search_panel.method.setCurrentText(method)
    window.search_panel.seconds.setValue(seconds)
    window.start_search(method, seconds, False)
    loop.exec()
    return outcome["code"]


if __name__ == "__main__":
    sys.exit(main())
