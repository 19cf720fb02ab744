"""QtSearchPanel(session, points): start / stop, method, time budget (with a progress bar of the
sampling time spent), all or selected designs, and live plots that keep their items and call
setData: best throughput against time (per design, with a legend and a hover readout, and best
overall), samples per second, and latency against DSP for the configurations seen, Pareto front
highlighted; beside the last, the kept configurations with chosen axes and the roofline
(QtResultPlots). Every plot saves as PNG / SVG / CSV from its context menu (Export...) or
save_plot().

Drawing is kept cheap while a search runs: the time axes span the budget from the start (so that
a tick does not rescale them and relayout the plots), the value axes have a fixed width, and the
scatter, the costly part, is redrawn every SCATTER_EVERY ticks only, in an event-loop pass of its own."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.models.design_points import DesignPoints
from app.models.search_session import SearchSession
from app.views import theme
from app.views.plots import make_plot
from app.views.qt_result_plots import QtResultPlots
from engine.search.methods import METHODS

SCOPES = ("all designs", "selected")
SCATTER_EVERY = 10  # ticks between scatter redraws: thousands of symbols are the costly part
TIME_MARGIN = 1.1  # the time axes span the budget, this much more


class QtSearchPanel(QWidget):
    startRequested = Signal(str, float, bool)  # method, seconds, selected designs only

    def __init__(self, session: SearchSession, points: DesignPoints | None = None, parent=None):
        super().__init__(parent)
        self.session = session
        self._ticks = 0
        self._time_span = 0.0  # seconds the time axes show while a search runs (0: automatic)
        self._scatter_due = False  # a scatter redraw is scheduled
        self._active: set[str] = set()  # designs in the latest tick: their lines grow to the present
        self._drawn: dict[str, tuple | None] = {}  # what each design's line shows
        self.method = QComboBox()
        self.method.addItems(list(METHODS))
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.5, 3600)
        self.seconds.setValue(10)
        self.seconds.setSuffix(" s")
        self.seconds.setToolTip("sampling time, split evenly across the designs searched, as `systolic search "
                                "--seconds` spends it: warming up, compiling and building the designs' models "
                                "come before it starts")
        self.scope = QComboBox()
        self.scope.addItems(SCOPES)
        self.start_button = QPushButton("Start search")
        self.start_button.setObjectName("primary")
        self.stop_button = QPushButton("Stop")
        self.budget_bar = QProgressBar()
        self.budget_bar.setRange(0, 1000)
        self.budget_bar.setTextVisible(True)
        self.budget_bar.setFormat("budget")
        self.budget_bar.setMinimumWidth(90)
        self.budget_bar.setMaximumWidth(220)
        self.budget_bar.setToolTip("the share of the time budget spent sampling")
        self.status = QLabel("no search yet")
        self.status.setObjectName("muted")
        # a longer text must not relayout the panel: that resizes the plots, and repaints them whole
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        controls = QHBoxLayout()
        for label, widget in (("method", self.method), ("budget", self.seconds), ("on", self.scope)):
            caption = QLabel(label)
            caption.setObjectName("muted")
            controls.addWidget(caption)
            controls.addWidget(widget)
        controls.addWidget(self.start_button)
        controls.addWidget(self.stop_button)
        controls.addStretch(1)
        progress = QHBoxLayout()
        progress.addWidget(self.budget_bar)
        progress.addWidget(self.status, 1)

        self.throughput_plot = make_plot("best throughput", "sampling time (s)", "throughput (GOP/s)")
        self.legend = self.throughput_plot.addLegend(offset=(-5, -5), labelTextSize="7pt", colCount=3)
        self.hover = pg.TextItem(color=theme.TEXT, anchor=(0, 1), fill=pg.mkBrush(38, 42, 49, 220))
        self.hover.setZValue(10)
        self.hover.setVisible(False)
        self.throughput_plot.addItem(self.hover, ignoreBounds=True)
        self.throughput_plot.scene().sigMouseMoved.connect(self._hover)
        self.rate_plot = make_plot("samples per second", "sampling time (s)", "samples / s")
        self.rate_plot.setLimits(yMin=0)
        self.scatter_plot = make_plot("configurations seen (live)", "latency (cycles)", "DSP", log_x=True)
        self.overall = self.throughput_plot.plot(pen=pg.mkPen(theme.ACCENT, width=3), name="best overall",
                                                 symbol="o", symbolSize=5, symbolBrush=theme.ACCENT, symbolPen=None)
        self.design_curves: dict[str, pg.PlotDataItem] = {}
        self.rate = self.rate_plot.plot(pen=pg.mkPen(theme.OK, width=2))
        self.points = pg.PlotDataItem(pen=None, symbol="o", symbolSize=4, symbolPen=None, antialias=False,
                                      symbolBrush=pg.mkBrush(79, 163, 255, 90))
        self.front = pg.PlotDataItem(pen=pg.mkPen("#ffb454", width=2), symbol="o", symbolSize=7,
                                     symbolBrush="#ffb454", symbolPen=None, name="Pareto front")
        self.scatter_plot.addItem(self.points)
        self.scatter_plot.addItem(self.front)
        self.results = QtResultPlots(points or DesignPoints(None, self))
        self.result_tabs = QTabWidget()
        self.result_tabs.setDocumentMode(True)
        self.result_tabs.addTab(self.scatter_plot, "seen (live)")
        self.result_tabs.addTab(self.results, "kept, roofline")
        self.result_tabs.addTab(self.rate_plot, "samples / s")
        plots = QHBoxLayout()
        plots.addWidget(self.throughput_plot, 1)
        plots.addWidget(self.result_tabs, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(controls)
        layout.addLayout(progress)
        layout.addLayout(plots, 1)

        self.start_button.clicked.connect(
            lambda: self.startRequested.emit(self.method.currentText(), self.seconds.value(),
                                             self.scope.currentIndex() == 1))
        self.stop_button.clicked.connect(session.stop)
        session.ticked.connect(self._ticked)
        session.phaseChanged.connect(self.redraw)
        session.stateChanged.connect(self._state)
        self._state()

    def set_waiting(self, text: str) -> None:
        """The search waits for something before it starts (the models being built)."""
        self.start_button.setEnabled(not text)
        self.status.setText(text)

    def _ticked(self, snapshots: list) -> None:
        self._active = {p.design for p in snapshots} or self._active
        self.redraw()

    def redraw(self) -> None:
        s = self.session
        self._ticks += 1
        # only the designs being searched grow: redrawing 18 unchanged lines every tick was the
        # largest part of a tick's painting
        data = s.traces.plot_data(now=s.elapsed if s.running else None, points=False,
                                  extend=self._active if s.running else None)
        for design, series in data.per_design.items():
            shown = (len(series.t), float(series.t[-1]), float(series.y[-1])) if len(series.t) else None
            if self._drawn.get(design) == shown and design in self.design_curves:
                continue
            self._drawn[design] = shown
            curve = self.design_curves.get(design)
            if curve is None:
                colour = theme.array_colour(len(self.design_curves))
                colour.setAlpha(150)
                curve = self.design_curves[design] = self.throughput_plot.plot(pen=pg.mkPen(colour, width=1),
                                                                               name=design)
            curve.setData(series.t, series.y)
        if s.running and s.elapsed > self._time_span:
            self._span_time(s.elapsed * 1.25)
        self.overall.setData(data.overall.t, data.overall.y)
        self.rate.setData(data.rate.t, data.rate.y)
        if (not s.running or self._ticks % SCATTER_EVERY == 1) and not self._scatter_due:
            # in a later pass of the event loop: drawn together with the lines it would double the
            # longest stretch the window spends without handling anything else
            self._scatter_due = True
            QTimer.singleShot(0, self, self._redraw_scatter)
        best = data.overall.y[-1] if len(data.overall.y) else None
        text = f"{s.traces.total_samples:,} samples in {s.elapsed:.1f} s"
        if s.running and s.budget_started_at is None:
            text = s.phase or "starting the search"
        fraction = s.budget_fraction() if s.running else (1.0 if s.status in ("finished", "replayed") else 0.0)
        self.budget_bar.setValue(int(1000 * fraction))
        self.budget_bar.setFormat(f"{fraction * s.budget:.1f} of {s.budget:g} s" if s.running else "budget")
        self.status.setText(text + (f", best {best:,.1f} GOP/s" if best is not None else "")
                            + (f" ({s.status})" if s.status not in ("running", "idle") else ""))

    def _hover(self, position) -> None:
        """The design whose best-so-far line passes nearest the pointer, its value and time."""
        box = self.throughput_plot.getViewBox()
        if not self.throughput_plot.sceneBoundingRect().contains(position) or not self.design_curves:
            self.hover.setVisible(False)
            return
        at = box.mapSceneToView(position)
        t, y = at.x(), at.y()
        nearest = None
        for design, curve in self.design_curves.items():
            xs, ys = curve.getData()
            if xs is None or not len(xs) or t < xs[0]:
                continue
            value = ys[np.searchsorted(xs, t, side="right") - 1]
            if nearest is None or abs(value - y) < abs(nearest[1] - y):
                nearest = (design, value)
        if nearest is None:
            self.hover.setVisible(False)
            return
        self.hover.setText(f"{nearest[0]}: {nearest[1]:,.1f} GOP/s at {t:.1f} s")
        self.hover.setPos(t, y)
        self.hover.setVisible(True)

    def _redraw_scatter(self) -> None:
        self._scatter_due = False
        data = self.session.traces.plot_data(points=True)
        if len(data.points):
            self.points.setData(data.points[:, 0], data.points[:, 1])
            self.front.setData(data.front[:, 0], data.front[:, 1])
        else:
            self.points.setData([], [])
            self.front.setData([], [])

    def _span_time(self, seconds: float) -> None:
        self._time_span = seconds
        for plot in (self.throughput_plot, self.rate_plot):
            plot.setXRange(0.0, seconds, padding=0.0)

    def _state(self) -> None:
        s = self.session
        self.start_button.setEnabled(not s.running)
        self.stop_button.setEnabled(s.running and s.status != "stopping")
        for widget in (self.method, self.seconds, self.scope):
            widget.setEnabled(not s.running)
        if s.status == "running":
            for curve in self.design_curves.values():
                self.throughput_plot.removeItem(curve)
            self.design_curves, self._drawn, self._active = {}, {}, set()
            self.legend.clear()
            self.legend.addItem(self.overall, "best overall")
            self._span_time(s.budget * TIME_MARGIN)
        elif s.status == "replayed" or not self._time_span or s.elapsed > self._time_span:
            self._time_span = 0.0  # a finished search whose lines fit keeps its axes: no rescale, no relayout
            for plot in (self.throughput_plot, self.rate_plot):
                plot.enableAutoRange(x=True)
        self.redraw()
        if s.message:
            self.status.setText(self.status.text() + f" - {s.message}")
