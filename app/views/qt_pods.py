"""The Pods tab: networks + a multi-pod system (pod shape and count, interconnect, aggregation) ->
engine/pods' schedule and replay on a worker thread, shown as the pod grid (each pod's busy share),
the interconnect's figures, a Gantt chart of tile operations per pod, busy pods per slice, the
energy split; and the granularity heat map (SOSA Fig. 5) of a shape sweep at the power budget.
The post-processor's rate (tile aggregations a slice per pod) is unbounded at 0; below 0 it is the
engine's default for the aggregation (ScheduleOptions: SOSA's pairs with mixed, unbounded otherwise).

Several checked networks are scheduled together (multi-tenancy). Bad settings (a Butterfly over a
pod count that is not a power of two, a system over the power budget, an unreadable network file)
are one line in the status, as on the command line."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QGridLayout, QHBoxLayout, QLabel,
                               QListWidget, QListWidgetItem, QPushButton, QSpinBox, QSplitter, QTabWidget,
                               QVBoxLayout, QWidget)

from app.views import theme
from app.workers.task_worker import TaskWorker
from engine.errors import EngineError
from engine.pods.technology import INTERCONNECTS, load_technology
from engine.pods.tiling import AGGREGATIONS
from engine.pods.workload import load_pod_workload

# engine.pods.studies, .system and .plots are imported by the functions that use them (on the worker
# thread; the GUI thread's uses come after): not before the window paints.
from engine.resources import RESOURCES

BUNDLED = tuple(sorted(p.stem for p in (RESOURCES / "networks").glob("*.json")))
GRANULARITY_SIZES = (8, 16, 24, 32, 48, 64, 128, 256, 512)  # 81 shapes: a few seconds
MAX_GANTT_PODS = 256


@dataclass(frozen=True)
class PodSettings:
    networks: tuple[str, ...]  # bundled names or file paths; several = multi-tenancy
    rows: int = 32
    cols: int = 32
    pods: int = 256
    interconnect: str = "butterfly-2"
    aggregation: str = "mixed"
    batch: int = 1
    post_processors: float | None = None  # tile aggregations a slice per pod (0: unbounded; None: the default)


@dataclass(frozen=True)
class PodOutcome:
    settings: PodSettings
    summary: dict  # PodRun.summary()
    busy_per_pod: np.ndarray
    busy_per_slice: np.ndarray  # pods holding an operation, per slice
    gantt: np.ndarray  # pods x slices: GEMM index, NaN idle
    gemm_names: tuple[str, ...]
    interconnect: dict


def run_pods(settings: PodSettings) -> PodOutcome:
    """The engine's schedule and replay for these settings (runs on the worker thread)."""
    if not settings.networks:
        raise EngineError("check at least one network")
    from engine.pods.plots import gantt_grid, pod_busy
    from engine.pods.studies import ScheduleOptions, run_workloads
    from engine.pods.system import build_system

    technology = load_technology()
    system = build_system(settings.rows, settings.cols, settings.pods, settings.interconnect, technology)
    if system.peak_power() > technology.tdp_w:
        raise EngineError(f"{settings.pods} pods of {system.shape} need {system.peak_power():.0f} W at peak, over "
                          f"the {technology.tdp_w:g} W budget: fewer pods or a smaller array")
    workloads = [load_pod_workload(n, batch=settings.batch) for n in settings.networks]
    sched, result = run_workloads(workloads, system, ScheduleOptions(
        aggregation=settings.aggregation, post_processors_per_pod=settings.post_processors))
    ic = system.interconnect
    interconnect = {"name": ic.name, "ports": ic.ports, "stages": ic.stages(), "blocking": ic.blocking,
                    "latency_cycles": ic.latency_cycles(technology), "pj_per_byte": ic.pj_per_byte(technology),
                    "slice_cycles": system.slice_cycles}
    slices = max(sched.slices, 1)
    per_slice = np.zeros(slices)
    for offset in range(int(sched.op_span.max(initial=1))):
        held = sched.op_span > offset
        np.add.at(per_slice, np.minimum(sched.op_slice[held] + offset, slices - 1), 1)
    return PodOutcome(settings, result.summary(), pod_busy(sched), per_slice, gantt_grid(sched, MAX_GANTT_PODS),
                      tuple(sched.tiling.gemm_names), interconnect)


