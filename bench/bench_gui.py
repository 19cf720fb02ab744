"""Explorer responsiveness: the event loop's longest stall during a live search with the window shown.

    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py [--seconds 2] [--designs 3|all] [--runs 1] [--trace]
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --select

Opens the main window at the screenshot size, shows it, starts a search (hybrid, the budget given,
every 7th design or all designs) and probes the event loop with a 10 ms timer. Prints per run the
longest gap between probe ticks, the progress rate and the wall time from Start to the end of the
search against the budget. `--trace` also lists the gaps over 50 ms, garbage collections over 10 ms
and every event that took over 20 ms to handle (BENCH_GUI_SLOW_MS changes that: event type,
receiver class, wall and CPU time, from QApplication.notify), the ones around a stall being its cause.
`--select` instead clicks through every design of the tree (each builds its model) and prints the
longest gap. Target (issue 6): no stall over 100 ms.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEvent, QEventLoop, QItemSelectionModel, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from app.__main__ import SCREEN_SIZE
from app.main_window import MainWindow
from app.views import theme

SLOW_EVENT = float(os.environ.get("BENCH_GUI_SLOW_MS", "20")) / 1000


class TracingApplication(QApplication):
    """Records (start, seconds, CPU seconds, event type, receiver class) of every top-level event slower than SLOW_EVENT."""

    def __init__(self, argv):
        super().__init__(argv)
        self.slow: list[tuple[float, float, str, str]] = []
        self.depth = 0
        self.cpu = 0.0  # main-thread CPU seconds spent handling top-level events

    def notify(self, receiver, event):
        self.depth += 1
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return super().notify(receiver, event)
        finally:
            self.depth -= 1
            used = time.thread_time() - cpu
            if self.depth == 0:
                self.cpu += used
            spent = time.perf_counter() - start
            if spent > SLOW_EVENT and self.depth == 0:
                self.slow.append((start, spent, used, QEvent.Type(event.type()).name, type(receiver).__name__))


class GcPauses:
    """Records (start, seconds, generation) of the main thread's garbage collections over 10 ms."""

    def __init__(self):
        self.pauses: list[tuple[float, float, int]] = []
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._start = now
        elif now - self._start > 0.010:
            self.pauses.append((self._start, now - self._start, info["generation"]))


GC = GcPauses()


def run_once(app, window, seconds: float, designs: str, trace: bool) -> dict:
    panel = window.search_panel
    panel.method.setCurrentText("hybrid")
    panel.seconds.setValue(seconds)
    ids = window.tree_model.design_ids()
    if designs == "all":
        panel.scope.setCurrentIndex(0)
    else:
        chosen = ids[::7][: int(designs)]
        selection = window.tree.selectionModel()
        selection.clearSelection()
        for design in chosen:
            selection.select(window.tree_model.index_of(design), QItemSelectionModel.Select | QItemSelectionModel.Rows)
        panel.scope.setCurrentIndex(1)
    gaps, ticks, last = [], [], [None]

    def probe():
        now = time.perf_counter()
        if last[0] is not None:
            gaps.append((now - last[0], last[0]))
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(probe)
    window.search.ticked.connect(lambda _: ticks.append(time.perf_counter()))
    loop = QEventLoop()
    window.search.stateChanged.connect(lambda: None if window.search.running else loop.quit())
    if trace:
        app.slow.clear()
        app.cpu = 0.0
    timer.start()
    started = time.perf_counter()
    panel.start_button.click()
    loop.exec()
    ended = time.perf_counter()
    timer.stop()
    worst, at = max(gaps) if gaps else (0.0, started)
    out = {"worst_ms": worst * 1000, "at_s": at - started, "rate_hz": (len(ticks) - 1) / (ticks[-1] - ticks[0])
           if len(ticks) > 1 else 0.0, "wall_s": ended - started, "over_100": sum(g > 0.1 for g, _ in gaps),
           "status": window.search.status, "message": window.search.message}
    if trace:
        out["slow"] = [(s - started, d, c, kind, receiver) for s, d, c, kind, receiver in app.slow if s >= started]
        out["gc"] = [(at - started, spent, generation) for at, spent, generation in GC.pauses if at >= started]
        out["stalls"] = [(at - started, gap) for gap, at in gaps if gap > 0.05]
        out["started"] = started
        out["cpu"] = app.cpu
    return out


