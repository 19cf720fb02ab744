"""QtResultPlots(points): the configurations a search kept (every design's best and Pareto set,
DesignPoints) as a scatter whose axes are chosen from latency, DSP, BRAM18K, LUT, off-chip traffic
and throughput (log axes for latency and traffic), with the points that no other beats on both axes
joined as a front; and a roofline: throughput against operational intensity (ops per off-chip
byte) under the device's compute roof and its DRAM roof (`roofline`: the search panel shows it in a tab of
its own, beside this widget's scatter). Clicking a point emits
`pointClicked(design, params)`: the window loads that configuration everywhere, or refuses one no
longer legal (show_refusal: the reason in place of the note above the plots)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.models.design_points import METRICS, DesignPoints, PointTable
from app.views import theme
from app.views.elided_label import ElidedLabel
from app.views.plots import make_plot


def front_mask(x: np.ndarray, y: np.ndarray, maximise_y: bool) -> np.ndarray:
    """Points not beaten on both axes (x lower, y lower - or higher when maximise_y)."""
    if len(x) == 0:
        return np.zeros(0, dtype=bool)
    yy = -y if maximise_y else y
    order = np.lexsort((yy, x))
    best = np.inf
    mask = np.zeros(len(x), dtype=bool)
    for i in order:
        if yy[i] < best:
            mask[i], best = True, yy[i]
    return mask


class QtResultPlots(QWidget):
    pointClicked = Signal(str, dict)  # design, configuration

    def __init__(self, points: DesignPoints, parent=None):
        super().__init__(parent)
        self.points = points
        self.x_axis, self.y_axis = QComboBox(), QComboBox()
        for combo, current in ((self.x_axis, "latency"), (self.y_axis, "DSP")):
            combo.addItems(list(METRICS))
            combo.setCurrentText(current)
            combo.currentTextChanged.connect(self.redraw)
        self.scatter = make_plot("kept configurations", "", "")  # short titles: 1366x768 (window_geometry)
        self.dots = pg.ScatterPlotItem(size=7, pen=None, hoverable=True, hoverSize=11,
                                       tip=lambda x, y, data: data)
        self.front = pg.PlotDataItem(pen=pg.mkPen("#ffb454", width=2), name="front")
        self.scatter.addItem(self.front)
        self.scatter.addItem(self.dots)
        self.dots.sigClicked.connect(self._clicked)
        self.roofline = make_plot("roofline", "ops per off-chip byte", "GOP/s", log_x=True, log_y=True)
        self.roof = self.roofline.plot(pen=pg.mkPen(theme.ERROR, width=2, style=pg.QtCore.Qt.DashLine),
                                       name="device roofs")
        self.roof_dots = pg.ScatterPlotItem(size=7, pen=None, hoverable=True, tip=lambda x, y, data: data)
        self.roof_dots.sigClicked.connect(self._clicked)
        self.roofline.addItem(self.roof_dots)
        self.note = ElidedLabel("run a search: each design's best and Pareto set appear here")
        self.note.setObjectName("muted")  # one line, elided, the whole text its tooltip: never widens the panel
        axes = QHBoxLayout()
        for text, combo in (("x", self.x_axis), ("y", self.y_axis)):
            caption = QLabel(text)
            caption.setObjectName("muted")
            axes.addWidget(caption)
            axes.addWidget(combo)
        axes.addWidget(self.note, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(axes)
        layout.addWidget(self.scatter, 1)  # the roofline is a tab of its own (the search panel's): each plot
        # gets the tab's whole width, 1366x768 included
        points.changed.connect(self.redraw)
        self.redraw()

    def _colours(self, table: PointTable) -> list:
        order = list(dict.fromkeys(table.designs))
        return [pg.mkBrush(theme.array_colour(order.index(d))) for d in table.designs]

    def redraw(self) -> None:
        table = self.points.table
        x_name, y_name = self.x_axis.currentText(), self.y_axis.currentText()
        (x_col, x_label, x_log), (y_col, y_label, y_log) = METRICS[x_name], METRICS[y_name]
        self.scatter.setLabel("bottom", x_label)
        self.scatter.setLabel("left", y_label)
        self.scatter.setLogMode(x=x_log, y=y_log)
        if not len(table):
            for item in (self.dots, self.roof_dots):
                item.setData([], [])
            self.front.setData([], [])
            self.roof.setData([], [])
            return
        self.note.setStyleSheet("")
        self.note.setText(f"{len(table)} configurations of {len(set(table.designs))} designs (each one's best and "
                          "Pareto set); click one to load it")
        x, y = table.columns[x_col], table.columns[y_col]
        tips = [f"{d}\n" + " ".join(f"{k}={v}" for k, v in p.items()) for d, p in zip(table.designs, table.params)]
        brushes = self._colours(table)
        data = list(range(len(table)))
        self.dots.setData([{"pos": (self._axis(a, x_log), self._axis(b, y_log)), "data": k, "brush": brush}
                           for a, b, k, brush in zip(x, y, data, brushes)])
        self._tips = tips
        self.dots.opts["tip"] = lambda x, y, data: self._tips[data]
        mask = front_mask(x, y, maximise_y=y_name == "throughput")
        order = np.argsort(x[mask])
        self.front.setData(x[mask][order], y[mask][order])  # a PlotDataItem: the plot applies the log itself
        intensity, gops = table.columns["intensity"], table.columns["throughput_gops"]
        self.roof_dots.setData([{"pos": (np.log10(max(i, 1e-9)), np.log10(max(g, 1e-9))), "data": k, "brush": brush}
                                for i, g, k, brush in zip(intensity, gops, data, brushes)])
        self.roof_dots.opts["tip"] = lambda x, y, data: self._tips[data]
        roofs = table.roofs
        if roofs and roofs.compute_gops > 0 and roofs.bandwidth_gbs > 0:
            low = min(float(intensity.min()), roofs.compute_gops / roofs.bandwidth_gbs) / 10
            high = max(float(intensity.max()), roofs.compute_gops / roofs.bandwidth_gbs) * 10
            ridge = roofs.compute_gops / roofs.bandwidth_gbs
            xs = np.array([low, ridge, high])
            self.roof.setData(xs, np.minimum(xs * roofs.bandwidth_gbs, roofs.compute_gops))
            # the roofs named in the title, not by a legend over the data
            self.roofline.setTitle(f"roofs: {roofs.compute_gops:,.0f} GOP/s, {roofs.bandwidth_gbs:,.1f} GB/s",
                                   size="10pt")

    @staticmethod
    def _axis(values, log: bool):
        """ScatterPlotItem positions are in view coordinates: log10 on a log axis."""
        return np.log10(np.maximum(values, 1e-9)) if log else values

    def _clicked(self, _item, spots, *_) -> None:
        if len(spots):
            self.click_point(int(spots[0].data()))

    def show_refusal(self, why: str) -> None:
        """Why a clicked point was not loaded ("": it was; the note says what the plots hold)."""
        if why:
            self.note.setStyleSheet(f"color: {theme.ERROR}")
            self.note.setText(why)
        elif self.note.styleSheet():
            self.redraw()

    def click_point(self, index: int) -> None:
        table = self.points.table
        self.pointClicked.emit(table.designs[index], dict(table.params[index]))
