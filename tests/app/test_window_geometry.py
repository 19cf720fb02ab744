"""Issue 29: the window fits a projector. At 1366x768 and 1920x1080, with the default layout (no
remembered one), every view (each tab of the middle) is shown and no visible widget is clipped by
its parent or the window, nor smaller than its minimum size, nor any plot's title or axis label
inside its plot, nor any text cut inside its label, button, check box or group box; the export
dialog likewise; the window's minimum size fits 1366x768. Presentation mode (F5: every font
PRESENTATION_SCALE times larger) fits 1366x768 too, every view and the export dialog."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from app.views import theme
from app.window_geometry import SIZES, misfits


def test_every_view_fits_at_both_sizes(make_window, qtbot, compiled, tiny_mm):
    theme.apply(QApplication.instance(), "dark")  # as the application starts: its stylesheet pads buttons and boxes
    window = make_window(tiny_mm, background=False)
    compiled(window)
    window.show()
    qtbot.waitUntil(lambda: window.panels_built and not window.selection.busy, timeout=300_000)
    hint = window.minimumSizeHint()
    assert hint.width() <= SIZES[0][0] and hint.height() <= SIZES[0][1]
    problems = []
    for width, height in SIZES:
        window.resize(width, height)
        window.fit_docks()
        qtbot.waitUntil(lambda: window.size().toTuple() == (width, height), timeout=300_000)
        for k in range(window.views.count()):
            window.views.setCurrentIndex(k)
            page = window.views.currentWidget()
            qtbot.waitUntil(page.isVisible, timeout=300_000)
            QApplication.processEvents()  # its layout done
            problems += [f"{window.views.tabText(k)} at {width}x{height}: {line}" for line in misfits(window)]
    problems += _export_dialog_misfits(window, qtbot, "")
    window.resize(*SIZES[0])
    window.fit_docks()
    window.actions_by_name["presentation"].trigger()  # F5
    try:
        qtbot.waitUntil(lambda: window.size().toTuple() == SIZES[0], timeout=300_000)
        for k in range(window.views.count()):
            window.views.setCurrentIndex(k)
            qtbot.waitUntil(window.views.currentWidget().isVisible, timeout=300_000)
            QApplication.processEvents()
            problems += [f"{window.views.tabText(k)} presenting at 1366x768: {line}" for line in misfits(window)]
        problems += _export_dialog_misfits(window, qtbot, " presenting")
    finally:
        window.actions_by_name["presentation"].trigger()  # the fonts back for the tests after this one
    assert problems == [], "\n".join(problems)


def _export_dialog_misfits(window, qtbot, mode: str) -> list[str]:
    dialog = window.show_export()  # the export dialog (its buttons were squeezed to a fixed 560 px width)
    qtbot.waitUntil(dialog.isVisible, timeout=300_000)
    QApplication.processEvents()
    problems = [f"export dialog{mode}: {line}" for line in misfits(dialog)]
    dialog.close()
    return problems


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


def test_text_cut_inside_its_widget_is_reported(qtbot):
    from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QPushButton, QWidget

    from app.views.elided_label import ElidedLabel

    window = QWidget()
    qtbot.addWidget(window)
    window.resize(400, 300)
    cut = {QLabel("a plain label longer than its width", window): (0, 0, 60, 20),
           QLabel("<b>rich</b> text longer than its width", window): (0, 20, 60, 20),
           QPushButton("a button", window): (0, 70, 40, 24),
           QCheckBox("a check box", window): (0, 100, 40, 24),
           QGroupBox("a group box title", window): (0, 130, 40, 60)}
    wrapped = QLabel("a word-wrapped label that needs three lines at this width", window)
    wrapped.setWordWrap(True)
    cut[wrapped] = (0, 40, 100, 20)  # one line's height
    fits = {QLabel("fits", window): (200, 0, 100, 20), QPushButton("fits", window): (200, 80, 100, 24),
            ElidedLabel("elided on purpose, never reported", window): (200, 120, 40, 20)}
    fitting_wrap = QLabel("two lines of text", window)
    fitting_wrap.setWordWrap(True)
    fits[fitting_wrap] = (200, 30, 80, 40)
    for widget, rect in {**cut, **fits}.items():
        widget.setGeometry(*rect)
    window.show()
    qtbot.waitUntil(window.isVisible)
    problems = misfits(window)
    assert len(problems) == len(cut), problems
    for widget in cut:
        text = widget.title() if isinstance(widget, QGroupBox) else widget.text()
        assert any(line.startswith(type(widget).__name__) and repr(text)[:20] in line for line in problems), (text, problems)
    assert any("needs" in line and "wrapped" in line for line in problems), problems
