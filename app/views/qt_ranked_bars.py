"""QtRankedBars(session): every design's best throughput in a search (SearchSession.traces) -> a
ranked horizontal bar chart grouped by dataflow: the groups in the order of their best design, each
group's designs best first, a gap between groups, one colour per dataflow (named in a legend above
the chart, outside the data, after the chart's title: a label that wraps, where a plot's own title
was cut off at 1366x768) and each bar labelled at its end with its design id and GOP/s (no
legend to match 27 colours against). Every bar gets ROW_PX pixels: the chart scrolls (the best at
the top, with the scale) rather than squeezing its labels together. Clicking a bar emits
designClicked(design): the window loads that design's best configuration
(DesignFocus.follow_bars), or says in place why it cannot. The traces over time stay in the
search panel, on their own tab."""
from __future__ import annotations

from html import escape
from typing import Callable, NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.models.search_session import SearchSession
from app.views import theme
from app.views.plots import make_plot

GROUP_GAP = 0.8  # rows of space between two dataflows
BAR_HEIGHT = 0.72
LABEL_ROOM = 1.9  # the value axis spans the best bar times this: room for the labels at the bars' ends
ROW_PX = 15  # pixels per bar: the chart is as high as its bars need and scrolls, its labels stay legible
FRAME_PX = 40  # the chart's axis (its title is in the label above it)
TITLE = "best throughput per design, ranked, by dataflow:"


class Bar(NamedTuple):
    design: str
    gops: float
    group: str
    y: float  # the bar's centre, rows from the top


def ranked(best: dict[str, float], group_of: Callable[[str], str]) -> list[Bar]:
    """The bars in drawing order: groups by their best design, designs best first within a group."""
    groups: dict[str, list[tuple[str, float]]] = {}
    for design, gops in best.items():
        groups.setdefault(group_of(design), []).append((design, gops))
    order = sorted(groups.items(), key=lambda kv: (-max(g for _, g in kv[1]), kv[0]))
    bars, y = [], 0.0
    for group, members in order:
        for design, gops in sorted(members, key=lambda m: (-m[1], m[0])):
            bars.append(Bar(design, gops, group, y))
            y += 1.0
        y += GROUP_GAP
    return bars


class QtRankedBars(QWidget):
    designClicked = Signal(str)

    def __init__(self, session: SearchSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.group_of: Callable[[str], str] = lambda design: ""  # the window sets it: design -> its dataflow
        self.plot = make_plot("", "", "")
        self.plot.setTitle(None)  # in self.legend, which wraps
        self.plot.getAxis("left").setStyle(showValues=False)
        self.plot.getAxis("left").setWidth(8)
        self.plot.showAxis("top")  # the scale stays with the best bars, at the top, when the chart scrolls
        self.plot.hideAxis("bottom")
        self.plot.setLabel("top", "throughput (GOP/s)")
        self.plot.getAxis("top").enableAutoSIPrefix(False)
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.bars = pg.BarGraphItem(x0=[], y=[], height=BAR_HEIGHT, width=[])
        self.plot.addItem(self.bars)
        self.labels: list[pg.TextItem] = []  # reused from one redraw to the next
        self.shown: list[Bar] = []
        self.legend = QLabel(TITLE)  # the chart's title and the dataflows' colours, above the chart
        self.legend.setWordWrap(True)
        self.legend.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.note = QLabel("run a search: each design's best appears here; click a bar to load it")
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)  # at 1366x768 the hint (and a refusal) is wider than the chart
        self.note.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.plot)
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        self.font = QFont(self.font())
        self.font.setPointSizeF(7.5)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.legend)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.note)
        self.plot.scene().sigMouseClicked.connect(self._clicked)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_note()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.FontChange, QEvent.StyleChange):  # presentation mode: larger fonts
            self._fit_note()

    def _fit_note(self) -> None:
        """The wrapped title's and hint's heights at the chart's width (an Ignored width gives a label no height for
        its width: in presentation mode at 1366x768 its third line was cut); the chart scrolls instead."""
        for label in (self.legend, self.note):
            label.setMinimumHeight(label.heightForWidth(max(self.width(), 1)))

    def colours(self, bars: list[Bar]) -> dict[str, str]:
        """One colour per dataflow, in the order the groups are drawn."""
        groups = list(dict.fromkeys(b.group for b in bars))
        return {g: theme.array_colour(k).name() for k, g in enumerate(groups)}

    def redraw(self) -> None:
        best = {design: float(trace[-1][1]) for design, trace in self.session.traces.best.items() if trace}
        bars = ranked(best, self.group_of)
        if bars == self.shown:
            return
        self.shown = bars
        colour = self.colours(bars)
        self.bars.setVisible(bool(bars))
        if bars:  # (pyqtgraph's BarGraphItem fails on an empty list of brushes)
            self.bars.setOpts(x0=[0.0] * len(bars), y=[b.y for b in bars], width=[b.gops for b in bars],
                              brushes=[pg.mkBrush(colour[b.group]) for b in bars], pen=pg.mkPen(None))
        while len(self.labels) < len(bars):
            label = pg.TextItem(color=theme.TEXT, anchor=(0, 0.5))
            label.setFont(self.font)
            self.plot.addItem(label, ignoreBounds=True)
            self.labels.append(label)
        for k, label in enumerate(self.labels):
            label.setVisible(k < len(bars))
            if k < len(bars):
                label.setText(f"{bars[k].design}  {bars[k].gops:,.1f}")
                label.setPos(bars[k].gops, bars[k].y)
        self.plot.setMinimumHeight(int(FRAME_PX + ROW_PX * (bars[-1].y + 1.2)) if bars else 0)
        if bars:
            top = max(b.gops for b in bars) or 1.0
            self.plot.setRange(xRange=(0.0, top * LABEL_ROOM), yRange=(-0.6, bars[-1].y + 0.6), padding=0.0)
            self.note.setText(f"{len(bars)} designs; click a bar to load the design's best")
        else:
            self.note.setText("run a search: each design's best appears here; click a bar to load it")
        self.legend.setText(f"{TITLE} " + "&nbsp;&nbsp;".join(
            f"<span style='color:{c}'>&#9632;</span>&nbsp;{escape(g or 'designs')}" for g, c in colour.items()))
        self._fit_note()

    def bar_at(self, x: float, y: float) -> Bar | None:
        """The bar (or its label) at view coordinates (x, y)."""
        for bar in self.shown:
            if abs(y - bar.y) <= BAR_HEIGHT / 2 and x >= 0:
                return bar
        return None

    def _clicked(self, event) -> None:
        if not self.plot.sceneBoundingRect().contains(event.scenePos()):
            return
        at = self.plot.getViewBox().mapSceneToView(event.scenePos())
        bar = self.bar_at(at.x(), at.y())
        if bar is not None:
            self.designClicked.emit(bar.design)

    def show_refusal(self, why: str) -> None:
        """Why a clicked bar's configuration was not loaded ("": it was)."""
        if why:
            self.note.setText(f"<span style='color:{theme.ERROR}'>{escape(why)}</span>")
        elif self.shown:
            self.note.setText(f"{len(self.shown)} designs; click a bar to load the design's best")
        self._fit_note()
