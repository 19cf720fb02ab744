"""The search panel's cost on the GUI thread, without a search process: a replayed stream of
synthetic progress ticks (10 per second, as the search worker sends them; designs searched one
after another, each improving a few times and reporting its recent points) fed to a shown
QtSearchPanel, with a 10 ms probe timer. Prints the GUI thread's CPU seconds, the longest CPU
time between two probe ticks (what becomes a stall on a loaded machine: the window gets a share
of a core, so a gap's wall time is about its CPU time times the runnable tasks per core), and
the longest wall gap.

    QT_QPA_PLATFORM=offscreen python bench/bench_search_plots.py [--seconds 6] [--designs 27] [--runs 3]
        [--tab seen|kept|rate] [--baseline DIR]

`--baseline DIR` runs the same stream against another checkout's panel (`git archive REV | tar -x
-C DIR`), alternating run by run in new processes, and prints the medians' ratios."""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_S = 0.1  # the search worker's tick


def stream(seconds: float, designs: int, seed: int = 1) -> list[tuple[float, list]]:
    """(elapsed, snapshots) per tick: designs searched in turn, each a share of the time."""
    from engine.search.progress import Candidate, Progress
    rng = random.Random(seed)
    ticks, share = [], seconds / designs
    best: dict[str, float] = {}
    samples: dict[str, int] = {}
    for n in range(int(seconds / TICK_S)):
        elapsed = (n + 1) * TICK_S
        design = f"design_{min(int(elapsed / share), designs - 1):02d}"
        samples[design] = samples.get(design, 0) + rng.randint(300, 900)
        if rng.random() < 0.3 or design not in best:
            best[design] = max(best.get(design, 0.0), rng.uniform(100, 1000))
        gops = best[design]
        candidate = Candidate({"p": n}, 1e9 / gops, rng.randint(100, 4000), rng.randint(10, 500), gops)
        recent = tuple((10 ** rng.uniform(5, 8), rng.uniform(0, 4000)) for _ in range(32))
        ticks.append((elapsed, [Progress(design, "hybrid", samples[design], elapsed, candidate, recent=recent)]))
    return ticks


