"""Explorer search quality and responsiveness: the window's search against `systolic search` with the
same budget, and the event loop's longest stall while searching, clicking through designs and
compiling a kernel, with the window shown.

    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py [--seconds 6 | --samples N] [--seed S] [--designs all|3] [--runs 1] [--trace]
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --select
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --compile cnn
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --floorplan
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --verify [--seconds 6]
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --cold [--seconds 6] [--stop-at-first-sample]
    QT_QPA_PLATFORM=offscreen python bench/bench_gui.py --launch [--runs 3] [--baseline DIR]
    python bench/bench_gui.py --screenshot /tmp/shot.png [--seconds 6] [--runs 1]

Opens the main window at the screenshot size, shows it, waits for its warm-up (search process and
models, as a person looking at the window would), starts a search (hybrid, the budget given, every
design or every 7th) and probes the event loop with a 10 ms timer. Prints per run the longest gap
between probe ticks (and the most CPU time the GUI thread spent between two ticks, "CPU ms", which
depends less on the machine's load: a gap's wall time is about its CPU time times the runnable
tasks per core), the designs searched, the window's best GOP/s, then the best of
`systolic search --seconds S` run right after on the same designs at the same priority as the
window's search process (nice +10), and their ratio. `--trace` also lists the gaps over 50 ms, garbage collections over 10 ms
and every event that took over 20 ms to handle (BENCH_GUI_SLOW_MS changes that: event type,
receiver class, wall and CPU time, from QApplication.notify), the ones around a stall being its cause.
`--load N` runs N busy loops (nice 0) while measuring, after the warm-up, for a loaded machine
that does not depend on who else uses it (the load average printed includes them and everyone
else's work); `--profile` cProfiles the GUI thread while measuring.
`--select` instead clicks through every design of the tree and prints the longest gap; `--compile K`
opens a bundled kernel (compiled off the GUI thread) and prints the longest gap until its designs
show. `--floorplan` shows AutoSA's large MM array (13x16 PEs x 8 lanes), waits for its quick clock
estimate, colours the topology by SLR and waits for the floorplan (solved in the floorplan process)
and prints the longest gap. `--verify` searches (every design, `--seconds`), then runs the
reduced simulation and C simulation of the best design from the Verify tab and prints the plan
shown, the steps, the wall time and the longest gap of each (issue 29: under 60 s each). `--cold`
empties the model cache, presses Start as soon as the designs are listed and prints the seconds
from the launch to the first sample (issue 29: within 10 s at idle; `--stop-at-first-sample`
presses Stop then, so that runs of two checkouts can alternate in minutes). `--launch` starts `python -m app --time-launch` (a new interpreter, as a user would) and prints
per run the seconds from the start to the window's first paint (and the CPU seconds the process
used until then, which depend less on the machine's load), to its parts built after the first
paint (`panels`: search panel and plots, Proof, Pods, Network) and to its designs listed (the
kernel compiled off the GUI thread, the first design evaluated), and their medians; `--baseline DIR`
alternates with another checkout (`git archive REV | tar -x -C DIR`) and prints the medians'
ratios (the machine is shared: only runs side by side compare). `--screenshot PATH` runs the issue's
demo, `systolic-studio --screenshot PATH --search-seconds S` (a new process), then `systolic search
--seconds S`, and prints both bests side by side. Targets (issue 17): no stall over 100 ms; the window's best within 1% of the CLI's.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

LAUNCHED = time.perf_counter()  # --cold counts from here: the imports below are part of a launch
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEvent, QEventLoop, QItemSelectionModel, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QGraphicsScene

from app.__main__ import SCREEN_SIZE
from app.main_window import MainWindow
from app.views import theme
from app.workers.search_process import CHILD_NICENESS
from engine.resources import DEFAULT_KERNEL, KERNELS

SLOW_EVENT = float(os.environ.get("BENCH_GUI_SLOW_MS", "20")) / 1000


class TracingApplication(QApplication):
    """Records (start, seconds, CPU seconds, event type, receiver class) of every top-level event slower than SLOW_EVENT."""

    def __init__(self, argv):
        super().__init__(argv)
        self.slow: list[tuple[float, float, str, str]] = []
        self.depth = 0
        self.cpu = 0.0  # main-thread CPU seconds spent handling top-level events
        self.by_kind: dict[tuple[str, str], list] = {}  # (event type, receiver) -> [count, CPU seconds]

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
                name = receiver_name(receiver)
                tally = self.by_kind.setdefault((QEvent.Type(event.type()).name, name), [0, 0.0])
                tally[0] += 1
                tally[1] += used
            spent = time.perf_counter() - start
            if spent > SLOW_EVENT and self.depth == 0:
                self.slow.append((start, spent, used, QEvent.Type(event.type()).name, receiver_name(receiver)))

    def costliest(self, n: int = 8) -> list[tuple[str, str, int, float]]:
        """The n (event type, receiver) pairs that took the most main-thread CPU: (type, receiver, count, CPU s)."""
        ranked = sorted(self.by_kind.items(), key=lambda kv: -kv[1][1])[:n]
        return [(kind, receiver, count, cpu) for (kind, receiver), (count, cpu) in ranked]


@contextlib.contextmanager
def profiled(enabled: bool):
    """With `enabled`, profile the block on the thread that enters it (the GUI thread) and print the
    costliest calls after it (BENCH_GUI_CALLEES=1: also what the event loop calls into directly)."""
    if not enabled:
        yield
        return
    import cProfile
    import pstats
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        if os.environ.get("BENCH_GUI_CALLEES"):
            pstats.Stats(profiler).sort_stats("cumulative").print_callees("exec")

def receiver_name(receiver) -> str:
    """The receiver's class; a scene's with its first view's class (whose scene it is)."""
    name = type(receiver).__name__
    if isinstance(receiver, QGraphicsScene) and receiver.views():
        return f"{name} of {type(receiver.views()[0]).__name__}"
    return name


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


