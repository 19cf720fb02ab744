"""QtRunsDialog(runs, sizes): the stored search runs (newest first) -> a table of when each ran (local
time), its kernel and sizes, method, seed, budget, status and best; `chosen` is the run id to reopen.
Given the run database, "Delete" removes the selected runs (after asking) and "Compare" shows the
selected runs side by side: each design's best GOP/s per run, the best of each row in bold."""
from __future__ import annotations

from datetime import datetime, timezone

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.views.dialog_fit import fit_height
from engine.errors import EngineError
from engine.search.store import RunStore, RunSummary

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
    def __init__(self, runs: list[RunSummary], sizes: dict[int, dict] | None = None, parent=None, *,
                 database=None, confirm=None):
        """`sizes`: run id -> the kernel's sizes (engine/search/run_sizes.py); a run without them shows "-".
        `database`: the runs' database, for Delete and Compare; `confirm(text) -> bool` asks before a
        delete (a question box by default)."""
        super().__init__(parent)
        self.setWindowTitle("Stored search runs")
        self.resize(980, 480)
        self.runs, self.sizes, self.database = list(runs), sizes or {}, database
        self.confirm = confirm or (lambda text: QMessageBox.question(self, "Delete runs", text)
                                   == QMessageBox.StandardButton.Yes)
        self.chosen: int | None = None
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectRows)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self._fill()
        buttons = QDialogButtonBox(QDialogButtonBox.Open | QDialogButtonBox.Cancel)
        self.delete_button = buttons.addButton("Delete", QDialogButtonBox.ActionRole)
        self.compare_button = buttons.addButton("Compare", QDialogButtonBox.ActionRole)
        self.compare_button.setToolTip("select two or more runs: each design's best GOP/s side by side")
        for button in (self.delete_button, self.compare_button):
            button.setEnabled(database is not None)
        self.delete_button.clicked.connect(self.delete_selected)
        self.compare_button.clicked.connect(self.compare_selected)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.table.doubleClicked.connect(lambda _: self.accept())
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.comparison = QTableWidget(0, 0)
        self.comparison.setEditTriggers(QTableWidget.NoEditTriggers)
        self.comparison.setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.message)
        layout.addWidget(self.comparison, 2)
        layout.addWidget(buttons)
        fit_height(self)  # a message wrapped onto more lines makes the dialog taller, never cuts it

    def _fill(self) -> None:
        self.table.setRowCount(len(self.runs))
        for row, r in enumerate(self.runs):
            shape = " ".join(f"{k}={v}" for k, v in self.sizes.get(r.id, {}).items()) or "-"
            cells = (r.id, local_time(r.created), r.kernel, shape, r.method, r.seed, budget_text(r.budget), r.status,
                     r.best_design or "-",
                     f"{r.best_throughput:,.1f}" if r.best_throughput else "-")
            for col, value in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(str(value)))
        if self.runs:
            self.table.selectRow(0)

    def selected_ids(self) -> list[int]:
        return [self.runs[i.row()].id for i in sorted(self.table.selectionModel().selectedRows(), key=lambda i: i.row())]

    def delete_selected(self) -> bool:
        ids = self.selected_ids()
        if not ids or self.database is None:
            self.message.setText("select the runs to delete")
            return False
        if not self.confirm(f"Delete run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))} from "
                            f"{self.database}? This cannot be undone."):
            return False
        try:
            with RunStore(self.database) as store:
                for run_id in ids:
                    store.delete(run_id)
        except EngineError as exc:
            self.message.setText(str(exc))
            return False
        self.runs = [r for r in self.runs if r.id not in ids]
        self._fill()
        self.message.setText(f"deleted run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}")
        return True

    def compare_selected(self) -> bool:
        """Each design's best GOP/s in each selected run (two or more), the best of a row in bold."""
        ids = self.selected_ids()
        if len(ids) < 2 or self.database is None:
            self.message.setText("select two or more runs to compare (Ctrl+click)")
            return False
        try:
            with RunStore(self.database) as store:
                loaded = [store.load(run_id) for run_id in ids]
        except EngineError as exc:
            self.message.setText(str(exc))
            return False
        best = [{d.design: d.best.throughput_gops for d in run.result.designs if d.best is not None}
                for run in loaded]
        designs = sorted({d for found in best for d in found}, key=lambda d: -max(f.get(d, 0.0) for f in best))
        table = self.comparison
        table.clear()
        table.setRowCount(len(designs))
        table.setColumnCount(len(loaded))
        table.setHorizontalHeaderLabels([f"run {r.id}: {r.method}, seed {r.seed}, {budget_text(r.budget)}"
                                         for r in loaded])
        table.setVerticalHeaderLabels(designs)
        for row, design in enumerate(designs):
            top = max(found.get(design, 0.0) for found in best)
            for col, found in enumerate(best):
                value = found.get(design)
                item = QTableWidgetItem(f"{value:,.1f}" if value is not None else "-")
                if value is not None and value == top:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                table.setItem(row, col, item)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        table.setVisible(True)
        self.message.setText(f"best GOP/s per design in runs {', '.join(map(str, ids))} (bold: the best of a row)")
        return True

    def accept(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.chosen = self.runs[rows[0].row()].id
        super().accept()
