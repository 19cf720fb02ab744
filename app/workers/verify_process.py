"""A verification request (the kernel, a design, its tuning values, simulator or C simulation, the
reduced or the full problem) -> its outcome, computed in a child process of its own that the
window can kill: `VerifyRunner.start(request)` returns at once; `phase(index, text)` reports each
step as the child reaches it, then `finished(result dict)` or `failed(one line)`; `cancel()` kills
the child and everything it started (g++, the compiled simulation: one process group).

The child compiles the kernel (at the reduced sizes of engine/reduced_problem.py unless the request
asks for the full problem), evaluates the configuration with the design's model (the window's model
cache), then either runs the cycle-level simulator (engine.sim) or exports the design into a
temporary folder and C-simulates it with g++ (engine.csim.design_check). A request naming an
exported `project` folder instead runs that project as written (the export dialog's buttons): its C
simulation (engine.csim.run_csim) or its timed C simulation (engine.csim.run_timed_csim), the result
object sent back whole. Nothing of it runs in the window's process: the simulator's compiled loop
holds the GIL, g++ takes a core."""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from app.workers.kernel_source import KernelSource
from app.workers.parent_watchdog import watch_parent
from app.workers.spawning import spawn_context

VERIFY_NICENESS = 5  # below the window (nice 0), above the search and model builds (+10): a person waits for it
KINDS = ("simulate", "csim")
PHASES = {"simulate": ("starting the process", "compiling the kernel", "evaluating the model", "simulating"),
          "csim": ("starting the process", "compiling the kernel", "evaluating the model",
                   "exporting and running the C simulation (g++)")}
PROJECT_PHASES = {"csim": ("starting the process", "building and running the exported project's C simulation (g++)"),
                  "timed": ("starting the process",
                            "building, running and replaying the exported project (timed C simulation)")}
POLL_MS = 100


@dataclass(frozen=True)
class VerifyRequest:
    kind: str  # "simulate" (engine.sim) or "csim" (export + g++)
    full: bool  # the kernel's own sizes; else the reduced problem (engine/reduced_problem.py)
    source: KernelSource
    design: object  # the Design at the kernel's sizes (engine.compiler.design_space): its loops and tiles
    values: dict  # the tuning parameters (packing factors are inferred again)
    cache_folder: str = ""
    tiles: int = 2
    project: str = ""  # an exported project's folder: run it as written ("csim" or "timed"), see the docstring

    @classmethod
    def of_project(cls, kind: str, project) -> VerifyRequest:
        """The C simulation ("csim") or timed C simulation ("timed") of an exported project folder."""
        if kind not in PROJECT_PHASES:
            raise ValueError(kind)
        return cls(kind, True, None, None, {}, project=str(project))

    @property
    def phases(self) -> tuple[str, ...]:
        return PROJECT_PHASES[self.kind] if self.project else PHASES[self.kind]


def verify_project(request: VerifyRequest, report=lambda index, text: None) -> dict:
    """In the child: the exported project's run; {"kind", "project", "result", "main_seconds"}."""
    report(1, request.phases[1])
    started = time.monotonic()
    if request.kind == "timed":
        from engine.csim.timed import run_timed_csim

        result = run_timed_csim(request.project)
    else:
        from engine.csim import run_csim

        result = run_csim(request.project)
    return {"kind": request.kind, "project": request.project, "result": result,
            "main_seconds": time.monotonic() - started}