def wait_until(app, predicate, timeout: float = 600.0) -> float:
    """Process events until predicate() holds; the seconds it took."""
    started = time.perf_counter()
    while not predicate() and time.perf_counter() - started < timeout:
        app.processEvents()
        time.sleep(0.01)
    return time.perf_counter() - started


class Probe:
    """A 10 ms timer; gaps between its ticks are the event loop's stalls. The GUI thread's CPU time
    between two ticks is the stall's cause, less dependent on the machine's load (on a loaded
    machine the window gets a share of a core: a gap's wall time is about its CPU time times the
    runnable tasks per core)."""

    def __init__(self):
        self.gaps, self.cpu_gaps, self.last, self.last_cpu = [], [], None, 0.0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def _tick(self):
        now, cpu = time.perf_counter(), time.thread_time()
        if self.last is not None:
            self.gaps.append((now - self.last, self.last))
            self.cpu_gaps.append(cpu - self.last_cpu)
        self.last, self.last_cpu = now, cpu

    def start(self):
        self.gaps, self.cpu_gaps, self.last = [], [], None
        self.timer.start()

    def stop(self):
        self.timer.stop()

    def worst(self) -> tuple[float, float]:
        return max(self.gaps) if self.gaps else (0.0, 0.0)

    def worst_cpu(self) -> float:
        return max(self.cpu_gaps, default=0.0)


class BusyLoads:
    """`n` busy loops (`sh -c 'while :; do :; done'` at nice 0) standing for a loaded machine, started
    after the window's warm-up and ended (by their pids) after the measurement, so that the stalls
    are measured under a load that does not depend on who else uses the machine."""

    def __init__(self, n: int):
        self.n, self.processes = n, []

    def __enter__(self):
        self.processes = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(self.n)]
        if self.n:
            time.sleep(1.0)  # the scheduler spreads them
        return self

    def __exit__(self, *exc):
        for process in self.processes:
            process.kill()
            process.wait()
        self.processes = []


def cli_best(seconds: float, designs: list[str], samples: int | None = None,
             seed: int = 0) -> tuple[float, int, float]:
    """(best GOP/s, designs searched, wall s) of `systolic search` on the bundled MM, niced like the
    window's search process, with the window's seed and budget (`samples`: a sample budget)."""
    budget = ["--samples", str(samples)] if samples else ["--seconds", f"{seconds:g}"]
    command = [sys.executable, "-m", "engine.cli.main", "search", str(DEFAULT_KERNEL), *budget, "--seed", str(seed),
               "--json", "--no-store"] + [a for d in designs for a in ("--design", d)]
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True,
                         preexec_fn=lambda: os.nice(CHILD_NICENESS), cwd=Path(__file__).resolve().parents[1])
    wall = time.perf_counter() - started
    data = json.loads(out.stdout)
    searched = sum(1 for d in data["designs"] if d.get("samples"))
    return (data["best"]["throughput_gops"] if data["best"] else 0.0), searched, wall


