"""QtSearchPanel(session): start / stop, method, time budget, all or selected designs, and three live
plots that keep their items and call setData: best throughput against time (per design and best
overall), samples per second, and latency against DSP for the configurations seen, Pareto front
highlighted.

Drawing is kept cheap while a search runs: the time axes span the budget from the start (so that
a tick does not rescale them and relayout the plots), the value axes have a fixed width, and the
scatter, the costly part, is redrawn every SCATTER_EVERY ticks only, in an event-loop pass of its own."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.models.search_session import SearchSession
from app.views import theme
from engine.search.methods import METHODS

SCOPES = ("all designs", "selected designs")
SCATTER_EVERY = 10  # ticks between scatter redraws: thousands of symbols are the costly part
AXIS_WIDTH = 58  # pixels of the value axes: a label growing by a digit must not relayout the plot
TIME_MARGIN = 1.1  # the time axes span the budget, this much more


def _plot(title: str, x: str, y: str) -> pg.PlotWidget:
    plot = pg.PlotWidget()
    plot.setTitle(title, size="10pt")
    plot.setLabel("bottom", x)
    plot.setLabel("left", y)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    plot.getAxis("left").setWidth(AXIS_WIDTH)
    for side in ("left", "bottom"):  # an axis repainted unchanged (a curve moved beside it) is a pixmap copy
        plot.getAxis(side).setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    return plot


class QtSearchPanel(QWidget):
    startRequested = Signal(str, float, bool)  # method, seconds, selected designs only

    def __init__(self, session: SearchSession, parent=None):
        super().__init__(parent)
        self.session = session
        self._ticks = 0
        self._time_span = 0.0  # seconds the time axes show while a search runs (0: automatic)
        self._scatter_due = False  # a scatter redraw is scheduled
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
        self.budget_bar.setFixedWidth(150)
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
        controls.addWidget(self.budget_bar)
        controls.addWidget(self.status, 1)

        self.throughput_plot = _plot("best throughput", "time (s)", "GOP/s")
        self.rate_plot = _plot("samples per second", "time (s)", "samples/s")
        self.scatter_plot = _plot("configurations seen", "latency (cycles)", "DSP")
        self.scatter_plot.setLogMode(x=True, y=False)
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
        plots = QHBoxLayout()
        for plot in (self.throughput_plot, self.rate_plot, self.scatter_plot):
            plots.addWidget(plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(controls)
        layout.addLayout(plots, 1)

        self.start_button.clicked.connect(
            lambda: self.startRequested.emit(self.method.currentText(), self.seconds.value(),
                                             self.scope.currentIndex() == 1))
        self.stop_button.clicked.connect(session.stop)
        session.ticked.connect(lambda _: self.redraw())
        session.phaseChanged.connect(self.redraw)
        session.stateChanged.connect(self._state)
        self._state()

    def set_waiting(self, text: str) -> None:
        """The search waits for something before it starts (the models being built)."""
        self.start_button.setEnabled(not text)
        self.status.setText(text)

    def redraw(self) -> None:
        s = self.session
        self._ticks += 1
        data = s.traces.plot_data(now=s.elapsed if s.running else None, points=False)
        for design, series in data.per_design.items():
            curve = self.design_curves.get(design)
            if curve is None:
                colour = theme.array_colour(len(self.design_curves))
                colour.setAlpha(150)
                curve = self.design_curves[design] = self.throughput_plot.plot(pen=pg.mkPen(colour, width=1))
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
            self.design_curves = {}
            self._span_time(s.budget * TIME_MARGIN)
        elif s.status == "replayed" or not self._time_span or s.elapsed > self._time_span:
            self._time_span = 0.0  # a finished search whose lines fit keeps its axes: no rescale, no relayout
            for plot in (self.throughput_plot, self.rate_plot):
                plot.enableAutoRange(x=True)
        self.redraw()
        if s.message:
            self.status.setText(self.status.text() + f" - {s.message}")
