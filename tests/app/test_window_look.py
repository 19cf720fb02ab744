"""The theme switches without a restart (palette, plots, topology scene) and presentation mode (F5)
makes every font larger and F5 again restores it (app/views/window_look.py)."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app.views import theme
from app.views.window_look import PRESENTATION_SCALE


@pytest.fixture
def window(make_window, small_mm, compiled, settle):
    app = QApplication.instance()
    font, palette = app.font(), app.palette()
    win = make_window(small_mm, background=False)
    compiled(win)
    settle(win.selection)
    yield win
    theme.apply(app, "dark", scale=1.0)  # later tests see the application as it was
    app.setFont(font)
    app.setPalette(palette)


def test_the_theme_changes_at_once_everywhere(window, qtbot):
    panel = window.search_panel  # plots built
    window.menus.set_theme("light")
    app = QApplication.instance()
    assert app.palette().color(QPalette.Window).name() == theme.LIGHT["BACKGROUND"]
    assert window.topology.backgroundBrush().color().name() == theme.LIGHT["BACKGROUND"]
    assert window.topology.scene_items_by_kind()["pe"] > 0  # drawn again, in the new colours
    plot = panel.results.scatter
    assert plot.backgroundBrush().color().name() == theme.LIGHT["BACKGROUND"]
    assert window.settings.value("theme") == "light"
    checked = [a.text() for a in window.findChildren(type(window.actions_by_name["quit"]))
               if a.isCheckable() and a.isChecked() and a.text() in ("system", "dark", "light")]
    assert checked == ["light"]
    window.menus.set_theme("dark")
    assert window.topology.backgroundBrush().color().name() == theme.DARK["BACKGROUND"]
    assert plot.backgroundBrush().color().name() == theme.DARK["BACKGROUND"]


def test_presentation_mode_is_one_key_for_larger_fonts(window):
    app = QApplication.instance()
    action = window.actions_by_name["presentation"]
    assert action.shortcut().toString() == "F5"
    normal, editor = app.font().pointSizeF(), window.kernel_panel.editor.font().pointSizeF()
    action.trigger()
    assert app.font().pointSizeF() == pytest.approx(normal * PRESENTATION_SCALE)
    assert window.kernel_panel.editor.font().pointSizeF() == pytest.approx(editor * PRESENTATION_SCALE)
    assert window.detail.traffic.font().pointSizeF() == pytest.approx(normal * PRESENTATION_SCALE)
    assert window.detail.title.font().pixelSize() == round(15 * PRESENTATION_SCALE)  # the headline style
    action.trigger()
    assert app.font().pointSizeF() == pytest.approx(normal)
    assert window.kernel_panel.editor.font().pointSizeF() == pytest.approx(editor)
    assert ("F5", "Presentation mode (larger fonts)") in window.shortcuts()