def select_all(app, window) -> dict:
    """Select every design in the tree in turn (a model is built for each), probing the event loop."""
    gaps, last = [], [None]

    def probe():
        now = time.perf_counter()
        if last[0] is not None:
            gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(probe)
    timer.start()
    started = time.perf_counter()
    loop = QEventLoop()
    window.selection.changed.connect(lambda: None if getattr(window.selection, "busy", False) else loop.quit())
    for design in window.tree_model.design_ids():
        window.tree.select_design(design)  # builds its model, on the GUI thread or in a worker
        if getattr(window.selection, "busy", False):
            loop.exec()
        QTimer.singleShot(50, loop.quit)  # let the views repaint before the next design
        loop.exec()
    timer.stop()
    return {"worst_ms": max(gaps) * 1000 if gaps else 0.0, "wall_s": time.perf_counter() - started,
            "designs": len(window.tree_model.design_ids())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--designs", default="3", help="how many designs (every 7th), or 'all'")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--trace", action="store_true", help="list events slower than 20 ms")
    parser.add_argument("--select", action="store_true",
                        help="instead of searching, select every design in turn (each builds its model)")
    args = parser.parse_args()
    app = TracingApplication([sys.argv[0]]) if args.trace else QApplication([sys.argv[0]])
    theme.apply(app)
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_gui"
    folder.mkdir(exist_ok=True)
    os.environ.setdefault("SYSTOLIC_STUDIO_DB", str(folder / "runs.sqlite"))
    window = MainWindow(settings=QSettings(str(folder / "settings.ini"), QSettings.IniFormat))
    window.resize(*SCREEN_SIZE)
    window.show()
    app.processEvents()
    if args.select:
        if args.trace:
            app.slow.clear()
        r = select_all(app, window)
        for start, spent, cpu, kind, receiver in getattr(app, "slow", []):
            print(f"      {spent * 1000:6.0f} ms  {kind:24} {receiver} ({cpu * 1000:.0f} ms CPU)")
        for start, spent, generation in GC.pauses:
            print(f"      {spent * 1000:6.0f} ms  garbage collection, generation {generation}")
        print(f"selected {r['designs']} designs in {r['wall_s']:.2f} s; longest event-loop gap {r['worst_ms']:.0f} ms")
        window.close()
        return
    print(f"{'run':>3} {'worst ms':>9} {'at s':>6} {'>100ms':>6} {'ticks/s':>8} {'wall s':>7} {'budget':>7}  status")
    for n in range(args.runs):
        r = run_once(app, window, args.seconds, args.designs, args.trace)
        print(f"{n:>3} {r['worst_ms']:>9.0f} {r['at_s']:>6.2f} {r['over_100']:>6} {r['rate_hz']:>8.1f} "
              f"{r['wall_s']:>7.2f} {args.seconds:>7.1f}  {r['status']} {r['message']}")
        if args.trace:
            print(f"      search started at perf_counter {r['started']:.3f}; main thread busy {r['cpu']:.2f} s CPU "
                  f"in events ({r['cpu'] / r['wall_s']:.0%} of the wall time)")
        for start, spent, generation in r.get("gc", []):
            print(f"      {start:7.3f} s  {spent * 1000:6.0f} ms  garbage collection, generation {generation}")
        for start, gap in r.get("stalls", []):
            print(f"      {start:7.3f} s  {gap * 1000:6.0f} ms  stall (probe gap)")
        for start, spent, cpu, kind, receiver in r.get("slow", []):
            print(f"      {start:7.3f} s  {spent * 1000:6.0f} ms  {kind:24} {receiver} ({cpu * 1000:.0f} ms CPU)")
    window.search.shutdown()
    window.close()


if __name__ == "__main__":
    main()
