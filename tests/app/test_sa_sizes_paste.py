"""Edit > Paste AutoSA sizes (issue 28): an AutoSA --sa-sizes string, prefilled from the clipboard,
selects its design in the tree and loads its parameters in every panel; a string the engine refuses
shows its one-line reason in the dialog, which stays open, and nothing in the window changes."""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from app.models.design_tree_model import DESIGN_ROLE
from app.views.qt_sa_sizes_dialog import QtSaSizesDialog

# AutoSA's MM string ({kernel[]->space_time[3];kernel[]->array_part[260,256,512];kernel[]->latency[20,16];
# kernel[]->simd[8]} at 1024^3) scaled to the 32^3 kernel: the [i,j] array (space_time 3: the 1-D
# choices i, j, k, then the pairs), tiles 8x8x16, latency hidden 4x4, 2 SIMD lanes along k
SCALED = "{kernel[]->space_time[3];kernel[]->array_part[8,8,16];kernel[]->latency[4,4];kernel[]->simd[2]}"


def _open_dialog(window, qtbot) -> QtSaSizesDialog:
    window.actions_by_name["sa_sizes"].trigger()
    qtbot.waitUntil(lambda: window.findChild(QtSaSizesDialog) is not None)
    dialog = window.findChild(QtSaSizesDialog)
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_a_pasted_autosa_string_selects_its_design_and_parameters(make_window, tiny_mm, compiled, settle, qtbot):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    assert window.actions_by_name["sa_sizes"].shortcut().toString() == "Ctrl+Shift+V"
    first = window.selection.design.id
    QGuiApplication.clipboard().setText(SCALED)
    dialog = _open_dialog(window, qtbot)
    assert dialog.line.text() == SCALED  # prefilled from the clipboard
    dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    settle(window.selection)
    design = window.selection.design
    assert design.space_loops == ("i", "j") and design.simd_loop == "k" and design.id != first
    assert window.selection.values == {"i_t1": 8, "j_t1": 8, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 2}
    assert window.tree.currentIndex().siblingAtColumn(0).data(DESIGN_ROLE) == design.id  # the tree's row follows
    assert window.selection.report is not None and not window.selection.error
    assert "--design " + design.id in window.statusBar().currentMessage()


def test_a_refused_string_shows_its_reason_in_place_and_changes_nothing(make_window, tiny_mm, compiled, settle,
                                                                       qtbot):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    design, values, report = window.selection.design, dict(window.selection.values), window.selection.report
    QGuiApplication.clipboard().setText("not an AutoSA string")
    dialog = _open_dialog(window, qtbot)
    assert dialog.line.text() == ""  # the clipboard held no --sa-sizes string
    dialog.line.setText(SCALED.replace("array_part[8,8,16]", "array_part[8,8]"))
    dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
    assert dialog.isVisible() and not dialog.message.isHidden()
    assert dialog.message.text().startswith("--sa-sizes array_part has 2 factors")
    assert "\n" not in dialog.message.text()
    assert window.selection.design is design and window.selection.values == values
    assert window.selection.report is report and window.last_message == ""
    dialog.reject()
