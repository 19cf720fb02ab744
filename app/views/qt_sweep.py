"""QtSweep(sweep): the one-parameter sweep of the selected design (app/models/parameter_sweep.py) ->
two plots over the chosen tuning parameter, the others fixed: the latency (cycles, log axes) and every
resource's share of the device's budget (a 100% line), the value the selection has marked in both;
a value that breaks the budget is drawn hollow. The parameter is picked in a combo box; the sweep
runs in the session's worker."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.models.parameter_sweep import SweepSession
from app.views import theme
from app.views.plots import HtmlLegend, make_plot

RESOURCE_COLOURS = {"DSP": "#4fa3ff", "BRAM18K": "#ffb454", "URAM": "#c792ea", "LUT": "#6bd68a", "FF": "#56d4dd"}


class QtSweep(QWidget):
    def __init__(self, sweep: SweepSession, parent=None):
        super().__init__(parent)
        self.sweep = sweep
        self.param = QComboBox()
        self.param.setToolTip("the tuning parameter swept over its legal values; the others keep the values shown")
        self.status = QLabel("select a design")
        self.status.setObjectName("muted")
        self.status.setWordWrap(True)
        self.latency_plot = make_plot("latency", "", "cycles", log_x=True, log_y=True)
        self.resource_plot = make_plot("resources", "", "share of the budget (%)", log_x=True)
        self.latency = self.latency_plot.plot([], [], pen=pg.mkPen(theme.ACCENT, width=2), symbol="o", symbolSize=6,
                                              symbolBrush=theme.ACCENT)
        self.over = self.latency_plot.plot([], [], pen=None, symbol="o", symbolSize=8,
                                           symbolBrush=None, symbolPen=pg.mkPen(theme.ERROR, width=1.5))
        self.resources = {r: self.resource_plot.plot([], [], pen=pg.mkPen(c, width=2)) for r, c in
                          RESOURCE_COLOURS.items()}
        self.budget_line = pg.InfiniteLine(100, angle=0, pen=pg.mkPen(theme.ERROR, style=Qt.DashLine))
        self.resource_plot.addItem(self.budget_line)
        self.markers = [pg.InfiniteLine(angle=90, pen=pg.mkPen(theme.MUTED, style=Qt.DotLine))
                        for _ in range(2)]
        self.latency_plot.addItem(self.markers[0])
        self.resource_plot.addItem(self.markers[1])
        legend = HtmlLegend(self.resource_plot, columns=5)
        legend.set_entries([(r, c, "&#9644;") for r, c in RESOURCE_COLOURS.items()])
        top = QHBoxLayout()
        caption = QLabel("sweep")
        caption.setObjectName("muted")
        top.addWidget(caption)
        top.addWidget(self.param)
        top.addWidget(self.status, 1)
        plots = QHBoxLayout()
        plots.addWidget(self.latency_plot)
        plots.addWidget(self.resource_plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addLayout(plots, 1)
        self.param.activated.connect(lambda _: sweep.set_param(self.param.currentText()))
        sweep.changed.connect(self.refresh)
        sweep.selection.changed.connect(self._selection_changed)
        self._selection_changed()
        self.refresh()

    def _selection_changed(self) -> None:
        names = self.sweep.params()
        if names != [self.param.itemText(k) for k in range(self.param.count())]:
            self.param.clear()
            self.param.addItems(names)
        key = self.sweep.current_key()
        if key is not None:
            self.param.setCurrentText(key[-2])
        if self.sweep.points is None or key is None or self.sweep.points.param != key[-2]:
            self.status.setText("sweeping ..." if key is not None else "select a valid configuration")

    def refresh(self) -> None:
        s = self.sweep
        if s.error:
            self.status.setText(f"<span style='color:{theme.ERROR}'>{s.error}</span>")
            return
        p = s.points
        if p is None:
            return
        x = np.array(p.values, dtype=float)
        self.latency.setData(x, np.array(p.latency))
        over = [k for k, fits in enumerate(p.fits) if not fits]
        self.over.setData(x[over], np.array(p.latency)[over])
        for resource, curve in self.resources.items():
            curve.setData(x, 100 * np.array(p.shares[resource]))
        for plot in (self.latency_plot, self.resource_plot):
            plot.setLabel("bottom", p.param)
        for marker in self.markers:
            marker.setValue(np.log10(p.current))  # the x axes are logarithmic
        best = int(np.argmin(p.latency)) if p.latency else 0
        self.status.setText(f"{p.design}: {p.param} over {len(p.values)} legal values, the others fixed; "
                            f"now {p.current} ({p.latency[p.values.index(p.current)]:,.0f} cycles); shortest "
                            f"{p.latency[best]:,.0f} cycles at {p.values[best]}"
                            + ("" if p.fits[best] else " (over the budget)") + "; hollow red: over the budget")
