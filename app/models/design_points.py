"""A search's result -> the configurations worth plotting with every metric: each design's best and
Pareto set, evaluated with the design's model (from the model cache): latency, DSP, BRAM18K, LUT,
off-chip bytes, throughput and operational intensity; plus the device's roofs (compute: the DSP
budget over one MAC lane's DSPs, read from the model at one PE and no SIMD, times 2 ops per MAC at
the clock; memory: the banks' bandwidth from the device file). Plain Python and numpy: the
DesignPoints QObject runs `evaluate_points` in a TaskWorker and the plots draw the table.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, Signal

from app.workers.kernel_source import KernelSource
from app.workers.task_worker import TaskWorker
from engine.models.cache import ModelCache
from engine.models.device import DEVICES, Device
from engine.search.progress import ExplorationResult

# metric -> (column, axis label, log scale)
METRICS = {
    "latency": ("latency_cycles", "latency (cycles)", True),
    "DSP": ("DSP", "DSP", False),
    "BRAM18K": ("BRAM18K", "BRAM18K", False),
    "LUT": ("LUT", "LUT", False),
    "off-chip": ("offchip_mib", "off-chip traffic (MiB)", True),
    "throughput": ("throughput_gops", "throughput (GOP/s)", False),
}


@dataclass(frozen=True)
class Roofs:
    compute_gops: float  # the device's peak at the clock with the DSP budget
    bandwidth_gbs: float  # off-chip bandwidth, GB/s


@dataclass(frozen=True)
class PointTable:
    designs: tuple[str, ...]
    params: tuple[dict, ...]
    columns: dict[str, np.ndarray]  # METRICS columns + intensity (ops per off-chip byte)
    roofs: Roofs | None

    def __len__(self) -> int:
        return len(self.designs)


EMPTY = PointTable((), (), {}, None)


def device_bandwidth(device_name: str) -> float:
    """GB/s of the device's off-chip memory (banks x bank bandwidth), 0 when the file has none."""
    path = DEVICES / f"{device_name}.json"
    try:
        memory = json.loads(path.read_text())["memory"]
        return float(memory["banks"]) * float(memory["bank_bandwidth_gbytes_per_s"])
    except (OSError, KeyError, ValueError):
        return 0.0


def evaluate_points(cache: ModelCache, source: KernelSource, result: ExplorationResult) -> PointTable:
    device: Device = source.load_device()
    designs, params, parts, compute = [], [], [], 0.0
    for d in result.designs:
        candidates = [c for c in ((d.best,) if d.best else ()) + tuple(d.pareto)]
        if not candidates:
            continue
        model = cache.load(source.key(d.design), d.design)
        if model is None:
            continue
        tunable = model.tunable
        columns = {n: np.array([c.params[n] for c in candidates]) for n in tunable}
        ev = model.evaluate(columns)
        ops = ev["throughput_gops"] * (ev["latency_cycles"] / (device.clock_mhz * 1e6)) * 1e9
        parts.append({"latency_cycles": ev["latency_cycles"], "DSP": ev["DSP"], "BRAM18K": ev["BRAM18K"],
                      "LUT": ev["LUT"], "offchip_mib": ev["offchip_bytes"] / 2**20,
                      "throughput_gops": ev["throughput_gops"],
                      "intensity": ops / np.maximum(ev["offchip_bytes"], 1.0)})
        designs += [d.design] * len(candidates)
        params += [dict(c.params) for c in candidates]
        lane = model.evaluate({p.name: p.lower for p in model.design.params if p.tunable})["DSP"]
        if float(lane) > 0:
            compute = max(compute, np.floor(device.budget("DSP") / float(lane)) * 2 * device.clock_mhz / 1e3)
    if not parts:
        return EMPTY
    columns = {k: np.concatenate([np.atleast_1d(np.asarray(p[k], dtype=float)) for p in parts]) for k in parts[0]}
    return PointTable(tuple(designs), tuple(params), columns, Roofs(compute, device_bandwidth(source.device)))


class DesignPoints(QObject):
    changed = Signal()

    def __init__(self, cache: ModelCache, parent=None):
        super().__init__(parent)
        self.cache = cache
        self.table: PointTable = EMPTY
        self._worker: TaskWorker | None = None
        self._next = None

    def update(self, source: KernelSource | None, result: ExplorationResult | None) -> None:
        if source is None or result is None:
            self.table = EMPTY
            self.changed.emit()
            return
        if self._worker is not None:
            self._next = (source, result)
            return
        # the worker holds nothing of this object (no closure over `self`) and belongs to the
        # application, deleting itself once its thread has ended (KernelSession.compile says why)
        cache = self.cache
        worker = self._worker = TaskWorker(lambda: evaluate_points(cache, source, result),
                                           QCoreApplication.instance(), background=True)
        worker.succeeded.connect(self._done)
        worker.finished.connect(self._worker_done)
        worker.finished.connect(worker.deleteLater)  # queued after _worker_done, which waits for the thread
        worker.start()

    def _done(self, table: PointTable) -> None:
        self.table = table
        self.changed.emit()

    def _worker_done(self) -> None:
        worker, self._worker = self._worker, None
        worker.wait()
        if self._next is not None:
            (source, result), self._next = self._next, None
            self.update(source, result)

    def wait(self, timeout_ms: int = 30000) -> None:
        """Forget a waiting request and wait for the running worker (closing, tests)."""
        self._next = None
        if self._worker is not None:
            self._worker.wait(timeout_ms)
