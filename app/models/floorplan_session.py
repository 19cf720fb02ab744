"""FloorplanSession(selection): the selected configuration (descriptor, every parameter value, the device
at the window's clock) -> its clock estimates (engine/floorplan/clock.py: a floorplanned and a plain
build, each with what limits it): the quick one the selection's evaluation computed and, when asked
for, the one of its SLR floorplan (engine/floorplan, pyomo + SCIP), solved in a background process
(one, spawned on first use, at a lower priority, ending with the window): building and solving the
floorplan's program holds the GIL for seconds (9.5 s of frozen event loop for a 13x16 array at
load 12 when it ran in a thread of the window's process).

Every evaluated selection has the quick estimate (`DesignSelection.clock_estimate`: no floorplan
solved, the SLR utilisation taken as its lower bound, as `systolic model` without `--floorplan`);
`want_floorplan(True)` (the topology coloured by SLR) solves the floorplan of every configuration
shown, whose estimate then replaces the quick one. One solve runs at a time; one for a
configuration no longer shown is abandoned (its process killed) and its result, if any, dropped.
`changed` fires when a floorplan is solved or a solve fails (`error`)."""
from __future__ import annotations

import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from PySide6.QtCore import QCoreApplication, QObject, Signal

from app.models.design_selection import DesignSelection, values_key
from app.workers.parent_watchdog import watch_parent
from app.workers.spawning import spawn_context

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
        self.error = ""  # why the last task failed
        self.computed_in: int | None = None  # the pid of the process that solved the last floorplan
        self.floorplan_wanted = False
        self._key: tuple | None = None  # the configuration `_solved` is for
        self._solved = None  # the ClockEstimate of that configuration's solved floorplan
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
    def solved(self) -> bool:
        """The configuration shown has its floorplan solved (`estimate` read it)."""
        return self._solved is not None and self._key == self.current_key()

    @property
    def estimate(self):
        """The configuration shown's ClockEstimate: of its solved floorplan, else the quick one (None
        while it is evaluated)."""
        return self._solved if self.solved else self.selection.clock_estimate

    @property
    def plan(self):
        return self._solved.plan if self.solved else None

    def current_key(self) -> tuple | None:
        s = self.selection
        values = s.full_values() if s.report is not None else None
        if s.design is None or values is None or s.descriptor is None:
            return None
        return values_key(s.design.id, values) + (s.device.clock_mhz,)

    def is_current(self) -> bool:
        """There is an estimate of the configuration shown."""
        return self.current_key() is not None and self.estimate is not None

    def want_floorplan(self, wanted: bool) -> None:
        self.floorplan_wanted = wanted
        if wanted:
            self._selection_changed()

    def _selection_changed(self) -> None:
        key = self.current_key()
        if key is None or not self.floorplan_wanted or self.solved:
            return
        if self._running is not None and self._running[0] == key:
            return  # solving it
        s = self.selection
        self._next = (key, True, s.descriptor, dict(s.full_values()), s.device)
        if self._running is not None:
            self._kill()  # a solve (seconds to a minute) for a configuration no longer shown
        if self._running is None:
            self._submit()

    def _submit(self) -> None:
        key, solve, descriptor, values, device = self._next
        self._next, self.error = None, ""
        if self._executor is None:
            self._executor = ProcessPoolExecutor(1, mp_context=spawn_context(),
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
                self.computed_in, self._solved = future.result()
                self._key = task[0]
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
