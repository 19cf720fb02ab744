"""QtDesignTable(model): the list of legal designs of the open kernel."""
from __future__ import annotations

from PySide6.QtWidgets import QHeaderView, QTableView

from app.models.design_table_model import DesignTableModel


class QtDesignTable(QTableView):
    def __init__(self, model: DesignTableModel, parent=None):
        super().__init__(parent)
        self.setModel(model)
        self.setSortingEnabled(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.verticalHeader().setVisible(False)