def run_once(app, window, seconds: float, designs: str, trace: bool, samples: int | None = None,
             seed: int = 0) -> dict:
    panel = window.search_panel
    panel.method.setCurrentText("hybrid")
    panel.budget_kind.setCurrentText("samples" if samples else "seconds")
    if samples:
        panel.samples.setValue(samples)
    panel.seconds.setValue(seconds)
    panel.seed.setText(str(seed))
    ids = window.tree_model.design_ids()
    if designs == "all":
        chosen = ids
        panel.scope.setCurrentIndex(0)
    else:
        chosen = ids[::7][: int(designs)]
        selection = window.tree.selectionModel()
        selection.clearSelection()
        for design in chosen:
            selection.select(window.tree_model.index_of(design), QItemSelectionModel.Select | QItemSelectionModel.Rows)
        panel.scope.setCurrentIndex(1)
    probe, ticks = Probe(), []
    window.search.ticked.connect(lambda _: ticks.append(time.perf_counter()))
    loop = QEventLoop()
    window.search.stateChanged.connect(lambda: None if window.search.running else loop.quit())
    if trace:
        app.slow.clear()
        app.by_kind.clear()
        app.cpu = 0.0
    probe.start()
    started = time.perf_counter()
    panel.start_button.click()
    loop.exec()
    ended = time.perf_counter()
    probe.stop()
    gaps = probe.gaps
    worst, at = probe.worst()
    result = window.search.result
    best = result.best.best.throughput_gops if result is not None and result.best else 0.0
    searched = sum(1 for d in result.designs if d.samples) if result is not None else 0
    out = {"worst_ms": worst * 1000, "worst_cpu_ms": probe.worst_cpu() * 1000, "at_s": at - started,
           "rate_hz": (len(ticks) - 1) / (ticks[-1] - ticks[0]) if len(ticks) > 1 else 0.0,
           "wall_s": ended - started, "over_100": sum(g > 0.1 for g, _ in gaps),
           "status": window.search.status, "message": window.search.message, "best": best,
           "searched": searched, "designs": chosen}
    if trace:
        out["slow"] = [(s - started, d, c, kind, receiver) for s, d, c, kind, receiver in app.slow if s >= started]
        out["gc"] = [(at - started, spent, generation) for at, spent, generation in GC.pauses if at >= started]
        out["stalls"] = [(at - started, gap) for gap, at in gaps if gap > 0.05]
        out["started"] = started
        out["cpu"] = app.cpu
    return out


def select_all(app, window) -> dict:
    """Select every design in the tree in turn, probing the event loop."""
    probe = Probe()
    probe.start()
    started = time.perf_counter()
    loop = QEventLoop()
    window.selection.changed.connect(lambda: None if getattr(window.selection, "busy", False) else loop.quit())
    for design in window.tree_model.design_ids():
        window.tree.select_design(design)
        if getattr(window.selection, "busy", False):
            loop.exec()
        QTimer.singleShot(50, loop.quit)  # let the views repaint before the next design
        loop.exec()
    probe.stop()
    return {"worst_ms": probe.worst()[0] * 1000, "worst_cpu_ms": probe.worst_cpu() * 1000,
            "wall_s": time.perf_counter() - started, "designs": len(window.tree_model.design_ids())}


def compile_kernel_shown(app, window, name: str) -> dict:
    """Open a bundled kernel and wait until its designs show, probing the event loop."""
    probe, marks = Probe(), []
    window.session.compiled.connect(lambda: marks.append((time.perf_counter(), "compiled")))
    window.selection.changed.connect(lambda: marks.append(
        (time.perf_counter(), "selection busy" if window.selection.busy else "selection evaluated")))
    probe.start()
    started = time.perf_counter()
    window.open_kernel(KERNELS / f"{name}.c")
    wait_until(app, lambda: not window.session.compiling and window.tree_model.design_ids()
               and window.session.path.stem == name)
    wall = time.perf_counter() - started
    wait_until(app, lambda: time.perf_counter() - started > wall + 0.3)  # the views settle
    probe.stop()
    return {"worst_ms": probe.worst()[0] * 1000, "worst_cpu_ms": probe.worst_cpu() * 1000, "wall_s": wall,
            "designs": len(window.tree_model.design_ids()),
            "started": started, "marks": marks, "stalls": [(at, gap) for gap, at in probe.gaps if gap > 0.05]}


