"""QtDesignTree(model): the designs as a sortable tree (kernel -> dataflow -> permutation -> design);
`designSelected(id)` fires when the user picks a design row; with follow(selection) the current
row follows the selection's design."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTreeView

from app.models.design_selection import DesignSelection
from app.models.design_tree_model import DESIGN_ROLE, DesignTreeModel

COLUMN_WIDTHS = (230, 70, 60, 70, 120, 110)


class QtDesignTree(QTreeView):
    designSelected = Signal(str)

    def __init__(self, model: DesignTreeModel, parent=None):
        super().__init__(parent)
        self.setModel(model)
        self.setSortingEnabled(True)
        self.sortByColumn(-1, Qt.AscendingOrder)  # the compiler's order until the user sorts
        self.setAlternatingRowColors(True)
        self.setUniformRowHeights(True)
        self.setSelectionMode(QTreeView.ExtendedSelection)
        header = self.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.Interactive)  # ResizeToContents re-measures every row per change
        for column, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(column, width)
        # expand the row that got children (expandAll on every insertion cost 40 ms per compile of CNN)
        model.rowsInserted.connect(lambda parent, *_: self.expand(parent) if parent.isValid() else None)
        self.selectionModel().currentRowChanged.connect(self._current_changed)
        model.spaceSet.connect(self.expandAll)
        self._selection: DesignSelection | None = None

    def follow(self, selection: DesignSelection) -> None:
        """Keep the current row on the selection's design, however it was chosen (a plot, a search's end)."""
        self._selection = selection
        selection.changed.connect(self._selection_changed)

    def _selection_changed(self) -> None:
        design = self._selection.design
        if design is not None and self.currentIndex().siblingAtColumn(0).data(DESIGN_ROLE) != design.id:
            self.select_design(design.id)

    def _current_changed(self, current, _previous) -> None:
        design = current.siblingAtColumn(0).data(DESIGN_ROLE)
        if design:
            self.designSelected.emit(design)

    def selected_designs(self) -> list[str]:
        rows = self.selectionModel().selectedRows(0)
        return [d for d in (r.data(DESIGN_ROLE) for r in rows) if d]

    def select_design(self, design_id: str) -> None:
        """Make the design's row current; rows selected with it stay selected if it is one of them (the
        designs a search ran on stay chosen when its best is shown)."""
        index = self.model().index_of(design_id)
        if index is not None:
            if design_id in self.selected_designs():
                self.selectionModel().setCurrentIndex(index, QItemSelectionModel.NoUpdate)
            else:
                self.setCurrentIndex(index)
            self.scrollTo(index)
