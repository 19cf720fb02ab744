"""QtRunsDialog(runs): the stored search runs (newest first); `chosen` is the run id to reopen."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from engine.search.store import RunSummary

COLUMNS = ("run", "created", "kernel", "method", "budget", "status", "best design", "GOP/s")


class QtRunsDialog(QDialog):
    def __init__(self, runs: list[RunSummary], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Stored search runs")
        self.resize(820, 360)
        self.runs = runs
        self.chosen: int | None = None
        self.table = QTableWidget(len(runs), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectRows)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        for row, r in enumerate(runs):
            budget = f"{r.budget.get('seconds')} s" if r.budget.get("seconds") else f"{r.budget.get('samples')} samples"
            cells = (r.id, r.created, r.kernel, r.method, budget, r.status, r.best_design or "-",
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