def run_granularity(networks: tuple[str, ...], interconnect: str, batch: int = 1) -> list:
    if not networks:
        raise EngineError("check at least one network")
    from engine.pods.studies import granularity_sweep

    workloads = [load_pod_workload(n, batch=batch) for n in networks]
    shapes = [(r, c) for r in GRANULARITY_SIZES for c in GRANULARITY_SIZES]
    points = granularity_sweep(workloads, load_technology(), shapes=shapes, interconnect=interconnect)
    if not points:
        raise EngineError("no array shape fits the power budget")
    return points


class PodGrid(QWidget):
    """Pods as squares in a near-square grid, shaded by the share of the schedule each is busy."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.busy = np.zeros(0)
        self.setMinimumSize(160, 160)

    def set_busy(self, busy: np.ndarray) -> None:
        self.busy = np.asarray(busy, dtype=float)
        self.setToolTip(f"{len(self.busy)} pods; busy {self.busy.mean():.0%} of the slices on average"
                        if len(self.busy) else "")
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt)
        n = len(self.busy)
        if not n:
            return
        side = math.ceil(math.sqrt(n))
        cell = min(self.width(), self.height()) / side
        painter = QPainter(self)
        painter.setPen(Qt.NoPen)
        for k, b in enumerate(self.busy):
            shade = QColor.fromHsvF(0.33, 0.15 + 0.85 * min(1.0, float(b)), 0.95 - 0.45 * min(1.0, float(b)))
            painter.setBrush(shade)
            painter.drawRect(QRectF((k % side) * cell + 0.5, (k // side) * cell + 0.5, cell - 1, cell - 1))
        painter.end()


def gantt_colours(grid: np.ndarray) -> tuple[np.ndarray, str]:
    """The Gantt grid (pods x slices: GEMM index, NaN idle) -> RGBA cells in the theme's colours (idle
    cells the theme's panel colour, each GEMM a colour of the theme's distinct set) and the legend's HTML."""
    colours = np.zeros(grid.shape + (4,), dtype=np.ubyte)
    idle = np.isnan(grid)
    palette = np.array([QColor(c).getRgb() for c in theme.ARRAY_COLOURS], dtype=np.ubyte)
    colours[~idle] = palette[grid[~idle].astype(int) % len(palette)]
    colours[idle] = QColor(theme.PANEL).getRgb()
    gemms = sorted({int(g) for g in grid[~idle]})
    swatch = "<span style='color:{}'>&#9632;</span> {}"
    items = [swatch.format(theme.ARRAY_COLOURS[g % len(theme.ARRAY_COLOURS)], f"GEMM {g}") for g in gemms[:24]]
    more = f" (+{len(gemms) - 24} more; colours repeat every {len(palette)})" if len(gemms) > 24 else (
        f" (colours repeat every {len(palette)})" if gemms and gemms[-1] >= len(palette) else "")
    items.append(swatch.format(theme.PANEL, "idle").replace("&#9632;</span>", "&#9633;</span>"))
    return colours, "&nbsp;&nbsp;".join(items) + more


