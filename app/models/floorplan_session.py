"""FloorplanSession(selection): the selected configuration (descriptor, every parameter value, the device
at the window's clock) -> its clock estimates (engine/floorplan/clock.py: a floorplanned and a plain
build, each with what limits it) and, when asked for, its SLR floorplan (engine/floorplan, pyomo +
SCIP), computed in a background process (one, spawned on first use, at a lower priority, ending with
the window): building and solving the floorplan's program holds the GIL for seconds (9.5 s of
frozen event loop for a 13x16 array at load 12 when it ran in a thread of the window's process).

Every selection gets the quick estimate (no floorplan solved: the SLR utilisation taken as its lower
bound, as `systolic model` without `--floorplan`); `want_floorplan(True)` (the topology coloured by
SLR) also solves the floorplan of every configuration shown, which replaces the quick estimate with
the solved one. One task runs at a time; a selection made meanwhile is computed next, a solve for a
configuration no longer shown is abandoned (its process killed), and a result for a configuration
no longer shown is dropped. `changed` fires when `estimate`, `plan` or `error` changes."""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from PySide6.QtCore import QCoreApplication, QObject, Signal

from app.models.design_selection import DesignSelection, values_key
from app.workers.parent_watchdog import watch_parent

NICENESS = 10


def clock_estimate(descriptor: dict, values: dict, device, solve: bool):
    """In the floorplan process: (its pid, engine.floorplan.estimate_clock's ClockEstimate)."""
    from engine.floorplan import estimate_clock  # pyomo and the solver interface: in that process only

    return os.getpid(), estimate_clock(descriptor, values, device, quick=not solve)


def _start(parent_pid: int) -> None:
    watch_parent(parent_pid)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)
    except (AttributeError, OSError):
        pass


class FloorplanSession(QObject):
    changed = Signal()
    _finished = Signal(object, object)  # from the executor's thread: (key, solve) of the task, its future

    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.estimate = None  # ClockEstimate of the configuration shown (quick or solved), or None
        self.solved = False  # the estimate read a solved floorplan (estimate.plan, when one fits)
        self.error = ""  # why the last task failed
        self.computed_in: int | None = None  # the pid of the process that computed `estimate`
        self.floorplan_wanted = False
        self._key: tuple | None = None  # the configuration `estimate` is for
        self._executor: ProcessPoolExecutor | None = None
        self._running: tuple | None = None  # (key, solve) of the running task
        self._future: Future | None = None
        self._next: tuple | None = None  # (key, solve, descriptor, values, device) to run after it
        self._finished.connect(self._on_done)
        selection.changed.connect(self._selection_changed)

    @property
    def busy(self) -> bool:
        return self._running is not None

    @property
    def plan(self):
        return self.estimate.plan if self.estimate is not None and self.solved else None

    def current_key(self) -> tuple | None:
        s = self.selection
        values = s.full_values() if s.report is not None else None
        if s.design is None or values is None or s.descriptor is None:
            return None
        return values_key(s.design.id, values) + (s.device.clock_mhz,)

    def is_current(self) -> bool:
        """The estimate is the configuration shown's."""
        return self._key is not None and self._key == self.current_key()

    def want_floorplan(self, wanted: bool) -> None:
        self.floorplan_wanted = wanted
        if wanted:
            self._selection_changed()

    def _selection_changed(self) -> None:
        key = self.current_key()
        if key is None:
            return
        solve = self.floorplan_wanted
        if key == self._key and (self.solved or not solve):
            return  # already computed
        if self._running is not None and self._running[0] == key and (self._running[1] or not solve):
            return  # computing it
        s = self.selection
        self._next = (key, solve, s.descriptor, dict(s.full_values()), s.device)
        if self._running is not None and self._running[1]:
            self._kill()  # a solve (seconds to a minute) for a configuration no longer shown
        if self._running is None:
            self._submit()

    def _submit(self) -> None:
        key, solve, descriptor, values, device = self._next
        self._next, self.error = None, ""
        if self._executor is None:
            self._executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start, initargs=(os.getpid(),))
        task = self._running = (key, solve)
        self._future = self._executor.submit(clock_estimate, descriptor, values, device, solve)
        self._future.add_done_callback(lambda future: self._finished.emit(task, future))

    def _on_done(self, task: tuple, future: Future) -> None:
        if task != self._running or future is not self._future:
            return  # a task of a process killed since
        self._running = self._future = None
        if not future.cancelled():
            error = future.exception()
            if error is None and task[0] == self.current_key():
                self.computed_in, estimate = future.result()
                self._key, self.estimate, self.solved = task[0], estimate, task[1]
                self.changed.emit()
            elif isinstance(error, BrokenProcessPool):  # the process died (not killed by us): a new one next
                self._kill()
                self.error = "the floorplan process ended unexpectedly"
                self.changed.emit()
            elif error is not None:
                self.error = str(error).splitlines()[0] if str(error) else type(error).__name__
                self.changed.emit()
        if self._next is not None:
            self._submit()

    def _kill(self) -> None:
        if self._executor is not None:
            for process in list(getattr(self._executor, "_processes", {}).values()):
                process.kill()
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self._running = self._future = None

    def wait(self, timeout_ms: int = 120000) -> None:
        """Block until the running task is done and its result taken (tests); nothing queued runs."""
        self._next = None
        future = self._future
        if future is not None:
            try:
                future.result(timeout_ms / 1000)
            except Exception:  # noqa: BLE001 (its failure is reported by _on_done)
                pass
            QCoreApplication.sendPostedEvents(self)

    def shutdown(self) -> None:
        """End the floorplan process (the window is closing): a solve is not waited for."""
        self._next = None
        self._kill()


def slr_summary(plan) -> list[tuple[int, str, float]]:
    """Per SLR: (SLR, its most used resource, that resource's share of the SLR)."""
    out = []
    for slr in range(len(plan.used)):
        resource, share = max(plan.utilisation(slr).items(), key=lambda kv: kv[1])
        out.append((slr, resource, share))
    return out