def verify(request: VerifyRequest, report=lambda index, text: None) -> dict:
    """In the child: the outcome as plain data (raises EngineError with a one-line reason)."""
    from engine.models.cache import ModelCache, cached_model

    if request.project:
        return verify_project(request, report)

    report(1, PHASES[request.kind][1])
    folder = tempfile.mkdtemp(prefix="systolic-verify-")
    try:
        for header in Path(request.source.headers).glob("*.h") if request.source.headers else ():
            shutil.copy(header, folder)
        path = Path(folder) / request.source.file_name
        path.write_text(request.source.text)
        source = request.source
        problem = None
        if request.full:
            from engine.compiler.design_space import compile_kernel

            space = compile_kernel(path, defines=source.defines, simd_touch_space=source.simd_touch_space)
            design = space.design(request.design.id)
        else:
            from engine.reduced_problem import reduce_design

            problem, space, design = reduce_design(path, source.defines, request.design, request.values,
                                                   tiles=request.tiles, simd_touch_space=source.simd_touch_space)
            sizes = {k: str(v) for k, v in problem.sizes.items()}
            source = replace(source, defines={**source.defines, **sizes}, sizes=dict(problem.sizes))
        report(2, PHASES[request.kind][2])
        device = source.load_device()
        cache = ModelCache(request.cache_folder) if request.cache_folder else None
        if cache is not None:
            model = cached_model(cache, source.key(design.id), space, design, device)[0]
        else:
            from engine.models.evaluate import PerformanceModel

            model = PerformanceModel(space, design, device)
        from engine.models.report import evaluate_configuration

        values = {k: v for k, v in request.values.items() if k in {p.name for p in design.params if p.tunable}}
        model_report = evaluate_configuration(model, values)
        full_values = model_report["params"]
        outcome = {"kind": request.kind, "design": design.id, "values": full_values,
                   "sizes": dict(space.kernel.sizes), "problem": problem.describe() if problem else "the full problem",
                   "model_cycles": float(model_report["latency_cycles"]), "full": request.full}
        report(3, PHASES[request.kind][3])
        started = time.monotonic()
        if request.kind == "simulate":
            from engine.compiler.descriptor import build_descriptor
            from engine.limits import check_simulator_memory
            from engine.sim import DramModel, simulate

            descriptor = build_descriptor(space, design, model.architecture, model.pass_architectures)
            check_simulator_memory(descriptor, full_values)
            result = simulate(descriptor, full_values, dram=DramModel(device.dram_ports(model.layout)))
            outcome.update(cycles=int(result.cycles), bottleneck=result.bottleneck,
                           busy={name: float(m.busy) for name, m in result.modules.items()})
        else:
            from engine.csim.design_check import csim_design

            result = csim_design(space, design, full_values, device=device)
            outcome.update(passed=bool(result.passed), summary=result.summary)
        outcome["main_seconds"] = time.monotonic() - started
        return outcome
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _child(request: VerifyRequest, queue, parent_pid: int) -> None:
    """The child's main: its own process group (so a cancel reaches g++ and the simulation it starts)."""
    try:
        os.setpgrp()
    except OSError:
        pass
    watch_parent(parent_pid)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + VERIFY_NICENESS)
    except (AttributeError, OSError):
        pass
    from engine.errors import EngineError

    try:
        queue.put(("done", verify(request, lambda index, text: queue.put(("phase", index, text)))))
    except EngineError as exc:
        queue.put(("failed", str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
    except Exception as exc:  # noqa: BLE001 (one line in the window, never a traceback)
        queue.put(("failed", f"{type(exc).__name__}: {exc}".splitlines()[0]))
    queue.close()
    queue.join_thread()  # the answer is in the pipe: nothing else to wait for (the interpreter's
    os._exit(0)          # teardown of sympy, numba and islpy takes seconds the window would wait)


class VerifyRunner(QObject):
    phase = Signal(int, str)  # index in PHASES[kind], what the child does now
    finished = Signal(dict)
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._process = None
        self._queue = None
        self.request: VerifyRequest | None = None
        self.started_at = 0.0
        self.phase_started: dict[int, float] = {}  # phase index -> monotonic time it began
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def running(self) -> bool:
        return self._process is not None

    def start(self, request: VerifyRequest) -> bool:
        """Start a verification; False when one is running."""
        if self._process is not None:
            return False
        context = spawn_context()
        self._queue = context.Queue()
        self._process = context.Process(target=_child, args=(request, self._queue, os.getpid()), daemon=True)
        self.request = request
        self.started_at = time.monotonic()
        self.phase_started = {0: self.started_at}
        self._process.start()
        self._timer.start()
        self.phase.emit(0, request.phases[0])
        return True

    def _poll(self) -> None:
        import queue as queues

        while self._process is not None:
            try:
                message = self._queue.get_nowait()
            except queues.Empty:
                if not self._process.is_alive():
                    code = self._process.exitcode
                    self._end()
                    self.failed.emit(f"the verification process ended without an answer (exit code {code})")
                return
            if message[0] == "phase":
                self.phase_started[message[1]] = time.monotonic()
                self.phase.emit(message[1], message[2])
            elif message[0] == "done":
                self._end()
                self.finished.emit(message[1])
            else:
                self._end()
                self.failed.emit(message[1])

    def _end(self) -> None:
        self._timer.stop()
        process, self._process = self._process, None
        if process is not None:
            process.join(0.2)  # it exits right after its answer; the GUI thread does not wait longer
            if process.is_alive():
                _kill(process)
                process.join(1)
        if self._queue is not None:
            self._queue.close()
            self._queue = None

    def cancel(self) -> bool:
        """Kill the running verification (and what it started); False when none runs."""
        if self._process is None:
            return False
        process = self._process
        _kill(process)
        self._timer.stop()
        self._process = None
        process.join(1)
        if self._queue is not None:
            self._queue.close()
            self._queue = None
        return True

    def shutdown(self) -> None:
        self.cancel()


def _kill(process) -> None:
    """The child's process group (g++ and the compiled simulation with it), else the child alone."""
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
            return
    except (ProcessLookupError, PermissionError, OSError):
        pass
    process.kill()
