"""Plot helpers shared by the explorer's plots: a themed PlotWidget with readable axes (no SI
scaling of the labels, which printed "(x1e+09" and cut it off; log axes labelled in decades), a
legend drawn as one rich-text item under the data (HtmlLegend), and saving a plot as PNG, SVG or
its data as CSV."""
from __future__ import annotations

import csv
from pathlib import Path

from html import escape

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401 (registers the exporters used by save_plot)
from PySide6.QtGui import QColor, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from app.views import theme
from engine.errors import EngineError

AXIS_WIDTH = 58  # pixels of the value axes: a label growing by a digit must not relayout the plot
SAVE_FORMATS = "PNG image (*.png);;SVG drawing (*.svg);;CSV data (*.csv)"


class DecadeAxis(pg.AxisItem):
    """A log axis whose major ticks are the decades, written 10^n; a linear axis writes plain
    numbers with thousands separators."""

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return [f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}" for v in values]
        out = []
        for v in values:
            if abs(v - round(v)) < 1e-6:
                out.append(_power(int(round(v))))
            else:
                out.append("")
        return out

    def tickValues(self, minVal, maxVal, size):
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        low, high = int(np.floor(minVal)), int(np.ceil(maxVal))
        step = max(1, (high - low) // 6)
        return [(1.0, [float(v) for v in range(low, high + 1, step)])]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power(n: int) -> str:
    return "10" + str(n).translate(_SUPERSCRIPT)


def make_plot(title: str, x: str, y: str, *, log_x: bool = False, log_y: bool = False) -> pg.PlotWidget:
    plot = pg.PlotWidget(axisItems={"bottom": DecadeAxis("bottom"), "left": DecadeAxis("left")})
    plot.setTitle(title, size="10pt")
    plot.setLabel("bottom", x)
    plot.setLabel("left", y)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.getAxis("left").setWidth(AXIS_WIDTH)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.enableAutoSIPrefix(False)
        # an axis repainted unchanged (a curve moved beside it) is a pixmap copy
        axis.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    plot.setLogMode(x=log_x, y=log_y)
    # a few dozen items: a BSP index of them, rebuilt in a pass of its own whenever a curve or the
    # scatter changes its bounds, cost more than the linear look-ups it saves
    plot.scene().setItemIndexMethod(QGraphicsScene.NoIndex)
    return plot


class HtmlLegend:
    """A plot's legend as one rich-text item under its view box, outside the data: a coloured mark
    and a name per entry, `columns` to a row. Adding an entry to pyqtgraph's LegendItem made a label
    widget and relaid out every entry (about 8 ms of the GUI thread per design while a search
    streams); this sets one text."""

    def __init__(self, plot: pg.PlotWidget, *, columns: int = 3):
        self.item = pg.LabelItem(justify="left")
        plot.getPlotItem().layout.addItem(self.item, 4, 1)  # the row under the bottom axis
        self.columns = columns
        self.entries: list[tuple[str, str, str]] = []  # name, colour, mark

    def set_entries(self, entries: list[tuple[str, QColor | str, str]]) -> None:
        """(name, colour, mark) per entry, mark e.g. "&#9644;" for a line, "&#9632;" for a square."""
        entries = [(name, QColor(colour).name(), mark) for name, colour, mark in entries]
        if entries == self.entries:
            return
        self.entries = entries
        cells = [f'<td><span style="color:{colour}">{mark}</span>&nbsp;{escape(name)}&nbsp;&nbsp;</td>'
                 for name, colour, mark in entries]
        rows = ["".join(cells[i:i + self.columns]) for i in range(0, len(cells), self.columns)]
        # the colour read now: the theme may change after the plot is made
        self.item.setText(f'<table cellspacing="0" style="font-size:7pt; color:{theme.TEXT}">'
                          f'{"".join(f"<tr>{r}</tr>" for r in rows)}</table>' if rows else "")

    def names(self) -> list[str]:
        return [name for name, _, _ in self.entries]


def save_plot(plot: pg.PlotWidget, path: str | Path) -> Path:
    """PNG or SVG of the plot, or CSV of its curves' data (one x,y pair of columns per curve)."""
    path = Path(path)
    suffix = path.suffix.lower()
    item = plot.getPlotItem()
    if suffix == ".png":
        pg.exporters.ImageExporter(item).export(str(path))
    elif suffix == ".svg":  # drawn by Qt: pyqtgraph's SVG exporter fails on this Qt's path output
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(plot.size())
        generator.setViewBox(plot.rect())
        generator.setTitle(plot.getPlotItem().titleLabel.text)
        painter = QPainter(generator)
        plot.render(painter)
        painter.end()
    elif suffix == ".csv":
        _write_csv(item, path)
    else:
        raise EngineError(f"{path}: cannot save a plot as '{suffix or 'no suffix'}' (use .png, .svg or .csv)")
    return path


def _write_csv(item, path: Path) -> None:
    curves = [c for c in item.listDataItems() if c.getData()[0] is not None and len(c.getData()[0])]
    columns, header = [], []
    x_name = item.getAxis("bottom").labelText or "x"
    y_name = item.getAxis("left").labelText or "y"
    for n, curve in enumerate(curves):
        x, y = curve.getOriginalDataset()
        name = curve.name() or f"series {n + 1}"
        header += [f"{name}: {x_name}", f"{name}: {y_name}"]
        columns += [list(x), list(y)]
    rows = max((len(c) for c in columns), default=0)
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for r in range(rows):
            writer.writerow([c[r] if r < len(c) else "" for c in columns])