LARGE_MM = ("i-j__i-j.k", {"i_t1": 260, "j_t1": 256, "k_t1": 64, "i_t2": 20, "j_t2": 16, "k_t2": 8})  # 13x16x8


def floorplan_shown(app, window) -> dict:
    """Show AutoSA's large MM array (13x16 PEs x 8 lanes at 1024^3), wait for its quick clock
    estimate, then colour the topology by SLR and wait for the floorplan: the event loop probed."""
    probe, floorplan = Probe(), window.topology_panel.floorplan
    probe.start()
    started = time.perf_counter()
    window.focus.load(*LARGE_MM)
    wait_until(app, lambda: not window.selection.busy and floorplan.is_current())
    quick = time.perf_counter() - started
    window.topology_panel.colours.setCurrentIndex(2)  # colour by SLR: the floorplan is solved
    wait_until(app, lambda: floorplan.plan is not None and floorplan.is_current())
    probe.stop()
    e = floorplan.estimate
    print(f"      quick estimate {quick:.1f} s after the click; floorplan solved {time.perf_counter() - started - quick:.1f} s "
          f"later: {e.floorplanned_mhz:.0f} MHz floorplanned ({e.floorplanned_reason}), {e.unfloorplanned_mhz:.0f} MHz "
          f"plain ({e.unfloorplanned_reason})")
    return {"worst_ms": probe.worst()[0] * 1000, "worst_cpu_ms": probe.worst_cpu() * 1000,
            "wall_s": time.perf_counter() - started, "designs": 1}


def verify_best(app, window, seconds: float) -> None:
    """A search of `seconds` (every design, seed 0) selects the best design; then the Verify tab runs
    the reduced simulation and the reduced C simulation of it, one after the other, as a person
    clicking its buttons would: per run the plan shown before starting, the steps with their times,
    the wall time and the event loop's longest gap."""
    r = run_once(app, window, seconds, "all", False)
    s = window.selection
    wait_until(app, lambda: not s.busy)
    print(f"search {seconds:g} s: best {r['best']:.1f} GOP/s; selected {s.design.id} "
          f"{s.report['throughput_gops']:.1f} GOP/s {dict((k, v) for k, v in s.values.items())}")
    wait_until(app, lambda: window.points._worker is None)  # the search's kept points evaluated (a thread)
    window.show_view(window.verify_view)
    for kind in ("simulate", "csim"):
        row = window.verify_view.rows[kind]
        steps, probe = [], Probe()
        window.verification.runner.phase.connect(lambda index, text: steps.append((time.perf_counter(), text)))
        print(f"  {kind}: {row.plan.text()}")
        probe.start()
        started = time.perf_counter()
        row.start_button.click()
        wall = wait_until(app, lambda: window.verification.running is None, timeout=900)
        probe.stop()
        window.verification.runner.phase.disconnect()
        for at, text in steps:
            print(f"      {at - started:6.1f} s  {text}")
        gap, at = probe.worst()
        print(f"      {wall:6.1f} s  {row.outcome.text() or row.step.text()}; longest event-loop gap "
              f"{gap * 1000:.0f} ms (at {at - started:.1f} s); load average {os.getloadavg()[0]:.1f}")


