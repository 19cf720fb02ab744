"""DesignSpace -> a Qt table model: one row per design (id, dataflow, permutation, shape, SIMD)."""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from engine.compiler.design import Design

COLUMNS = ("id", "dataflow", "permutation", "array shape", "SIMD loop")


def _cells(design: Design) -> tuple[str, ...]:
    shape = " x ".join(design.array_shape)
    return design.id, str(design.dataflow), str(design.permutation), shape, design.simd_loop or "-"


class DesignTableModel(QAbstractTableModel):
    def __init__(self, designs: tuple[Design, ...] = (), parent=None):
        super().__init__(parent)
        self._rows = [_cells(d) for d in designs]

    def set_designs(self, designs: tuple[Design, ...]) -> None:
        self.beginResetModel()
        self._rows = [_cells(d) for d in designs]
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and index.isValid():
            return self._rows[index.row()][index.column()]
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return COLUMNS[section]
        return None
