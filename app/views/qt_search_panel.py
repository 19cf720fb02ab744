"""QtSearchPanel(session, points): start / stop, method, budget (sampling time or a number of
samples, as `systolic search --seconds / --samples`, with a progress bar of what is spent), seed
(`--seed`: a sample budget and a seed make a search reproducible), all or selected designs, and
live plots that keep their items and call setData: each design's best as a ranked bar chart grouped
by dataflow (QtRankedBars, the default) or, on demand, best throughput against time (per design,
with a legend under the plot naming the best overall and the three best designs, the others by a
hover readout), samples per second, and latency against DSP for
the configurations seen, Pareto front highlighted; beside the last, the kept configurations with
chosen axes and the roofline, each a tab (QtResultPlots). Every plot saves as PNG / SVG / CSV from its context
menu (Export...) or save_plot().

Drawing is kept cheap while a search runs, so that the window answers within 100 ms on a loaded
machine: ticks (10 per second) only mark the plots stale and a frame timer redraws them at most
every FRAME_MS; a best-so-far line is set only when it improves, its step to the present is a
separate two-point tail (so a frame repaints a thin strip, not the whole plot); the axes do not
autorange (the time axes span the budget from the start, the value axes grow in steps with
headroom, and have a fixed width: a tick does not rescale or relayout the plots); a plot on a
hidden tab is redrawn when its tab is shown, not before; the scatter, the costly part, is redrawn
every SCATTER_FRAMES frames only, half a frame after the lines."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRegularExpression, QTimer, Signal
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.models.design_points import DesignPoints
from app.models.search_session import SearchSession
from app.views import theme
from app.views.elided_label import ElidedLabel
from app.views.plots import HtmlLegend, make_plot
from app.views.qt_ranked_bars import QtRankedBars
from app.views.qt_result_plots import QtResultPlots
from engine.limits import INT64_MAX
from engine.search.methods import METHODS

SCOPES = ("all designs", "selected")
BUDGET_KINDS = ("seconds", "samples")
DEFAULT_SAMPLES = 20_000
SAMPLES_TIME_SPAN = 2.0  # the time axes' first span under a sample budget (they grow with the search)
FRAME_MS = 200  # while a search runs, the plots are redrawn at most this often, when a tick brought data
SCATTER_FRAMES = 5  # frames between redraws of the live scatter: thousands of symbols are the costly part
TIME_MARGIN = 1.1  # the time axes span the budget, this much more
LEGEND_DESIGNS = 3  # designs named in the over-time plot's legend, the best so far
HEADROOM = 1.25  # a value axis that must grow grows to this much more than the value: it rescales rarely
SCATTER_MARGIN = 0.1  # the live scatter's axes grow past the points by this share of their span
# the plot's items: no re-processing of every curve on each change of the value axis (pyqtgraph's
# dynamicRangeLimit guards against values far off-screen, which these plots do not have)
LIVE = {"dynamicRangeLimit": None}


class QtSearchPanel(QWidget):
    # method, seconds (None: a sample budget), selected designs only, samples (None: a time budget), seed
    startRequested = Signal(str, object, bool, object, object)

    def __init__(self, session: SearchSession, points: DesignPoints | None = None, parent=None):
        super().__init__(parent)
        self.session = session
        self._frames = 0
        self._time_span = 0.0  # seconds the time axes show while a search runs (0: automatic)
        self._tops: dict = {}  # plot -> the top of its value axis while a search runs
        self._scatter_box: tuple | None = None  # the live scatter's view (x0, x1, y0, y1) while a search runs
        self._scatter_due = False  # a scatter redraw is scheduled
        self._stale: set = set()  # plots on hidden tabs that missed a redraw
        self._ticked_since_frame = False
        self._active: set[str] = set()  # designs in the latest tick: their lines grow to the present
        self._drawn: dict = {}  # curve -> what it shows (points, last t, last y)
        self.frame_timer = QTimer(self)
        self.frame_timer.setInterval(FRAME_MS)
        self.frame_timer.timeout.connect(self._frame)
        self.method = QComboBox()
        self.method.addItems(list(METHODS))
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.5, 3600)
        self.seconds.setValue(10)
        self.seconds.setSuffix(" s")
        self.seconds.setToolTip("sampling time, split evenly across the designs searched, as `systolic search "
                                "--seconds` spends it: warming up and compiling come before it starts, each "
                                "design's model (built in the background after a compile) before its share")
        self.budget_kind = QComboBox()
        self.budget_kind.addItems(BUDGET_KINDS)
        self.budget_kind.setToolTip("a time budget, or a number of evaluated configurations (`--samples`): with "
                                    "a sample budget and a seed a search gives the same result every time")
        self.samples = QSpinBox()
        self.samples.setRange(1, 2**31 - 1)
        self.samples.setValue(DEFAULT_SAMPLES)
        self.samples.setGroupSeparatorShown(True)
        self.samples.setToolTip("configurations evaluated in all, split evenly across the designs searched, as "
                                "`systolic search --samples` splits them")
        self.samples.setVisible(False)
        self.seed = QLineEdit()
        self.seed.setPlaceholderText("0")
        self.seed.setValidator(QRegularExpressionValidator(QRegularExpression(r"[0-9]{0,19}"), self.seed))
        self.seed.setMaximumWidth(self.seed.fontMetrics().horizontalAdvance("0" * 12) + 12)
        self.seed.setToolTip("the search's seed, 0..2^63-1, as `systolic search --seed` (the n-th design "
                             "searched gets seed + n)")
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
        # elided (its size policy ignores the text): a longer text must not relayout the panel, which
        # resizes the plots and repaints them whole; the end of the line (the best figure) stays in view
        self.status = ElidedLabel("no search yet")
        self.status.setObjectName("muted")
        controls = QHBoxLayout()
        for label, widgets in (("method", (self.method,)), ("budget", (self.budget_kind, self.seconds, self.samples)),
                               ("seed", (self.seed,))):
            caption = QLabel(label)
            caption.setObjectName("muted")
            controls.addWidget(caption)
            for widget in widgets:
                controls.addWidget(widget)
        controls.addStretch(1)
        progress = QHBoxLayout()
        caption = QLabel("on")
        caption.setObjectName("muted")
        for widget in (caption, self.scope, self.start_button, self.stop_button, self.budget_bar):
            progress.addWidget(widget)
        progress.addWidget(self.status, 1)

        self.throughput_plot = make_plot("best throughput", "sampling time (s)", "GOP/s")  # fits 1366x768
        self.legend = HtmlLegend(self.throughput_plot, columns=2)
        self.ranked = QtRankedBars(session)
        self.hover = pg.TextItem(color=theme.TEXT, anchor=(0, 1), fill=pg.mkBrush(38, 42, 49, 220))
        self.hover.setZValue(10)
        self.hover.setVisible(False)
        self.throughput_plot.addItem(self.hover, ignoreBounds=True)
        self.throughput_plot.scene().sigMouseMoved.connect(self._hover)
        self.rate_plot = make_plot("samples per second", "sampling time (s)", "samples / s")
        self.rate_plot.setLimits(yMin=0)
        self.scatter_plot = make_plot("configurations seen (live)", "latency (cycles)", "DSP", log_x=True)
        self.overall = self.throughput_plot.plot(pen=pg.mkPen(theme.ACCENT, width=3), name="best overall", **LIVE,
                                                 symbol="o", symbolSize=5, symbolBrush=theme.ACCENT, symbolPen=None)
        self.design_curves: dict[str, pg.PlotDataItem] = {}
        # each line's step from its last improvement to the present: two points, outside the legend,
        # the bounds and the saved data
        self.tails: dict[str, pg.PlotCurveItem] = {}
        self.overall_tail = self._add_tail(pg.mkPen(theme.ACCENT, width=3))
        self.rate = self.rate_plot.plot(pen=pg.mkPen(theme.OK, width=2), **LIVE)
        self.points = pg.PlotDataItem(pen=None, symbol="o", symbolSize=4, symbolPen=None, antialias=False, **LIVE,
                                      symbolBrush=pg.mkBrush(79, 163, 255, 90))
        self.front = pg.PlotDataItem(pen=pg.mkPen("#ffb454", width=2), symbol="o", symbolSize=7, **LIVE,
                                     symbolBrush="#ffb454", symbolPen=None, name="Pareto front")
        self.scatter_plot.addItem(self.points)
        self.scatter_plot.addItem(self.front)
        self.results = QtResultPlots(points or DesignPoints(None, self))
        self.result_tabs = QTabWidget()
        self.result_tabs.setDocumentMode(True)
        self.result_tabs.addTab(self.scatter_plot, "seen (live)")
        self.result_tabs.addTab(self.results, "kept")
        self.result_tabs.addTab(self.results.roofline, "roofline")
        self.result_tabs.addTab(self.rate_plot, "samples / s")
        self.result_tabs.currentChanged.connect(self._tab_shown)
        self.best_tabs = QTabWidget()
        self.best_tabs.setDocumentMode(True)
        self.best_tabs.addTab(self.ranked, "best per design")
        self.best_tabs.addTab(self.throughput_plot, "over time")
        self.best_tabs.currentChanged.connect(self._best_tab_shown)
        plots = QHBoxLayout()
        plots.addWidget(self.best_tabs, 1)
        plots.addWidget(self.result_tabs, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(controls)
        layout.addLayout(progress)
        layout.addLayout(plots, 1)

        self.budget_kind.currentIndexChanged.connect(self._budget_kind)
        self.start_button.clicked.connect(self.request_start)
        self.stop_button.clicked.connect(session.stop)
        session.ticked.connect(self._ticked)
        session.phaseChanged.connect(self.redraw)
        session.stateChanged.connect(self._state)
        self._state()

    def _budget_kind(self, index: int) -> None:
        self.seconds.setVisible(index == 0)
        self.samples.setVisible(index == 1)

    def seed_value(self) -> int | None:
        """The seed typed (empty: 0), or None when it is out of range (said in the status line)."""
        value = int(self.seed.text() or 0)
        if value > INT64_MAX:
            self.status.setText(f"the seed must be in 0..2^63-1 = {INT64_MAX}, not {value}")
            return None
        return value

    def request_start(self) -> None:
        """Start as set in the panel: method, budget (time or samples), seed, designs."""
        seed = self.seed_value()
        if seed is None:
            return
        by_samples = self.budget_kind.currentIndex() == 1
        self.startRequested.emit(self.method.currentText(), None if by_samples else self.seconds.value(),
                                 self.scope.currentIndex() == 1, self.samples.value() if by_samples else None, seed)

    def set_budget(self, seconds: float | None, samples: int | None, seed: int) -> None:
        """Show a budget and seed (a project's)."""
        self.budget_kind.setCurrentIndex(1 if samples else 0)
        if seconds:
            self.seconds.setValue(seconds)
        if samples:
            self.samples.setValue(samples)
        self.seed.setText(str(seed) if seed else "")

    def _ticked(self, snapshots: list) -> None:
        self._active = {p.design for p in snapshots} or self._active
        self._ticked_since_frame = True

    def _frame(self) -> None:
        if self._ticked_since_frame:
            self._ticked_since_frame = False
            self.redraw()

    def _add_tail(self, pen) -> pg.PlotCurveItem:
        tail = pg.PlotCurveItem(pen=pen)
        self.throughput_plot.getViewBox().addItem(tail, ignoreBounds=True)
        return tail

    def _set(self, curve, series) -> None:
        """setData only when the series changed (its length or last point)."""
        shown = (len(series.t), float(series.t[-1]), float(series.y[-1])) if len(series.t) else None
        if self._drawn.get(curve, ()) != shown:
            self._drawn[curve] = shown
            curve.setData(series.t, series.y)

    def _set_tail(self, tail: pg.PlotCurveItem, series, now: float | None) -> None:
        """The line's flat step from its last point to `now` (None: no step)."""
        grow = now is not None and len(series.t) and now > series.t[-1]
        shown = (float(series.t[-1]), now, float(series.y[-1])) if grow else None
        if self._drawn.get(tail, ()) != shown:
            self._drawn[tail] = shown
            if grow:
                tail.setData([shown[0], now], [shown[2], shown[2]])
            else:
                tail.setData([], [])

    def _shown(self, plot) -> bool:
        """Whether a plot of the tabs is drawn now; a running search skips hidden ones."""
        if not self.session.running or self.result_tabs.currentWidget() is plot:
            return True
        self._stale.add(plot)
        return False

    def _tab_shown(self, _index: int) -> None:
        plot = self.result_tabs.currentWidget()
        if plot in self._stale:
            self._stale.discard(plot)
            if plot is self.rate_plot:
                self._draw_rate(self.session.traces.plot_data(points=False).rate)
            elif plot is self.scatter_plot:
                self._schedule_scatter()

    def _best_tab_shown(self, _index: int) -> None:
        if self.best_tabs.currentWidget() is self.ranked and self.ranked in self._stale:
            self._stale.discard(self.ranked)
            self.ranked.redraw()

    def redraw(self) -> None:
        s = self.session
        self._frames += 1
        if not s.running or self.best_tabs.currentWidget() is self.ranked:
            self.ranked.redraw()
        else:
            self._stale.add(self.ranked)
        # only the lines that improved are set again; the designs being searched and the overall
        # line grow to the present through their tails
        data = s.traces.plot_data(points=False)
        now = s.elapsed if s.running else None
        for design, series in data.per_design.items():
            curve = self.design_curves.get(design)
            if curve is None:
                colour = theme.array_colour(len(self.design_curves))
                colour.setAlpha(150)
                pen = pg.mkPen(colour, width=1)
                curve = self.design_curves[design] = self.throughput_plot.plot(pen=pen, name=design, **LIVE)
                self.tails[design] = self._add_tail(pen)
            self._set(curve, series)
            self._set_tail(self.tails[design], series, now if design in self._active else None)
        self._label(data.per_design)  # (the legend's text is set again only when its top designs change)
        self._set(self.overall, data.overall)
        self._set_tail(self.overall_tail, data.overall, now)
        if s.running and s.elapsed > self._time_span:
            self._span_time(s.elapsed * 1.25)
        best = data.overall.y[-1] if len(data.overall.y) else None
        if best is not None:
            self._grow(self.throughput_plot, best)
        if self._shown(self.rate_plot):
            self._draw_rate(data.rate)
        if (not s.running or self._frames % SCATTER_FRAMES == 1) and self._shown(self.scatter_plot):
            self._schedule_scatter()
        text = f"{s.traces.total_samples:,} samples in {s.elapsed:.1f} s"
        if s.running and s.budget_started_at is None:
            text = s.phase or "starting the search"
        fraction = s.budget_fraction() if s.running else (1.0 if s.status in ("finished", "replayed") else 0.0)
        self.budget_bar.setValue(int(1000 * fraction))
        spent = (f"{s.traces.total_samples:,} of {s.samples_budget:,}" if s.samples_budget else
                 f"{fraction * s.budget:.1f} of {s.budget:g} s")
        self.budget_bar.setFormat(spent if s.running else "budget")
        # the best figure first: what a narrow panel cuts is the end
        self.status.setText((f"best {best:,.1f} GOP/s, " if best is not None else "") + text
                            + (f" ({s.status})" if s.status not in ("running", "idle") else ""))

    def _draw_rate(self, rate) -> None:
        self.rate.setData(rate.t, rate.y)
        if len(rate.y):
            self._grow(self.rate_plot, float(rate.y.max()))

    def _grow(self, plot, value: float) -> None:
        """From the start of a search to the end of its axes' span, a value axis spans 0 to a top that
        only grows, with headroom: an autorange on every frame cost a pass over every curve and a
        repaint of the axis."""
        if plot in self._tops and value > self._tops[plot]:
            self._tops[plot] = value * HEADROOM
            plot.setYRange(0.0, value * HEADROOM, padding=0.0)

    def _schedule_scatter(self) -> None:
        if not self._scatter_due:
            # half a frame later while a search runs (at once after it): drawn together with the
            # lines it would double the longest stretch the window spends without handling anything else
            self._scatter_due = True
            QTimer.singleShot(FRAME_MS // 2 if self.session.running else 0, self, self._redraw_scatter)

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
            if self.session.running:
                self._grow_scatter(data.points)
            self.points.setData(data.points[:, 0], data.points[:, 1])
            self.front.setData(data.front[:, 0], data.front[:, 1])
        else:
            self.points.setData([], [])
            self.front.setData([], [])

    def _grow_scatter(self, points) -> None:
        """While a search runs, the live scatter's axes only grow, with a margin: an autorange on each
        redraw moved them every time, and redrawing the axes and their grid was the redraw's costliest
        part (the x axis is logarithmic: its view coordinates are decades)."""
        x, y = np.log10(np.maximum(points[:, 0], 1e-9)), points[:, 1]
        low_x, high_x, low_y, high_y = float(x.min()), float(x.max()), float(y.min()), float(y.max())
        box = self._scatter_box
        if box is not None and box[0] <= low_x and high_x <= box[1] and box[2] <= low_y and high_y <= box[3]:
            return
        if box is not None:
            low_x, high_x = min(low_x, box[0]), max(high_x, box[1])
            low_y, high_y = min(low_y, box[2]), max(high_y, box[3])
        dx, dy = SCATTER_MARGIN * max(high_x - low_x, 0.1), SCATTER_MARGIN * max(high_y - low_y, 1.0)
        bottom = low_y - dy
        if low_y >= 0:  # a resource is never negative: only a sliver below 0 (a point at 0 stays whole)
            bottom = max(bottom, -0.02 * (high_y + dy))
        self._scatter_box = (low_x - dx, high_x + dx, bottom, high_y + dy)
        self.scatter_plot.setRange(xRange=self._scatter_box[:2], yRange=self._scatter_box[2:], padding=0.0)

    def _clear_lines(self) -> None:
        for curve in self.design_curves.values():
            self.throughput_plot.removeItem(curve)
        for tail in self.tails.values():
            self.throughput_plot.getViewBox().removeItem(tail)
        self.design_curves, self.tails, self._drawn, self._active = {}, {}, {}, set()
        self._label()

    def _label(self, per_design=None) -> None:
        """The legend under the plot: the overall line and the LEGEND_DESIGNS designs best so far (27
        entries covered the plot at 1366x768); the others are named by hovering their line."""
        best = {d: float(series.y[-1]) for d, series in (per_design or {}).items() if len(series.y)}
        ranked = sorted(self.design_curves, key=lambda d: -best.get(d, 0.0))
        shown = ranked[:LEGEND_DESIGNS]
        more = len(ranked) - len(shown)
        self.legend.set_entries([("best overall", theme.ACCENT, "&#9644;")] +
                                [(design, self.design_curves[design].opts["pen"].color(), "&#9632;")
                                 for design in shown] +
                                ([(f"{more} more: hover a line", theme.MUTED, "")] if more else []))

    def _span_time(self, seconds: float) -> None:
        self._time_span = seconds
        for plot in (self.throughput_plot, self.rate_plot):
            plot.setXRange(0.0, seconds, padding=0.0)

    def _state(self) -> None:
        s = self.session
        if s.running:
            self.frame_timer.start()
        else:
            self.frame_timer.stop()
            self._stale.clear()  # the redraw below draws every plot
        self.start_button.setEnabled(not s.running)
        self.stop_button.setEnabled(s.running and s.status != "stopping")
        for widget in (self.method, self.budget_kind, self.seconds, self.samples, self.seed, self.scope):
            widget.setEnabled(not s.running)
        if s.status in ("running", "idle", "replayed"):  # another search's lines (or none) follow
            self._clear_lines()
        if s.status == "running":
            self._span_time((s.budget or SAMPLES_TIME_SPAN) * TIME_MARGIN)  # a sample budget: grows as it runs
            self._tops = {plot: 1.0 for plot in (self.throughput_plot, self.rate_plot)}
            for plot in self._tops:
                plot.setYRange(0.0, 1.0, padding=0.0)  # no autorange while it runs: see _grow
            self._scatter_box = None
        elif s.status == "replayed" or not self._time_span or s.elapsed > self._time_span:
            self._time_span = 0.0  # a finished search whose lines fit keeps its axes: no rescale, no relayout
            self._tops = {}
            for plot in (self.throughput_plot, self.rate_plot):
                plot.enableAutoRange()
        if s.status in ("idle", "replayed"):  # another search's points (or none); a finished one's fit its axes
            self.scatter_plot.enableAutoRange()
        self.redraw()
        if s.message:
            self.status.setText(self.status.text() + f" - {s.message}")