def cold_first_sample(app, seconds: float, stop_at_first: bool = False) -> None:
    """An empty model cache: the window made and shown, Start pressed as soon as the designs are
    listed (every design, `seconds`), then the times from the launch (this script's start, its
    imports included) to the designs listed, the search's budget started and its first sample
    (`stop_at_first`: Stop pressed then, rather than waiting for the search's end, which waits for
    the other designs' models: a run in a minute rather than three)."""
    import tempfile

    os.environ["SYSTOLIC_STUDIO_CACHE"] = tempfile.mkdtemp(prefix="bench-gui-cold-")
    folder = Path(tempfile.mkdtemp(prefix="bench-gui-cold-settings-"))
    os.environ["SYSTOLIC_STUDIO_DB"] = str(folder / "runs.sqlite")
    window = MainWindow(settings=QSettings(str(folder / "settings.ini"), QSettings.IniFormat))
    window.resize(*SCREEN_SIZE)
    window.show()
    marks = {}
    window.search.phaseChanged.connect(lambda: marks.setdefault("budget started", time.perf_counter())
                                       if window.search.phase == "searching" else None)
    window.search.ticked.connect(lambda _: marks.setdefault("first sample", time.perf_counter()))
    wait_until(app, lambda: bool(window.tree_model.design_ids()) and window.search_panel.start_button.isEnabled())
    marks["designs listed"] = time.perf_counter()
    first = window.tree_model.design_ids()[0]
    status = window.model_status.text()
    window.search_panel.method.setCurrentText("hybrid")
    window.search_panel.seconds.setValue(seconds)
    window.search_panel.scope.setCurrentIndex(0)
    window.search_panel.start_button.click()
    wait_until(app, lambda: "first sample" in marks)
    if stop_at_first:
        window.search_panel.stop_button.click()
    wait_until(app, lambda: not window.search.running)
    marks["search stopped" if stop_at_first else "search ended"] = time.perf_counter()
    for name, at in sorted(marks.items(), key=lambda kv: kv[1]):
        print(f"  {at - LAUNCHED:6.1f} s  {name}")
    best = window.search.result.best if window.search.result else None  # (None: stopped before a design ended)
    print(f"  status bar when Start was pressed: {status!r}; models built by the pool: {len(window.models.built)} "
          f"of {len(window.tree_model.design_ids())} designs (first design's: {first in window.models.built}); "
          f"best {best.best.throughput_gops if best else 0:.1f} GOP/s; load average {os.getloadavg()[0]:.1f}")
    window.search.shutdown()
    window.close()


def launch_times(runs: int, baseline: str | None = None) -> None:
    """Seconds from starting the application to its first paint and to its designs listed; with
    `baseline` (another checkout's folder) the two alternate run by run, so
    that both see the same load, and the medians' ratio is printed."""
    root = Path(__file__).resolve().parents[1]
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_gui"
    folder.mkdir(exist_ok=True)
    roots = {"this": root} | ({"baseline": Path(baseline).resolve()} if baseline else {})
    print(f"{'run':>3} {'checkout':>9} {'first paint s':>14} {'its CPU s':>10} {'panels s':>9} {'designs s':>10} "
          f"{'load avg':>9}")
    measured: dict[str, list[tuple[float, float, float]]] = {name: [] for name in roots}
    for n in range(runs):
        for name, where in roots.items():
            env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
                   "SYSTOLIC_STUDIO_DB": str(folder / "runs.sqlite"), "PYTHONPATH": str(where)}
            started = time.time()
            out = subprocess.run([sys.executable, "-m", "app", "--time-launch"], capture_output=True, text=True,
                                 cwd=where, env=env, timeout=600)
            stamps = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.stdout.splitlines()
                      if line.split()[:1] in (["first-paint"], ["panels"], ["designs"])}
            paint = stamps["first-paint"][0] - started if "first-paint" in stamps else float("nan")
            cpu = stamps["first-paint"][1] if len(stamps.get("first-paint", ())) > 1 else float("nan")
            designs = stamps["designs"][0] - started if "designs" in stamps else float("nan")
            panels = stamps["panels"][0] - started if "panels" in stamps else float("nan")  # checkouts before 2026-11-26: none
            measured[name].append((paint, cpu, panels, designs))
            print(f"{n:>3} {name:>9} {paint:>14.2f} {cpu:>10.2f} {panels:>9.2f} {designs:>10.2f} "
                  f"{os.getloadavg()[0]:>9.1f}", flush=True)
            if out.returncode:
                print(out.stderr[-2000:])
    medians = {name: [statistics.median(column) for column in zip(*rows)] for name, rows in measured.items()}
    for name, (paint, cpu, panels, designs) in medians.items():
        print(f"median {name:>9} {paint:>14.2f} {cpu:>10.2f} {panels:>9.2f} {designs:>10.2f}")
    if baseline:
        (paint, cpu, _, designs), (paint0, cpu0, _, designs0) = medians["this"], medians["baseline"]
        print(f"this / baseline: first paint {paint / paint0:.2f}, its CPU {cpu / cpu0:.2f}, designs {designs / designs0:.2f}")


