"""DesignSpace + search results -> a Qt item model: kernel -> dataflow -> permutation class -> design.
Columns: name, best-known throughput (GOP/s), DSP, BRAM18K of that best, status, and the proof of
that best (engine/search/certify.py: "optimal", "within x%" proven or not), which sorts by the
proven bound (the most throughput any configuration of the design can reach). Group rows show
the best of their designs. Numbers sort numerically (SORT_ROLE); DESIGN_ROLE holds a design's id."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel

from engine.search.progress import Candidate

if TYPE_CHECKING:  # islpy and sympy: not imported before the window paints
    from engine.compiler.design_space import DesignSpace

COLUMNS = ("design", "GOP/s", "DSP", "BRAM18K", "status", "proof")
DESIGN_ROLE = Qt.UserRole + 1
SORT_ROLE = Qt.UserRole + 2


def _blanks() -> list[QStandardItem]:
    return [_item(sort=-1.0) for _ in COLUMNS[1:4]] + [_item(), _item(sort=-1.0)]


def _item(text: str = "", sort=None) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    item.setData(text if sort is None else sort, SORT_ROLE)
    return item


class DesignTreeModel(QStandardItemModel):
    spaceSet = Signal()  # set_space filled the tree with another kernel's designs

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setSortRole(SORT_ROLE)
        self._rows: dict[str, list[QStandardItem]] = {}
        self.best: dict[str, Candidate] = {}
        self.status: dict[str, str] = {}

    def set_space(self, space: DesignSpace | None) -> None:
        self.removeRows(0, self.rowCount())
        self._rows, self.best, self.status = {}, {}, {}
        if space is None:
            return
        root = [_item(f"{space.kernel.name}  ({len(space.designs)} designs)")] + _blanks()
        self.appendRow(root)
        groups: dict[tuple, list[QStandardItem]] = {}
        for design in space.designs:
            flow = str(design.dataflow)
            if (flow,) not in groups:
                groups[(flow,)] = [_item(f"dataflow {flow}")] + _blanks()
                root[0].appendRow(groups[(flow,)])
            perm = (flow, str(design.permutation))
            if perm not in groups:
                groups[perm] = [_item(f"permutation {design.permutation}")] + _blanks()
                groups[(flow,)][0].appendRow(groups[perm])
            loops = design.space_loops
            readable = (f"{len(loops)}-D array over {', '.join(loops)}"
                        + (f", SIMD on {design.simd_loop}" if design.simd_loop else ""))
            row = [_item(f"{design.id}   {readable}")] + _blanks()
            row[0].setData(design.id, DESIGN_ROLE)
            row[0].setToolTip(f"{design.name}\narray {' x '.join(design.array_shape)}, "
                              f"SIMD loop {design.simd_loop or '-'}")
            groups[perm][0].appendRow(row)
            self._rows[design.id] = row
            self.set_status(design.id, "not searched")
        self.spaceSet.emit()

    def design_ids(self) -> list[str]:
        return list(self._rows)

    def index_of(self, design_id: str):
        return self._rows[design_id][0].index() if design_id in self._rows else None

    def set_status(self, design_id: str, status: str) -> None:
        if design_id in self._rows:
            self.status[design_id] = status
            item = self._rows[design_id][4]
            item.setText(status)
            item.setData(status, SORT_ROLE)

    def set_best(self, design_id: str, best: Candidate | None) -> None:
        """Keep the better of the known best and `best`; group rows follow."""
        if design_id not in self._rows or best is None:
            return
        known = self.best.get(design_id)
        if known is not None and known.throughput_gops >= best.throughput_gops:
            return
        self.best[design_id] = best
        self._fill(self._rows[design_id], best)
        parent = self._rows[design_id][0].parent()
        while parent is not None:
            row = [parent] + [self.itemFromIndex(parent.index().siblingAtColumn(c)) for c in range(1, len(COLUMNS))]
            current = row[1].data(SORT_ROLE)
            if not isinstance(current, float) or current < best.throughput_gops:
                self._fill(row, best)
            parent = parent.parent()

    @staticmethod
    def _fill(row: list[QStandardItem], best: Candidate) -> None:
        for item, value, text in ((row[1], best.throughput_gops, f"{best.throughput_gops:,.1f}"),
                                  (row[2], best.dsp, f"{best.dsp:,.0f}"),
                                  (row[3], best.bram18k, f"{best.bram18k:,.0f}")):
            item.setText(text)
            item.setData(float(value), SORT_ROLE)
            item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)

    def set_certificate(self, design_id: str, certificate: dict) -> None:
        """Show a certificate (Certificate.to_json()) in the design's proof column; it sorts by the
        proven bound in GOP/s (from the row's best: throughput times latency is the design's constant)."""
        if design_id not in self._rows:
            return
        item = self._rows[design_id][5]
        item.setText(proof_text(certificate))
        item.setToolTip(certificate.get("status", ""))
        bound, best = certificate.get("lower_bound_cycles"), self.best.get(design_id)
        constant = certificate.get("throughput_constant") or (best.throughput_gops * best.latency_cycles
                                                              if best is not None else None)
        sort = -1.0
        if not certificate.get("fits", True):
            sort = 0.0  # proven: nothing fits
        elif bound and constant:
            sort = constant / bound
        item.setData(float(sort), SORT_ROLE)
        item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)

    def best_design(self) -> str | None:
        if not self.best:
            return None
        return max(self.best, key=lambda d: self.best[d].throughput_gops)


def proof_text(c: dict) -> str:
    """A certificate in a few words: "optimal", "<= 0.8% off", "<= 7.2% off?" (not closed), "none fits"."""
    if not c.get("fits", True):
        return "none fits (proven)"
    gap = c.get("gap")
    if gap is None:
        return "no bound yet"
    if gap <= 1e-12:
        return "optimal"
    return f"<= {100 * gap:.1f}% off" + ("" if c.get("proven") else " (open)")
