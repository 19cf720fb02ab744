"""Issue 29: the window fits a projector. At 1366x768 and 1920x1080, with the default layout (no
remembered one), every view (each tab of the middle) is shown and no visible widget is clipped by
its parent or the window, nor smaller than its minimum size, nor any plot's title or axis label
inside its plot; the window's minimum size fits 1366x768."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from app.window_geometry import SIZES, misfits


def test_every_view_fits_at_both_sizes(make_window, qtbot, compiled, tiny_mm):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    window.show()
    qtbot.waitUntil(lambda: window.panels_built and not window.selection.busy, timeout=300_000)
    hint = window.minimumSizeHint()
    assert hint.width() <= SIZES[0][0] and hint.height() <= SIZES[0][1]
    for width, height in SIZES:
        window.resize(width, height)
        window.fit_docks()
        qtbot.waitUntil(lambda: window.size().toTuple() == (width, height), timeout=300_000)
        for k in range(window.views.count()):
            window.views.setCurrentIndex(k)
            page = window.views.currentWidget()
            qtbot.waitUntil(page.isVisible, timeout=300_000)
            QApplication.processEvents()  # its layout done
            assert misfits(window) == [], f"{window.views.tabText(k)} at {width}x{height}"


def test_a_clipped_widget_is_reported(qtbot):
    from PySide6.QtWidgets import QLabel, QWidget

    window = QWidget()
    qtbot.addWidget(window)
    window.resize(200, 100)
    QLabel("inside", window).setGeometry(10, 10, 100, 20)
    QLabel("outside", window).setGeometry(150, 10, 100, 20)  # past the right edge
    window.show()
    assert misfits(window) == ["QLabel: (150, 10, 100, 20) outside its parent QWidget (0, 0, 200, 100)",
                               "QLabel: (150, 10, 100, 20) outside the window (0, 0, 200, 100)"]


def test_a_clipped_plot_title_is_reported(qtbot):
    from app.views.plots import make_plot

    plot = make_plot("a title far wider than the plot that has to hold it", "x", "y")
    qtbot.addWidget(plot)
    plot.resize(600, 300)
    plot.show()
    qtbot.waitUntil(plot.isVisible)
    assert misfits(plot) == []
    plot.resize(150, 300)
    qtbot.waitUntil(lambda: plot.width() == 150)
    QApplication.processEvents()
    problems = misfits(plot)
    assert problems and all("clipped" in line for line in problems), problems
    assert any("the title 'a title far wider" in line for line in problems), problems