def screenshot_against_cli(path: str, seconds: float, runs: int) -> None:
    """`systolic-studio --screenshot PATH --search-seconds S` (a new process, as the issue's demo runs
    it: every design, the models from the model cache or built before the budget) and right after
    `systolic search --seconds S` on the same machine, their bests side by side."""
    root = Path(__file__).resolve().parents[1]
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_gui"
    folder.mkdir(exist_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "SYSTOLIC_STUDIO_DB": str(folder / "runs.sqlite")}
    print(f"{'run':>3} {'window GOP/s':>12} {'design':>20} {'searched':>9} {'samples':>9} {'wall s':>7} "
          f"{'CLI GOP/s':>10} {'CLI des.':>8} {'CLI s':>6} {'win/CLI':>8} {'load':>5}")
    for n in range(runs):
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "app", "--screenshot", path, "--search-seconds", f"{seconds:g}"],
                             capture_output=True, text=True, cwd=root, env=env, timeout=900)
        wall = time.perf_counter() - started
        line = next((x for x in out.stdout.splitlines() if x.startswith("search: ")), None)
        if out.returncode or line is None:
            print(f"{n:>3} the window's run failed (exit {out.returncode}): {out.stderr[-1500:]}")
            continue
        words = line.split()  # search: G GOP/s on DESIGN, A of B designs searched, N samples, S s budget
        gops, design, searched, samples = float(words[1]), words[4].rstrip(","), f"{words[5]}/{words[7]}", words[10]
        cli, cli_searched, cli_wall = cli_best(seconds, [])
        print(f"{n:>3} {gops:>12.1f} {design:>20} {searched:>9} {samples:>9} {wall:>7.1f} {cli:>10.1f} "
              f"{cli_searched:>8} {cli_wall:>6.1f} {gops / cli if cli else float('nan'):>8.3f} "
              f"{os.getloadavg()[0]:>5.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--samples", type=int, default=None,
                        help="a sample budget instead of --seconds, for the window and the CLI alike: with one seed "
                             "the two must find the same best (GUI/CLI 1.000)")
    parser.add_argument("--seed", type=int, default=0, help="the search's seed, the window's and the CLI's")
    parser.add_argument("--designs", default="all", help="'all', or how many designs (every 7th)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--trace", action="store_true", help="list events slower than 20 ms")
    parser.add_argument("--no-cli", action="store_true", help="do not run `systolic search` to compare")
    parser.add_argument("--select", action="store_true", help="instead of searching, select every design in turn")
    parser.add_argument("--compile", metavar="KERNEL", help="instead of searching, open a bundled kernel")
    parser.add_argument("--floorplan", action="store_true",
                        help="instead of searching, show AutoSA's large MM array and colour it by SLR (its floorplan)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the GUI thread (while searching, selecting or compiling) and print its 25 costliest calls")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="N busy loops (nice 0) run while measuring, after the warm-up: a loaded machine")
    parser.add_argument("--launch", action="store_true", help="time the application's launch (a new process)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="with --launch: alternate with the checkout in DIR (e.g. `git archive REV | tar -x -C DIR`)")
    parser.add_argument("--cold", action="store_true",
                        help="an empty model cache: seconds from launch to the first sample of a search started "
                             "as soon as the designs are listed")
    parser.add_argument("--stop-at-first-sample", action="store_true",
                        help="with --cold: press Stop at the first sample instead of waiting for the search's end")
    parser.add_argument("--verify", action="store_true",
                        help="search, then the reduced simulation and C simulation of the best design (Verify tab)")
    parser.add_argument("--screenshot", metavar="PATH",
                        help="run `systolic-studio --screenshot PATH --search-seconds S` and `systolic search`, side by side")
    args = parser.parse_args()
    if args.launch:
        launch_times(args.runs, args.baseline)
        return
    if args.screenshot:
        screenshot_against_cli(args.screenshot, args.seconds, args.runs)
        return
    app = TracingApplication([sys.argv[0]]) if args.trace else QApplication([sys.argv[0]])
    theme.apply(app)
    if args.cold:
        cold_first_sample(app, args.seconds, args.stop_at_first_sample)
        return
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_gui"
    folder.mkdir(exist_ok=True)
    os.environ.setdefault("SYSTOLIC_STUDIO_DB", str(folder / "runs.sqlite"))
    opened = time.perf_counter()
    window = MainWindow(settings=QSettings(str(folder / "settings.ini"), QSettings.IniFormat))
    window.resize(*SCREEN_SIZE)
    window.show()
    app.processEvents()
    shown = time.perf_counter() - opened
    ready = wait_until(app, lambda: window.search.warm and not window.models.busy and not window.session.compiling)
    print(f"window shown {shown:.2f} s after it was made; search process warm and models cached "
          f"{ready:.1f} s later ({len(window.models.built)} models built)")
    if args.verify:
        with BusyLoads(args.load):
            verify_best(app, window, args.seconds)
        window.search.shutdown()
        window.close()
        return
    if args.select or args.compile or args.floorplan:
        if args.trace:
            app.slow.clear()
            app.by_kind.clear()
            app.cpu = 0.0
        with profiled(args.profile), BusyLoads(args.load):
            r = (select_all(app, window) if args.select else floorplan_shown(app, window) if args.floorplan
                 else compile_kernel_shown(app, window, args.compile))
            load = os.getloadavg()[0]
        t0 = r.get("started", 0.0)  # --compile: a timeline of the stalls, the slow events and the selection
        timeline = [(at, f"{gap * 1000:6.0f} ms  stall (probe gap)") for at, gap in r.get("stalls", [])]
        timeline += [(at, f"{'':9}{what}") for at, what in r.get("marks", [])]
        timeline += [(at, f"{spent * 1000:6.0f} ms  garbage collection, generation {generation}")
                     for at, spent, generation in GC.pauses if t0 and at >= t0]
        timeline += [(start, f"{spent * 1000:6.0f} ms  {kind:24} {receiver} ({cpu * 1000:.0f} ms CPU)")
                     for start, spent, cpu, kind, receiver in getattr(app, "slow", [])]
        for at, line in sorted(timeline):
            print(f"      {at - t0:7.3f} s  {line}" if t0 else f"      {line}")
        what = (f"selected {r['designs']} designs" if args.select else "floorplanned the large MM" if args.floorplan
                else f"compiled {args.compile} ({r['designs']} designs)")
        print(f"{what} in {r['wall_s']:.2f} s; longest event-loop gap {r['worst_ms']:.0f} ms "
              f"(GUI thread CPU in it at most {r['worst_cpu_ms']:.0f} ms); "
              f"{args.load} busy loops, load average {load:.1f}")
        if args.trace:  # CPU figures depend less on the machine's load than wall-clock gaps do
            costliest = max((cpu for _, _, cpu, _, _ in app.slow), default=0.0)
            print(f"GUI thread CPU in events {app.cpu:.2f} s; costliest event over {SLOW_EVENT * 1000:.0f} ms wall: "
                  f"{costliest * 1000:.0f} ms CPU; load average {os.getloadavg()[0]:.1f}")
            for kind, receiver, count, cpu in app.costliest():
                print(f"      {cpu * 1000:7.0f} ms CPU in {count:5} {kind} events to {receiver}")
        window.search.shutdown()
        window.close()
        return
    print(f"{'run':>3} {'worst ms':>9} {'CPU ms':>6} {'>100ms':>6} {'ticks/s':>8} {'wall s':>7} {'budget':>7} "
          f"{'designs':>8} {'GUI GOP/s':>10} {'CLI GOP/s':>10} {'CLI des.':>8} {'CLI s':>6} {'GUI/CLI':>8} {'load':>5}  status")
    for n in range(args.runs):
        with profiled(args.profile), BusyLoads(args.load):
            r = run_once(app, window, args.seconds, args.designs, args.trace, args.samples, args.seed)
            load = os.getloadavg()[0]
        cli, cli_searched, cli_wall = ((0.0, 0, 0.0) if args.no_cli
                                       else cli_best(args.seconds, r["designs"], args.samples, args.seed))
        ratio = f"{r['best'] / cli:8.3f}" if cli else f"{'-':>8}"
        print(f"{n:>3} {r['worst_ms']:>9.0f} {r['worst_cpu_ms']:>6.0f} {r['over_100']:>6} {r['rate_hz']:>8.1f} "
              f"{r['wall_s']:>7.2f} {f'{args.samples}x' if args.samples else f'{args.seconds:.1f}':>7} {r['searched']:>3}/{len(r['designs']):<4} {r['best']:>10.1f} {cli:>10.1f} "
              f"{cli_searched:>8} {cli_wall:>6.1f} {ratio} {load:>5.1f}  {r['status']} {r['message']}")
        if args.trace:
            print(f"      search started at perf_counter {r['started']:.3f}; main thread busy {r['cpu']:.2f} s CPU "
                  f"in events ({r['cpu'] / r['wall_s']:.0%} of the wall time)")
            for kind, receiver, count, cpu in app.costliest():
                print(f"      {cpu * 1000:7.0f} ms CPU in {count:5} {kind} events to {receiver}")
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
