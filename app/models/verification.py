"""Verification(selection): the selected design and configuration -> a simulation or C simulation
that finishes. By default on the reduced problem (engine/reduced_problem.py: each loop shrunk to a few
of its tiles, the array and tuning values unchanged), the full problem on request; before starting,
`plan(kind, full)` says what runs (the sizes) and how long it should take; while it runs, `state`
holds the step and an elapsed / estimated fraction; `cancel()` kills the child process
(app/workers/verify_process.py).

The estimate is the time to the main step (process start, imports, compile, model: the last run's,
or a figure measured on this project's 2-core machine), that step's fixed cost (the simulator's
numba kernel loaded, the g++ build) and its work / a rate: the simulator's cost follows the tokens
it times, one per PE iteration and FIFO (the problem's points / SIMD lanes), not the cycles (idle
cycles cost nothing); the C simulation runs every point. A run whose main step is long enough to
measure it replaces the rate (docs/app.md has the figures)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.models.design_selection import DesignSelection
from app.workers.kernel_source import KernelSource
from app.workers.verify_process import KINDS, PHASES, VerifyRequest, VerifyRunner
from engine.reduced_problem import DEFAULT_TILES, tile_targets

NAMES = {"simulate": "simulation", "csim": "C simulation"}
# measured on the 2-core machine at load 6-7 (MM 1024^3, the best designs of a 6 s search, docs/app.md):
RATES = {"simulate": 600_000.0,  # PE iterations (points / SIMD lanes) per second
         "csim": 5_000_000.0}  # points per second
FIXED_S = {"simulate": 1.5, "csim": 4.5}  # the main step's fixed cost: numba's kernel loaded; the export and g++ -O0 build
READY_S = {"simulate": 9.0, "csim": 5.5}  # start to main step: process, imports, compile, model
MAIN_PHASE = 3  # verify_process.PHASES index of the main step


@dataclass(frozen=True)
class VerificationPlan:
    kind: str
    full: bool
    design_id: str
    values: dict
    extents: dict  # band loop -> (full extent, extent run)
    work: float  # points (csim) or PE iterations (simulate) run
    seconds: float  # the estimate

    def text(self) -> str:
        loops = ", ".join(f"{loop} {full:,}" + (f" -> {run:,}" if run != full else "")
                          for loop, (full, run) in self.extents.items())
        what = "the full problem" if self.full else f"a reduced problem ({DEFAULT_TILES} tiles per loop)"
        unit = "points" if self.kind == "csim" else "PE iterations"
        return (f"{NAMES[self.kind]} of {self.design_id} on {what}: loops {loops}; {_count(self.work)} {unit}, "
                f"about {_duration(self.seconds)}")


def _count(n: float) -> str:
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if n >= scale:
            return f"{n / scale:,.1f}{suffix}"
    return f"{n:,.0f}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


class Verification(QObject):
    changed = Signal()  # state, plan or outcome changed
    finished = Signal(dict)  # an outcome (verify_process.verify's dict)

    rates = dict(RATES)  # per application: the last finished runs' figures
    ready = dict(READY_S)

    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.runner = VerifyRunner(self)
        self.runner.phase.connect(self._phase)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        self.running: VerificationPlan | None = None
        self.step = ""  # what the child does now
        self.outcome: dict[str, str] = {}  # kind -> the last outcome's one line
        self.error: dict[str, str] = {}  # kind -> the last failure
        selection.changed.connect(self.changed)

    def plan(self, kind: str, full: bool = False) -> VerificationPlan | None:
        """What `start(kind, full)` would run and how long it should take (None: nothing valid selected)."""
        return plan_for(self.selection, kind, full)

    def start(self, kind: str, full: bool = False) -> bool:
        """Start a verification of the configuration shown; False (and why in `error`) when it cannot."""
        if kind not in KINDS:
            raise ValueError(kind)
        plan = self.plan(kind, full)
        source = self.kernel_source()
        if self.running is not None:
            self.error[kind] = f"a {NAMES[self.running.kind]} is running: wait for it or cancel it"
        elif plan is None or source is None:
            self.error[kind] = "select a design with a valid configuration first"
        else:
            request = VerifyRequest(kind, full, source, self.selection.design,
                                    {p.name: plan.values[p.name] for p in self.selection.design.params
                                     if p.tunable and p.name in plan.values}, str(self.selection.cache.folder))
            self.running, self.error[kind], self.outcome[kind] = plan, "", ""
            self.runner.start(request)
            self.changed.emit()
            return True
        self.changed.emit()
        return False

    def kernel_source(self) -> KernelSource | None:
        """The selection's kernel as a child compiles it: the window's compiled source, or (a selection
        given a space alone) the kernel's file with its sizes as defines."""
        s = self.selection
        if s.source is not None or s.space is None:
            return s.source
        kernel = s.space.kernel
        path = Path(kernel.path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        return KernelSource(text, path.name, str(path.parent), {k: str(v) for k, v in kernel.sizes.items()},
                            dict(kernel.sizes), s.device_name, simd_touch_space=s.space.simd_touch_space)

    def fraction(self) -> float:
        """Elapsed / estimated time of the running verification (at most 0.99 until it ends)."""
        if self.running is None:
            return 0.0
        return min(0.99, (time.monotonic() - self.runner.started_at) / max(self.running.seconds, 0.1))

    def elapsed(self) -> float:
        return time.monotonic() - self.runner.started_at if self.running is not None else 0.0

    def cancel(self) -> bool:
        if self.running is None:
            return False
        kind = self.running.kind
        self.runner.cancel()
        self.running = None
        self.outcome[kind] = "cancelled"
        self.changed.emit()
        return True

    def _phase(self, index: int, text: str) -> None:
        if self.running is not None:
            self.step = f"step {index + 1} of {len(PHASES[self.running.kind])}: {text}"
            self.changed.emit()

    def _finished(self, outcome: dict) -> None:
        plan, self.running = self.running, None
        if plan is None:
            return
        seconds = time.monotonic() - self.runner.started_at
        kind = plan.kind
        main = outcome.get("main_seconds", 0.0)
        if MAIN_PHASE in self.runner.phase_started:  # this run's figures replace those the next estimates use
            Verification.ready[kind] = self.runner.phase_started[MAIN_PHASE] - self.runner.started_at
        if main > 4 * FIXED_S[kind] and plan.work > 0:  # long enough that the fixed cost does not decide it
            Verification.rates[kind] = plan.work / (main - FIXED_S[kind])
        outcome["seconds"] = seconds
        if kind == "simulate":
            error = (outcome["model_cycles"] - outcome["cycles"]) / max(outcome["cycles"], 1)
            line = (f"simulated {outcome['cycles']:,} cycles (model {outcome['model_cycles']:,.0f}, {error:+.1%}), "
                    f"bottleneck {outcome['bottleneck']}")
            if outcome["full"] and hasattr(self.selection, "set_measured"):
                self.selection.set_measured(plan.design_id, plan.values, "simulator", outcome["busy"])
        else:
            line = f"C simulation {'passed' if outcome['passed'] else 'FAILED'}: {outcome['summary']}"
        self.outcome[kind] = f"{line}; {outcome['problem']}; {seconds:,.1f} s"
        self.changed.emit()
        self.finished.emit(outcome)

    def _failed(self, message: str) -> None:
        plan, self.running = self.running, None
        if plan is not None:
            self.error[plan.kind] = f"{NAMES[plan.kind]} of {plan.design_id} failed: {message}"
        self.changed.emit()

    def shutdown(self) -> None:
        self.runner.shutdown()
        self.running = None


def plan_for(selection: DesignSelection, kind: str, full: bool = False) -> VerificationPlan | None:
    """What a verification of `kind` of the selection's configuration runs (the reduced problem unless
    `full`) and how long it should take, from this application's figures (None: nothing valid selected)."""
    s = selection
    values = s.full_values()
    if s.design is None or values is None:
        return None
    design = s.design
    extents = dict(zip(design.band_loops, design.problem_size))
    targets = {} if full else tile_targets(design, values, DEFAULT_TILES)
    run = {loop: (extent, targets.get(loop, extent)) for loop, extent in extents.items()}
    points = float(math.prod(r for _, r in run.values()))
    lanes = math.prod(values.get(p.name, 1) for p in design.params if p.tunable and p.role == "simd")
    work = points if kind == "csim" else points / max(lanes, 1)
    return VerificationPlan(kind, full, design.id, dict(values), run, work,
                            Verification.ready[kind] + FIXED_S[kind] + work / Verification.rates[kind])
