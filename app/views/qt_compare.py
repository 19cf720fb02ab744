"""QtCompare(compare, selection): the pinned configurations side by side: first a table of throughput,
latency, resources and traffic, one column per pin and as tall as its rows (the numbers in view at
1366x768; the page scrolls), then one column each of a topology thumbnail, the latency split and the
module terms (longest first, each as a share of that configuration's bottleneck). In the table the
best value of each row is marked and values that differ from the first pin are coloured (better
green, worse red), and resource cells above the device's budget are flagged (red background, the
share of the budget, and the column's title says it does not fit). Pin the selected configuration with the button (or Ctrl+P), unpin per column; the window's Edit menu pins with Ctrl+P."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.models.compare_session import METRIC_ROWS, CompareSession, budget_share
from app.models.design_selection import DesignSelection
from app.views import theme
from app.views.qt_bottleneck import PhaseBar
from app.views.qt_topology import QtTopology

THUMBNAIL_HEIGHT = 150


class QtCompare(QWidget):
    def __init__(self, compare: CompareSession, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.compare, self.selection = compare, selection
        self.pin_button = QPushButton("Pin the selected configuration")
        self.pin_button.setToolTip("add the selected design and configuration to the comparison (Ctrl+P)")
        self.pin_button.clicked.connect(self.pin_selected)
        self.clear_button = QPushButton("Unpin all")
        self.clear_button.clicked.connect(compare.clear)
        self.message = QLabel("pin two to four configurations to compare them")
        self.message.setObjectName("muted")
        bar = QHBoxLayout()
        bar.addWidget(self.pin_button)
        bar.addWidget(self.clear_button)
        bar.addWidget(self.message, 1)
        self.columns = QGridLayout()
        self.table = QTableWidget(len(METRIC_ROWS), 0)
        self.table.setVerticalHeaderLabels([label for label, _, _ in METRIC_ROWS])
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # as tall as its rows (_fit_table)
        self.table.horizontalScrollBar().rangeChanged.connect(self._fit_table)  # its scroll bar comes and goes
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(bar)
        layout.addWidget(self.table)  # the numbers first: every row in view, resources included (1366x768)
        layout.addLayout(self.columns)
        layout.addStretch(1)
        self._cells: list[QWidget] = []
        self.thumbnails: list[QtTopology] = []
        compare.changed.connect(self.refresh)
        self.refresh()

    def pin_selected(self) -> None:
        problem = self.compare.pin(self.selection)
        if problem:
            self.message.setText(problem)
            self.message.setToolTip(problem)

    def refresh(self) -> None:
        for widget in self._cells:
            self.columns.removeWidget(widget)
            widget.setParent(None)
            widget.deleteLater()
        self._cells, self.thumbnails = [], []
        pins = self.compare.pins
        self.clear_button.setEnabled(bool(pins))
        self.message.setText(f"{len(pins)} pinned" + ("; pin at least two to compare" if len(pins) < 2 else
                                                      "; best of each row in bold, differences from the first "
                                                      "pin in green (better) or red (worse)"))
        for column, pin in enumerate(pins):
            report = pin.report
            over = [f"{label} {share:.0%}" for label, _, _ in METRIC_ROWS
                    if (share := budget_share(report, label)) is not None and share > 1]
            title = QLabel(pin.label + (f"<br><span style='color:{theme.ERROR}'>does not fit: "
                                        f"{', '.join(over)} of the budget</span>" if over else ""))
            title.setWordWrap(True)
            unpin = QPushButton("Unpin")
            unpin.clicked.connect(lambda _=False, k=column: self.compare.unpin(k))
            thumbnail = QtTopology(pin)
            thumbnail.setInteractive(False)
            thumbnail.setFixedHeight(THUMBNAIL_HEIGHT)
            self.thumbnails.append(thumbnail)
            phases = PhaseBar()
            phases.set_parts({k: report[k] for k in ("prologue", "main", "epilogue")}, report["device"]["clock_mhz"])
            top = max(report["modules"].values()) or 1.0
            modules = QLabel("<br>".join(
                f"{'<b>' if name == report['bottleneck'] else ''}{name} {cycles:,.0f} ({cycles / top:.0%})"
                f"{'</b>' if name == report['bottleneck'] else ''}"
                for name, cycles in sorted(report["modules"].items(), key=lambda kv: -kv[1])))
            modules.setObjectName("muted")
            for row, widget in enumerate((title, unpin, thumbnail, phases, modules)):
                self.columns.addWidget(widget, row, column)
                self._cells.append(widget)
        self.table.setColumnCount(len(pins))
        self.table.setHorizontalHeaderLabels([p.design.id for p in pins])
        for row, (label, values, best) in enumerate(self.compare.table()):
            lower = METRIC_ROWS[row][2]
            for column, value in enumerate(values):
                item = QTableWidgetItem(f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}")
                item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                if column == best and len(values) > 1:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                if column > 0 and value != values[0]:
                    better = value < values[0] if lower else value > values[0]
                    item.setForeground(QColor(theme.OK if better else theme.ERROR))
                share = budget_share(pins[column].report, label)
                if share is not None and share > 1:  # above the device's budget: flagged
                    item.setText(f"{item.text()} ({share:.0%})")
                    item.setBackground(QColor(theme.ERROR).darker(250))
                    item.setForeground(QColor(theme.TEXT))
                    item.setToolTip(f"{label}: {share:.0%} of the budget "
                                    f"({pins[column].report['device']['budget'][label]:,.0f})")
                self.table.setItem(row, column, item)
        self._fit_table()

    def _fit_table(self) -> None:
        """Columns to their contents and the table as tall as its header and every row (again after a
        font change: presentation mode), so the page scrolls, never the table."""
        table = self.table
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        bar = table.horizontalScrollBar()
        height = (table.horizontalHeader().sizeHint().height() + table.verticalHeader().length()
                  + 2 * table.frameWidth() + (bar.sizeHint().height() if bar.maximum() > 0 else 0))
        if table.height() != height:
            table.setFixedHeight(height)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.FontChange, QEvent.StyleChange):
            self._fit_table()
