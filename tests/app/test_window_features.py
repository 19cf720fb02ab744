"""The window's views beyond the search: the compare view, clicking a plotted configuration loads it
everywhere, the models cache (a second open of the same kernel builds nothing; the cache itself is tested in tests/engine/models/test_cache.py), a 1366x768 and a
4K (3840x2160) window where no control is clipped, a 1366x768 window that four pins do not outgrow and whose editor has
the kernel dock's width (the sizes table under it, collapsible), the shortcuts, and a kernel that fails to compile keeping the previous
designs greyed, with the status bar's compile state following it broken and restored."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QProgressBar,
    QWidget,
)

from app.models.design_points import EMPTY, PointTable, Roofs
from app.views.plots import save_plot


@pytest.fixture
def window(make_window, small_mm, compiled, settle, qtbot):
    win = make_window(small_mm, background=False)
    compiled(win)
    settle(win.selection)
    return win


def test_the_compare_view_shows_pinned_configurations_side_by_side(window, settle):
    ids = window.tree_model.design_ids()
    for design in (ids[0], ids[9]):
        window.focus.load(design, {})
        settle(window.selection)
        window.compare_view.pin_selected()
    assert [p.design.id for p in window.compare.pins] == [ids[0], ids[9]]
    table = window.compare_view.table
    assert table.columnCount() == 2
    rows = window.compare.table()
    throughput = rows[0]
    assert throughput[0].startswith("throughput")
    best = throughput[2]
    assert table.item(0, best).font().bold()  # the best of the row is marked
    other = 1 - best
    if throughput[1][0] != throughput[1][1]:
        assert table.item(0, 1).foreground().color().name() in ("#6bd68a", "#ff6b6b")  # a difference, coloured
    thumbnails = window.compare_view.thumbnails
    assert len(thumbnails) == 2 and all(t.scene_items_by_kind()["pe"] > 0 for t in thumbnails)
    window.compare_view.pin_selected()  # the same configuration twice: refused, said why
    assert len(window.compare.pins) == 2 and "already" in window.compare_view.message.text()
    window.compare.unpin(other)
    assert len(window.compare.pins) == 1 and window.compare_view.table.columnCount() == 1


def test_clicking_a_plotted_configuration_loads_it_everywhere(window, settle):
    ids = window.tree_model.design_ids()
    design = window.selection.space.design(ids[4])
    params = {p.name: p.lower for p in design.params if p.tunable}
    params[f"{design.band_loops[0]}_t1"] = 4
    table = PointTable((ids[4],), (params,), {"latency_cycles": np.array([1e6]), "DSP": np.array([10.0]),
                                               "BRAM18K": np.array([2.0]), "LUT": np.array([1e3]),
                                               "offchip_mib": np.array([1.0]), "throughput_gops": np.array([5.0]),
                                               "intensity": np.array([3.0])}, Roofs(1000.0, 76.8))
    window.points.table = table
    window.points.changed.emit()
    plots = window.search_panel.results
    assert len(plots.dots.data) == 1
    plots.x_axis.setCurrentText("BRAM18K")  # the axes come from the picker
    assert plots.scatter.getAxis("bottom").labelText == "BRAM18K"
    spot = plots.dots.points()[0]
    plots._clicked(plots.dots, [spot])
    settle(window.selection)
    assert window.selection.design.id == ids[4] and window.selection.values == params
    assert window.tree.selectionModel().selectedRows()[0].data() .startswith(ids[4])
    assert window.detail.editors[f"{design.band_loops[0]}_t1"].value() == 4
    window.points.table = EMPTY


def test_plots_save_as_png_svg_and_csv(window, tmp_path):
    panel = window.search_panel
    panel.overall.setData([0.0, 1.0, 2.0], [10.0, 20.0, 30.0])
    for suffix in ("png", "svg", "csv"):
        path = save_plot(panel.throughput_plot, tmp_path / f"best.{suffix}")
        assert path.stat().st_size > 0
    rows = (tmp_path / "best.csv").read_text().splitlines()
    assert "best overall" in rows[0] and rows[1].split(",")[:2] == ["0.0", "10.0"]


def test_a_second_open_of_the_same_kernel_builds_no_model(make_window, matrix_vector, compiled, qtbot, tmp_path,
                                                          monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_CACHE", str(tmp_path / "cache"))  # an empty cache of its own
    first = make_window(matrix_vector, background=True)
    compiled(first)
    qtbot.waitUntil(lambda: not first.models.busy, timeout=180000)
    ids = first.tree_model.design_ids()
    # built once each, in the pool, except the first design's if the search process's Prepare built it first
    assert set(first.models.built) | {ids[0]} == set(ids) and len(set(first.models.built)) == len(first.models.built)
    assert first.selection.built == []  # the selection waited for the pool instead of building its own
    first.close()
    second = make_window(matrix_vector, background=True)
    compiled(second)
    assert not second.models.busy and second.models.submitted == [] and second.models.built == []
    qtbot.waitUntil(lambda: not second.selection.busy, timeout=30000)
    assert second.selection.report is not None and second.selection.built == []  # from the cache


CONTROLS = (QAbstractButton, QComboBox, QAbstractSpinBox, QProgressBar)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080), (3840, 2160)], ids=["1366x768", "1920x1080", "4K"])
def test_no_control_is_clipped(window, qtbot, size):
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.fit_docks()
    qtbot.wait(200)
    clipped = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window:
            continue
        if isinstance(widget, CONTROLS) or (isinstance(widget, QLabel) and not widget.wordWrap() and widget.text()
                                            and widget.sizePolicy().horizontalPolicy().name != "Ignored"):
            hint = widget.minimumSizeHint() if isinstance(widget, QLabel) else widget.sizeHint()
            if hint.width() > widget.width() + 1 or hint.height() > widget.height() + 1:
                clipped.append(f"{type(widget).__name__} {widget.objectName() or getattr(widget, 'text', lambda: '')()!r}"
                               f" {widget.width()}x{widget.height()} < {hint.width()}x{hint.height()}")
    assert not clipped, "\n".join(clipped)
    assert (window.width(), window.height()) == size
    if os.environ.get("QT_SCALE_FACTOR"):  # run by the 200% test below: the scale factor took effect
        assert window.devicePixelRatio() == float(os.environ["QT_SCALE_FACTOR"])
    if size[0] >= 3840:  # the extra room goes to the array and the plots, not to stretched docks
        view = window.topology_panel.view
        assert view.width() >= 0.35 * size[0] and view.height() >= 0.3 * size[1], (view.width(), view.height())
        assert window.search_panel.width() >= 0.35 * size[0]


def test_at_1366x768_four_pins_fit_and_the_editor_has_the_kernel_dock_s_width(window, qtbot, settle):
    ids = window.tree_model.design_ids()
    for design in ids[:4]:
        window.focus.load(design, {})
        settle(window.selection)
        window.compare_view.pin_selected()
    assert len(window.compare.pins) == 4
    window.show_view(window.compare_view)  # its columns scroll, they do not grow the window
    assert window.views.currentIndex() == 2
    hint = window.minimumSizeHint()
    assert hint.width() <= 1366 and hint.height() <= 700, hint  # 768 less a title bar and a taskbar
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    window.fit_docks()
    table, page = window.compare_view.table, window.views.currentWidget()  # the Compare tab's scroll area
    qtbot.waitUntil(table.isVisible)
    last = table.visualRect(table.model().index(table.rowCount() - 1, 0))
    bottom = table.viewport().mapTo(page.viewport(), last.bottomLeft()).y()
    assert 0 < bottom <= page.viewport().height(), (bottom, page.viewport().height())  # every number in view
    panel = window.kernel_panel
    qtbot.waitUntil(lambda: panel.editor.width() >= 0.9 * panel.width())  # not beside the sizes table any more
    assert panel.editor.width() >= 35 * panel.editor.fontMetrics().horizontalAdvance("x")
    height = panel.editor.height()
    panel.sizes_toggle.click()  # the sizes collapse: the editor gets their height too
    assert not panel.sizes.isVisible() and not panel.sizes_toggle.isChecked()
    qtbot.waitUntil(lambda: panel.editor.height() > height)
    panel.sizes_toggle.click()
    assert panel.sizes.isVisible()


def test_shortcuts_and_menus(window):
    keys = dict((what, k) for k, what in window.shortcuts())
    assert keys["Start"] == "Ctrl+R" and keys["Stop"] == "Esc" and keys["Quit"] == "Ctrl+Q"
    assert any(k == "Ctrl+E" for k in keys.values()) and keys["Undo parameter edit"] == "Ctrl+Z"
    assert keys["Redo parameter edit"] == "Ctrl+Shift+Z"
    menus = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert {"File", "Edit", "Search", "View", "Help"} <= set(menus)


def test_a_kernel_that_does_not_compile_keeps_the_previous_designs_greyed_and_the_status_follows(window, compiled):
    ids = window.tree_model.design_ids()
    good = window.session.text
    status = window.compile_status
    assert status.text() == f"mm: {len(ids)} legal systolic arrays"
    window.kernel_panel.editor.setPlainText(good.replace("#pragma endscop", "#pragma endscop\n}}}"))
    window.kernel_panel.compile()
    assert status.text() == "compiling mm..."  # from the moment it is asked for, not when it ends
    compiled(window)
    assert window.session.space is None
    assert window.tree_model.design_ids() == ids and not window.tree.isEnabled()
    assert status.text().startswith("does not compile: ") and "previous" in status.text()
    assert not window.search_panel.start_button.isEnabled()
    window.kernel_panel.editor.setPlainText(good)  # restored: the same source as the designs shown
    window.kernel_panel.compile()
    compiled(window)
    assert status.text() == f"mm: {len(ids)} legal systolic arrays"
    assert window.tree.isEnabled() and window.search_panel.start_button.isEnabled()


@pytest.mark.slow
def test_4k_at_200_percent_scaling_clips_nothing():
    """A 4K screen at 200%: the 1920x1080 layout in device-independent pixels, drawn with Qt's scale
    factor 2 (set before the application starts, hence a new process)."""
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{__file__}::test_no_control_is_clipped[1920x1080]"],
                         capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[2], timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