def run_once(seconds: float, designs: int, tab: str, trace: bool = False) -> dict:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.models.search_session import SearchSession
    from app.views import theme
    from app.views.qt_search_panel import QtSearchPanel

    slow = []

    class Tracing(QApplication):
        depth = 0

        def notify(self, receiver, event):  # top-level events over 4 ms of CPU, with --trace
            self.depth += 1
            cpu = time.thread_time()
            try:
                return super().notify(receiver, event)
            finally:
                self.depth -= 1
                used = time.thread_time() - cpu
                if trace and self.depth == 0 and used > 0.004:
                    slow.append((time.perf_counter(), used, event.type().name, type(receiver).__name__))

    app = QApplication.instance() or Tracing([sys.argv[0]])
    theme.apply(app)
    session = SearchSession()
    panel = QtSearchPanel(session)
    panel.resize(1000, 520)
    panel.result_tabs.setCurrentIndex({"seen": 0, "kept": 1, "rate": 2}[tab])
    panel.show()
    for _ in range(20):
        app.processEvents()
    ticks = stream(seconds, designs)
    wall0 = 0.0
    probe = {"last": None, "cpu": None, "gaps": [], "cpu_gaps": []}

    def tick_probe():
        now, cpu = time.perf_counter(), time.thread_time()
        if probe["last"] is not None:
            probe["gaps"].append(now - probe["last"])
            probe["cpu_gaps"].append((cpu - probe["cpu"], probe["last"] - wall0))
        probe["last"], probe["cpu"] = now, cpu

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick_probe)
    feed = QTimer()
    feed.setInterval(int(TICK_S * 1000))
    loop = QEventLoop()
    position = [0]

    def next_tick():
        if position[0] == len(ticks):
            feed.stop()
            session.worker, session.status = None, "finished"
            session.stateChanged.emit()
            QTimer.singleShot(300, loop.quit)  # the last redraw and its scatter pass
            return
        elapsed, snapshots = ticks[position[0]]
        position[0] += 1
        session._tick(snapshots, elapsed)  # as the worker's queued signal does

    feed.timeout.connect(next_tick)
    session.budget, session.status, session.worker = seconds, "running", object()
    session.budget_started_at, session.phase = time.perf_counter(), "searching"
    cpu0 = time.thread_time()
    wall0 = time.perf_counter()
    session.stateChanged.emit()
    timer.start()
    feed.start()
    loop.exec()
    timer.stop()
    out = {"cpu_s": time.thread_time() - cpu0, "wall_s": time.perf_counter() - wall0,
           "worst_cpu_ms": max(probe["cpu_gaps"])[0] * 1000, "worst_cpu_at": max(probe["cpu_gaps"])[1],
           "worst_ms": max(probe["gaps"]) * 1000,
           "curves": len(panel.design_curves), "overall": len(panel.overall.getData()[1])}
    panel.close()
    for at, used, kind, receiver in slow:
        print(f"      {at - wall0:7.3f} s {used * 1000:6.1f} ms CPU  {kind:20} {receiver}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--designs", type=int, default=27)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tab", choices=("seen", "kept", "rate"), default="seen", help="the tab shown beside")
    parser.add_argument("--baseline", metavar="DIR", help="alternate with the checkout in DIR")
    parser.add_argument("--trace", action="store_true", help="run once here, list events over 4 ms of CPU")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or args.trace:  # one run in this process, its figures on one line
        r = run_once(args.seconds, args.designs, args.tab, args.trace)
        print(" ".join(f"{k}={v}" for k, v in r.items()))
        return
    here = Path(__file__).resolve().parents[1]
    roots = {"this": here} | ({"baseline": Path(args.baseline).resolve()} if args.baseline else {})
    print(f"{'run':>3} {'checkout':>9} {'GUI CPU s':>10} {'worst CPU gap ms':>17} {'worst gap ms':>13} "
          f"{'wall s':>7} {'curves':>7} {'load':>5}")
    rows: dict[str, list] = {name: [] for name in roots}
    for n in range(args.runs):
        for name, root in roots.items():
            env = {**os.environ, "PYTHONPATH": str(root)}
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--seconds",
                                  f"{args.seconds:g}", "--designs", str(args.designs), "--tab", args.tab],
                                 capture_output=True, text=True, cwd=root, env=env)
            line = next((x for x in out.stdout.splitlines() if x.startswith("cpu_s=")), None)
            if line is None:
                print(f"{n:>3} {name:>9} failed: {out.stderr[-600:]}")
                continue
            r = {k: float(v) for k, v in (w.split("=") for w in line.split())}
            rows[name].append(r)
            print(f"{n:>3} {name:>9} {r['cpu_s']:>10.3f} {r['worst_cpu_ms']:>17.1f} {r['worst_ms']:>13.1f} "
                  f"{r['wall_s']:>7.2f} {r['curves']:>7.0f} {os.getloadavg()[0]:>5.1f}", flush=True)
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in ("cpu_s", "worst_cpu_ms", "worst_ms")}
               for name, rs in rows.items() if rs}
    for name, m in medians.items():
        print(f"median {name:>9} {m['cpu_s']:>10.3f} {m['worst_cpu_ms']:>17.1f} {m['worst_ms']:>13.1f}")
    if "baseline" in medians and "this" in medians:
        a, b = medians["this"], medians["baseline"]
        print(f"this / baseline: GUI CPU {a['cpu_s'] / b['cpu_s']:.2f}, worst CPU gap "
              f"{a['worst_cpu_ms'] / b['worst_cpu_ms']:.2f}, worst gap {a['worst_ms'] / b['worst_ms']:.2f}")


if __name__ == "__main__":
    main()
