"""QtRunsDialog(runs, sizes): the stored search runs (newest first) -> a table of when each ran (local
time), its kernel and sizes, method, seed, budget, status and best; `chosen` is the run id to reopen."""
from __future__ import annotations

from datetime import datetime, timezone

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from engine.search.store import RunSummary

COLUMNS = ("run", "started", "kernel", "sizes", "method", "seed", "budget", "status", "best design", "GOP/s")


def local_time(created: str) -> str:
    """A stored run's ISO 8601 time in this computer's time zone (a time without an offset is UTC)."""
    try:
        moment = datetime.fromisoformat(created)
    except (TypeError, ValueError):
        return str(created)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def budget_text(budget: dict) -> str:
    return f"{budget['seconds']:g} s" if budget.get("seconds") else f"{budget.get('samples')} samples"


class QtRunsDialog(QDialog):
    def __init__(self, runs: list[RunSummary], sizes: dict[int, dict] | None = None, parent=None):
        """`sizes`: run id -> the kernel's sizes (engine/search/run_sizes.py); a run without them shows "-"."""
        super().__init__(parent)
        self.setWindowTitle("Stored search runs")
        self.resize(980, 360)
        self.runs = runs
        self.chosen: int | None = None
        self.table = QTableWidget(len(runs), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectRows)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        for row, r in enumerate(runs):
            shape = " ".join(f"{k}={v}" for k, v in (sizes or {}).get(r.id, {}).items()) or "-"
            cells = (r.id, local_time(r.created), r.kernel, shape, r.method, r.seed, budget_text(r.budget), r.status,
                     r.best_design or "-",
                     f"{r.best_throughput:,.1f}" if r.best_throughput else "-")
            for col, value in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(str(value)))
        if runs:
            self.table.selectRow(0)
        buttons = QDialogButtonBox(QDialogButtonBox.Open | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.table.doubleClicked.connect(lambda _: self.accept())
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)

    def accept(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.chosen = self.runs[rows[0].row()].id
        super().accept()
