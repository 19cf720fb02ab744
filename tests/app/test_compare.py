"""The compare view flags resources above the device's budget (the cell marked with its share of
the budget, the column titled "does not fit") and keeps one column per design id: pinning a pinned
design again replaces its configuration, the same configuration twice is refused."""
from __future__ import annotations

from app.models.compare_session import CompareSession
from app.models.design_selection import DesignSelection
from app.views.qt_compare import QtCompare
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS

SMALL = {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 1, "k_t2": 2}
HUGE = {"i_t1": 64, "j_t1": 64, "k_t1": 8, "i_t2": 1, "j_t2": 1, "k_t2": 8}  # 4,096 PEs x 8 lanes


def test_over_budget_cells_are_flagged_and_a_design_has_one_column(qtbot, settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 64, "J": 64, "K": 64}))
    compare = CompareSession()
    view = QtCompare(compare, selection)
    qtbot.addWidget(view)
    for design, values in (("i-j__i-j.k", SMALL), ("i-k__i-k.j", None), ("i-j__i-j.k", HUGE)):
        selection.select(design, values)
        settle(selection)
        assert selection.report is not None, selection.error
        view.pin_selected()
    assert [p.design.id for p in compare.pins] == ["i-j__i-j.k", "i-k__i-k.j"]  # merged into its column
    assert compare.pins[0].values == HUGE and "its column now shows" in view.message.text()
    report = compare.pins[0].report
    budget = report["device"]["budget"]
    assert not report["fits"] and report["dsp"] > budget["DSP"]
    labels = [view.table.verticalHeaderItem(r).text() for r in range(view.table.rowCount())]
    flagged = {labels[r] for r in range(len(labels)) if "%" in view.table.item(r, 0).text()}
    over = {r for r in ("DSP", "BRAM18K", "URAM", "LUT", "FF") if report[r.lower()] > budget[r]}
    assert flagged == over and "DSP" in flagged
    dsp = view.table.item(labels.index("DSP"), 0)
    assert f"({report['dsp'] / budget['DSP']:.0%})" in dsp.text() and "of the budget" in dsp.toolTip()
    other = compare.pins[1].report
    assert other["fits"] and not any("%" in view.table.item(r, 1).text() for r in range(len(labels)))
    title = view._cells[0].text()
    assert "does not fit" in title and "DSP" in title and "does not fit" not in view._cells[5].text()
    view.pin_selected()  # the same configuration again: refused
    assert len(compare.pins) == 2 and "already" in view.message.text()
    selection.shutdown()


def test_the_table_comes_first_with_every_row_in_view(qtbot, settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 64, "J": 64, "K": 64}))
    compare = CompareSession()
    view = QtCompare(compare, selection)
    qtbot.addWidget(view)
    for design in ("i-j__i-j.k", "i-k__i-k.j"):
        selection.select(design, None)
        settle(selection)
        view.pin_selected()
    view.resize(700, 900)
    view.show()
    qtbot.waitUntil(view.isVisible)
    table = view.table
    last = table.rowCount() - 1  # off-chip traffic, under the resources
    assert table.visualRect(table.model().index(last, 0)).bottom() < table.viewport().height()
    assert table.verticalScrollBar().maximum() == 0
    assert table.geometry().bottom() < view.thumbnails[0].mapTo(view, view.thumbnails[0].rect().topLeft()).y()
