"""The selected configuration + one of its tuning parameters -> a one-parameter sweep: the latency and
each resource's share of the device's budget at every legal value of that parameter (the others fixed,
the packing factors inferred for each value as for any configuration), evaluated by the design's
model in one batch.

`parameter_sweep` is plain data (SweepPoints) that the view draws and tests check; SweepSession runs it
in a background TaskWorker for the selection shown, one at a time, the latest request next, a result
for a configuration no longer shown dropped."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from PySide6.QtCore import QCoreApplication, QObject, Signal

from app.models.design_selection import DesignSelection, values_key
from app.models.legal_values import legal_values
from app.workers.task_worker import TaskWorker

MAX_POINTS = 48  # values swept at most: a parameter with more legal values is sampled geometrically


class SweepPoints(NamedTuple):
    design: str
    param: str
    current: int  # the value the selection has
    values: tuple[int, ...]  # ascending
    latency: tuple[float, ...]  # cycles
    throughput: tuple[float, ...]  # GOP/s at the selection's clock
    shares: dict  # resource -> tuple of used / budget
    fits: tuple[bool, ...]


def sweep_values(legal: Sequence[int], current: int, most: int = MAX_POINTS) -> list[int]:
    """Every legal value, or `most` of them spread evenly on a log scale, the current one always kept."""
    if len(legal) <= most:
        return sorted(set(legal) | {current})
    lo, hi = math.log(legal[0]), math.log(legal[-1])
    picked = {current, legal[0], legal[-1]}
    for k in range(most):
        target = math.exp(lo + (hi - lo) * k / (most - 1))
        i = _nearest(legal, target)
        picked.add(legal[i])
    return sorted(picked)


def _nearest(legal: Sequence[int], target: float) -> int:
    lo, hi = 0, len(legal) - 1
    while lo < hi:  # first index with legal[i] >= target (a range is never listed)
        mid = (lo + hi) // 2
        if legal[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo == 0 or legal[lo] - target <= target - legal[lo - 1] else lo - 1


def parameter_sweep(model, values: dict[str, int], param: str) -> SweepPoints:
    """`values`: every tuning parameter of the configuration (packing factors left out: inferred)."""
    import numpy as np

    from engine.models.constraints import violations
    from engine.models.device import RESOURCE_NAMES

    design = model.design
    tunable = {p.name for p in design.params if p.tunable}
    values = {k: int(v) for k, v in values.items() if k in tunable}
    swept = [v for v in sweep_values(legal_values(design, param, values), values[param])
             if not violations(design, {**values, param: v})]
    columns = {k: np.array([v if k == param else value for v in swept]) for k, value in values.items()}
    ev = model.evaluate(columns).values
    budget = {r: model.device.budget(r) for r in RESOURCE_NAMES}
    n = len(swept)

    def column(key: str) -> tuple:
        return tuple(float(x) for x in np.broadcast_to(np.asarray(ev[key], dtype=float), (n,)))

    shares = {r: tuple(u / budget[r] if budget[r] else math.inf * (u > 0) for u in column(r)) for r in RESOURCE_NAMES}
    fits = tuple(bool(x) for x in np.broadcast_to(np.asarray(ev["fits"]), (n,)))
    return SweepPoints(design.id, param, values[param], tuple(swept), column("latency_cycles"),
                       column("throughput_gops"), shares, fits)


class SweepSession(QObject):
    changed = Signal()

    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.param = ""  # the parameter swept ("": the design's first tunable one)
        self.points: SweepPoints | None = None
        self.error = ""
        self._worker: TaskWorker | None = None
        self._running: tuple | None = None
        self._next: tuple | None = None
        self._key: tuple | None = None
        selection.changed.connect(self.request)

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def params(self) -> list[str]:
        design = self.selection.design
        return [p.name for p in design.params if p.tunable] if design is not None else []

    def set_param(self, name: str) -> None:
        if name and name != self.param:
            self.param = name
            self.request()

    def current_key(self) -> tuple | None:
        s = self.selection
        if s.design is None or s.report is None:
            return None
        param = self.param if self.param in self.params() else (self.params() or [""])[0]
        return values_key(s.design.id, s.values) + (param, s.device.clock_mhz) if param else None

    def request(self) -> None:
        """Sweep the configuration shown (unless it is swept already or being swept)."""
        key = self.current_key()
        if key is None or key == self._key or (self._running is not None and self._running == key):
            return
        s = self.selection
        self._next = (key, s.load_model, s.design, dict(s.values), key[-2])
        if self._worker is None:
            self._start_next()

    def _start_next(self) -> None:
        key, load_model, design, values, param = self._next
        self._next, self._running, self.error = None, key, ""
        # the worker holds nothing of this session (see KernelSession.compile) and deletes itself
        worker = self._worker = TaskWorker(lambda: parameter_sweep(load_model(design), values, param),
                                           QCoreApplication.instance(), background=True)
        worker.succeeded.connect(self._swept)
        worker.failed.connect(self._failed)
        worker.finished.connect(self._done)
        worker.finished.connect(worker.deleteLater)
        worker.start()

    def _swept(self, points: SweepPoints) -> None:
        if self._running == self.current_key():
            self._key, self.points = self._running, points
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

    def wait(self, timeout_ms: int = 60000) -> None:
        """Block until no sweep runs or is queued (closing the window, tests)."""
        self._next = None
        if self._worker is not None:
            self._worker.wait(timeout_ms)
            QCoreApplication.processEvents()
