"""FloorplanSession(selection): the selected configuration (descriptor, every parameter value, the device
at the window's clock) -> its clock estimates (engine/floorplan/clock.py: a floorplanned and a plain
build, each with what limits it) and, when asked for, its SLR floorplan (engine/floorplan, pyomo +
SCIP), computed in a background TaskWorker, never on the GUI thread.

Every selection gets the quick estimate (no floorplan solved: the SLR utilisation taken as its lower
bound, as `systolic model` without `--floorplan`); `want_floorplan(True)` (the topology coloured by
SLR) also solves the floorplan of every configuration shown, which replaces the quick estimate with
the solved one. One task runs at a time; a selection made meanwhile is computed next, and a result
for a configuration no longer shown is dropped. `changed` fires when `estimate` or `plan` changes."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Signal

from app.models.design_selection import DesignSelection, values_key
from app.workers.task_worker import TaskWorker


def clock_estimate(descriptor: dict, values: dict, device, solve: bool):
    """engine.floorplan.estimate_clock, imported on the worker thread (pyomo, the solver interface)."""
    from engine.floorplan import estimate_clock

    return estimate_clock(descriptor, values, device, quick=not solve)


class FloorplanSession(QObject):
    changed = Signal()

    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.estimate = None  # ClockEstimate of the configuration shown (quick or solved), or None
        self.solved = False  # the estimate read a solved floorplan (estimate.plan, when one fits)
        self.error = ""  # why the last task failed
        self.floorplan_wanted = False
        self._key: tuple | None = None  # the configuration `estimate` is for
        self._worker: TaskWorker | None = None
        self._running: tuple | None = None  # (key, solve) of the running task
        self._next: tuple | None = None  # (key, solve, descriptor, values, device) to run after it
        selection.changed.connect(self._selection_changed)

    @property
    def busy(self) -> bool:
        return self._worker is not None

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
        if self._worker is None:
            self._start_next()

    def _start_next(self) -> None:
        key, solve, descriptor, values, device = self._next
        self._next = None
        self._running = (key, solve)
        self.error = ""
        # the worker holds nothing of this session (see KernelSession.compile) and deletes itself
        worker = self._worker = TaskWorker(lambda: clock_estimate(descriptor, values, device, solve),
                                           QCoreApplication.instance(), background=True)
        worker.succeeded.connect(self._computed)
        worker.failed.connect(self._failed)
        worker.finished.connect(self._done)
        worker.finished.connect(worker.deleteLater)
        worker.start()

    def _computed(self, estimate) -> None:
        key, solve = self._running
        if key == self.current_key():
            self._key, self.estimate, self.solved = key, estimate, solve
            self.changed.emit()

    def _failed(self, message: str) -> None:
        self.error = message
        self.changed.emit()

    def _done(self) -> None:
        worker, self._worker, self._running = self._worker, None, None
        if worker is not None:
            worker.wait()
        if self._next is not None:
            self._start_next()

    def wait(self, timeout_ms: int = 120000) -> None:
        """Block until no task runs or is queued (closing the window, tests)."""
        self._next = None
        if self._worker is not None:
            self._worker.wait(timeout_ms)
            QCoreApplication.processEvents()  # its queued signals


def slr_summary(plan) -> list[tuple[int, str, float]]:
    """Per SLR: (SLR, its most used resource, that resource's share of the SLR)."""
    out = []
    for slr in range(len(plan.used)):
        resource, share = max(plan.utilisation(slr).items(), key=lambda kv: kv[1])
        out.append((slr, resource, share))
    return out