class QtPods(QWidget):
    finished = Signal()  # a schedule or a sweep is shown (or failed)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.worker: TaskWorker | None = None
        self.outcome: PodOutcome | None = None
        self.points: list = []

        self.networks = QListWidget()
        for name in BUNDLED:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if name == "resnet50" else Qt.Unchecked)
            self.networks.addItem(item)
        self.networks.setMaximumHeight(110)
        self.add_file = QPushButton("Add network file…")
        self.add_file.clicked.connect(self._add_file)
        self.rows, self.cols, self.pods = self._spin(1, 1024, 32), self._spin(1, 1024, 32), self._spin(1, 8192, 256)
        self.batch = self._spin(1, 64, 1)
        self.interconnect = QComboBox()
        self.interconnect.addItems(INTERCONNECTS)
        self.interconnect.setCurrentText("butterfly-2")
        self.aggregation = QComboBox()
        self.aggregation.addItems(AGGREGATIONS)
        self.post_processors = QDoubleSpinBox()
        self.post_processors.setRange(-0.125, 4.0)
        self.post_processors.setSingleStep(0.125)
        self.post_processors.setDecimals(3)
        self.post_processors.setSpecialValueText("default")
        self.post_processors.setValue(-0.125)
        self.post_processors.setToolTip("tile aggregations the post-processor completes a slice, per pod; 0: "
                                        "unbounded; default: SOSA's pairs (0.5) with mixed, unbounded otherwise")
        self.schedule_button = QPushButton("Schedule")
        self.schedule_button.clicked.connect(self.start_schedule)
        self.sweep_button = QPushButton("Granularity sweep")
        self.sweep_button.clicked.connect(self.start_sweep)
        self.status = QLabel("Check networks (several: scheduled together), choose the system, then Schedule.")
        self.status.setWordWrap(True)

        form = QFormLayout()
        shape = QHBoxLayout()
        shape.addWidget(self.rows)
        shape.addWidget(QLabel("x"))
        shape.addWidget(self.cols)
        form.addRow("Array (rows x cols)", shape)
        form.addRow("Pods", self.pods)
        form.addRow("Interconnect", self.interconnect)
        form.addRow("Partial sums", self.aggregation)
        form.addRow("Post-processor", self.post_processors)
        form.addRow("Batch", self.batch)
        controls = QVBoxLayout()
        controls.addWidget(QLabel("Networks"))
        controls.addWidget(self.networks)
        controls.addWidget(self.add_file)
        controls.addLayout(form)
        buttons = QHBoxLayout()
        buttons.addWidget(self.schedule_button)
        buttons.addWidget(self.sweep_button)
        controls.addLayout(buttons)
        self.grid = PodGrid()
        controls.addWidget(QLabel("Pod grid (darker: busier)"))
        controls.addWidget(self.grid, 1)
        self.interconnect_label = QLabel("")
        self.interconnect_label.setWordWrap(True)
        controls.addWidget(self.interconnect_label)
        left = QWidget()
        left.setLayout(controls)

        self.figures = QLabel("")
        self.figures.setWordWrap(True)
        self.figures.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.gantt_plot = pg.PlotWidget()
        self.gantt_plot.setLabel("bottom", "slice")
        self.gantt_plot.setLabel("left", "pod")
        self.gantt_plot.invertY(True)
        for axis in ("left", "bottom"):  # pods and slices are counts: never "pod (x0.001)" on an empty chart
            self.gantt_plot.getAxis(axis).enableAutoSIPrefix(False)
        self.gantt_image = pg.ImageItem()
        self.gantt_plot.addItem(self.gantt_image)
        self.gantt_legend = QLabel("")
        self.gantt_legend.setWordWrap(True)
        gantt = QWidget()
        gantt_layout = QVBoxLayout(gantt)
        gantt_layout.setContentsMargins(0, 0, 0, 0)
        gantt_layout.addWidget(self.gantt_plot, 1)
        gantt_layout.addWidget(self.gantt_legend)
        self.busy_plot = pg.PlotWidget()
        self.busy_plot.setLabel("bottom", "slice")
        self.busy_plot.setLabel("left", "busy pods")
        self.busy_curve = self.busy_plot.plot([], [], pen=pg.mkPen("#2a7", width=1))
        self.energy_plot = pg.PlotWidget()
        self.energy_plot.setLabel("left", "energy (mJ)")
        self.energy_bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush="#58c")
        self.energy_plot.addItem(self.energy_bars)
        self.heat_plot = pg.PlotWidget()
        self.heat_plot.setLabel("bottom", "array columns")
        self.heat_plot.setLabel("left", "array rows")
        self.heat_image = pg.ImageItem()
        self.heat_plot.addItem(self.heat_image)
        self.heat_best = pg.ScatterPlotItem(symbol="star", size=16, brush="r")
        self.heat_plot.addItem(self.heat_best)
        self.heat_label = QLabel("")
        heat = QWidget()
        heat_layout = QVBoxLayout(heat)
        heat_layout.addWidget(self.heat_plot, 1)
        heat_layout.addWidget(self.heat_label)
        self.tabs = QTabWidget()
        self.tabs.addTab(gantt, "Gantt")
        self.tabs.addTab(self.busy_plot, "Busy pods")
        self.tabs.addTab(self.energy_plot, "Energy")
        self.tabs.addTab(heat, "Granularity")
        right = QWidget()
        right_layout = QGridLayout(right)
        right_layout.addWidget(self.figures, 0, 0)
        right_layout.addWidget(self.tabs, 1, 0)
        right_layout.setRowStretch(1, 1)

        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([280, 700])
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)

    @staticmethod
    def _spin(low: int, high: int, value: int) -> QSpinBox:
        box = QSpinBox()
        box.setRange(low, high)
        box.setValue(value)
        return box

    def settings(self) -> PodSettings:
        checked = tuple(self.networks.item(k).data(Qt.UserRole) or self.networks.item(k).text()
                        for k in range(self.networks.count())
                        if self.networks.item(k).checkState() == Qt.Checked)
        return PodSettings(checked, self.rows.value(), self.cols.value(), self.pods.value(),
                           self.interconnect.currentText(), self.aggregation.currentText(), self.batch.value(),
                           None if self.post_processors.value() < 0 else self.post_processors.value())

    def add_network(self, path: str, checked: bool = True) -> None:
        item = QListWidgetItem(path.rsplit("/", 1)[-1])
        item.setData(Qt.UserRole, path)
        item.setToolTip(path)
        item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
        item.setCheckState(Qt.Checked if checked else Qt.Unchecked)
        self.networks.addItem(item)

    def _add_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Network file", "", "Networks (*.json *.csv)")
        if path:
            self.add_network(path)

    @property
    def busy(self) -> bool:
        return self.worker is not None and self.worker.isRunning()

    def start_schedule(self) -> None:
        settings = self.settings()
        self._start(lambda: run_pods(settings), self._show_schedule,
                    f"scheduling {' + '.join(settings.networks) or '-'} on {settings.pods} pods of "
                    f"{settings.rows}x{settings.cols}, {settings.interconnect} …")

    def start_sweep(self) -> None:
        settings = self.settings()
        self._start(lambda: run_granularity(settings.networks, settings.interconnect, settings.batch),
                    self._show_sweep, f"sweeping {len(GRANULARITY_SIZES) ** 2} array shapes at the power budget …")

    def _start(self, fn, done, message: str) -> None:
        if self.busy:
            return
        self.schedule_button.setEnabled(False)
        self.sweep_button.setEnabled(False)
        self.status.setText(message)
        self.worker = TaskWorker(fn, self, background=True)
        self.worker.succeeded.connect(done)
        self.worker.failed.connect(self._failed)
        self.worker.finished.connect(self._idle)
        self.worker.start()

    def _idle(self) -> None:
        self.schedule_button.setEnabled(True)
        self.sweep_button.setEnabled(True)
        self.finished.emit()

    def _failed(self, message: str) -> None:
        self.status.setText(f"error: {message}")

    def _show_schedule(self, outcome: PodOutcome) -> None:
        self.outcome = outcome
        s = outcome.summary
        ic = outcome.interconnect
        self.grid.set_busy(outcome.busy_per_pod)
        self.interconnect_label.setText(
            f"{ic['name']}: {ic['ports']} pods x {ic['ports']} banks, {ic['stages']} stages, "
            f"{'blocking' if ic['blocking'] else 'non-blocking'}, {ic['latency_cycles']} cycles one way, "
            f"{ic['pj_per_byte']:.2f} pJ/byte; slice {ic['slice_cycles']} cycles")
        energy = s["energy_j"]
        total = sum(energy.values()) or 1.0
        self.figures.setText(
            f"<b>{' + '.join(s['workloads'])}</b> on {s['pods']} pods of {s['array']}: {s['tile_ops']:,} tile ops, "
            f"{s['slices']:,} slices, {s['cycles']:,} cycles ({s['seconds'] * 1e6:,.1f} µs)<br>"
            f"busy pods {s['busy_pods']:.1%}, utilisation {s['utilization']:.1%}, "
            f"{s['cycles_per_tile_op']:.1f} cycles per tile op; DRAM {s['dram_bytes'] / 1e6:.1f} MB streamed in "
            f"{s['dram_cycles']:,.0f} cycles<br>"
            f"effective <b>{s['effective_tops']:.1f} TOP/s</b> of {s['peak_tops']:.1f} peak; {s['watts']:.1f} W, "
            f"{s['effective_tops_per_watt']:.3f} TOP/s/W<br>energy "
            + ", ".join(f"{k} {v * 1e3:.3f} mJ ({v / total:.0%})" for k, v in energy.items()))
        colours, legend = gantt_colours(outcome.gantt)
        self.gantt_image.setImage(np.transpose(colours, (1, 0, 2)), levels=None)
        self.gantt_plot.setTitle(f"tile operations per pod (first {outcome.gantt.shape[0]} pods), coloured by GEMM")
        self.gantt_legend.setText(legend)
        self.busy_curve.setData(np.arange(len(outcome.busy_per_slice)), outcome.busy_per_slice)
        names = list(energy)
        self.energy_bars.setOpts(x=np.arange(len(names)), height=[energy[n] * 1e3 for n in names])
        self.energy_plot.getAxis("bottom").setTicks([list(enumerate(names))])
        self.status.setText(f"done: {s['effective_tops']:.1f} TOP/s effective, utilisation {s['utilization']:.1%}")

    def _show_sweep(self, points: list) -> None:
        self.points = points
        rows = sorted({p.rows for p in points})
        cols = sorted({p.cols for p in points})
        grid = np.full((len(cols), len(rows)), np.nan)
        for p in points:
            grid[cols.index(p.cols), rows.index(p.rows)] = p.effective_tops_per_watt
        finite = grid[np.isfinite(grid)]
        self.heat_image.setImage(np.nan_to_num(grid, nan=0.0), levels=(0, float(finite.max()) if finite.size else 1))
        self.heat_image.setLookupTable(pg.colormap.get("viridis").getLookupTable(nPts=256))
        from engine.pods.studies import best_point

        best = best_point(points)
        self.heat_best.setData([cols.index(best.cols) + 0.5], [rows.index(best.rows) + 0.5])
        self.heat_plot.getAxis("bottom").setTicks([[(k + 0.5, str(c)) for k, c in enumerate(cols)]])
        self.heat_plot.getAxis("left").setTicks([[(k + 0.5, str(r)) for k, r in enumerate(rows)]])
        self.heat_label.setText(f"effective TOP/s per W at the power budget; best {best.rows}x{best.cols} x "
                                f"{best.pods} pods: {best.effective_tops:.0f} TOP/s (SOSA Fig. 5: 32x32 chosen)")
        self.tabs.setCurrentIndex(self.tabs.count() - 1)
        self.status.setText(f"done: {len(points)} shapes; best {best.rows}x{best.cols}")

    def wait(self, msecs: int = 60000) -> None:
        """Let a running schedule or sweep finish (the window calls it on close)."""
        if self.worker is not None:
            self.worker.wait(msecs)
