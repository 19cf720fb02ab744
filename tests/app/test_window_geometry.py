"""Issue 29: the window fits a projector. At 1366x768 and 1920x1080, with the default layout (no
remembered one), every view (each tab of the middle) is shown and no visible widget is clipped by
its parent or the window, nor smaller than its minimum size, nor any plot's title or axis label
inside its plot, nor any text cut inside its label, button, check box or group box, nor any content
cut by a scroll area that does not scroll that way; the topology's side column uses the scroll bar's
room when none shows; the window's minimum size fits 1366x768. Presentation mode (F5: every font
PRESENTATION_SCALE times larger) fits 1366x768 too, every view and every dialog: export (opened
before F5 and after, with a refusal shown), stored runs (two runs compared), paste AutoSA sizes
(with its error) and the user guide, each at its size and at its minimum size, which fits 1366x768.
The search panel's plot tabs (best per design, over time, seen, kept and roofline, samples/s) are
checked at each size and mode too."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from app.views import theme
from app.window_geometry import SIZES, misfits


def test_every_view_fits_at_both_sizes(make_window, qtbot, compiled, tiny_mm, run_database, tmp_path):
    theme.apply(QApplication.instance(), "dark")  # as the application starts: its stylesheet pads buttons and boxes
    _store_two_runs(run_database)  # for the runs dialog
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
        problems += _views_misfits(window, qtbot, f"at {width}x{height}")
    problems += _dialogs_misfits(window, qtbot, "", tmp_path)
    window.resize(*SIZES[0])
    window.fit_docks()
    export = _shown(window.show_export(), qtbot)  # open while F5 is pressed: its fonts grow in place
    window.actions_by_name["presentation"].trigger()  # F5
    try:
        qtbot.waitUntil(lambda: window.size().toTuple() == SIZES[0], timeout=300_000)
        QApplication.processEvents()
        problems += [f"export dialog open across F5: {line}" for line in _dialog_problems(export)]
        export.close()
        problems += _views_misfits(window, qtbot, "presenting at 1366x768")
        problems += _dialogs_misfits(window, qtbot, " presenting", tmp_path)
    finally:
        window.actions_by_name["presentation"].trigger()  # the fonts back for the tests after this one
    assert problems == [], "\n".join(problems)


def _views_misfits(window, qtbot, where: str) -> list[str]:
    """Every view's misfits, and the topology's side column at the width of its viewport (scroll bar
    shown or not: no strip left empty beside the column when nothing scrolls)."""
    problems = []
    for k in range(window.views.count()):
        window.views.setCurrentIndex(k)
        qtbot.waitUntil(window.views.currentWidget().isVisible, timeout=300_000)
        QApplication.processEvents()  # its layout done
        problems += [f"{window.views.tabText(k)} {where}: {line}" for line in misfits(window)]
        if k == 0:  # the search panel's other plots (kept and roofline, samples/s, best over time) too
            problems += _search_tabs_misfits(window, qtbot, where)
        if window.views.tabText(k) == "Topology":
            side = window.topology_panel.side_scroll
            bar, column, room = side.verticalScrollBar(), side.widget(), side.viewport().width()
            if column.width() != room:
                problems.append(f"Topology {where}: the side column is {column.width()} px wide in {room} px")
            if bar.isVisible() != (column.height() > side.viewport().height()):
                problems.append(f"Topology {where}: the side column's scroll bar is "
                                f"{'shown' if bar.isVisible() else 'hidden'} for {column.height()} px in "
                                f"{side.viewport().height()} px")
    return problems


def _search_tabs_misfits(window, qtbot, where: str) -> list[str]:
    problems = []
    for tabs in (window.search_panel.result_tabs, window.search_panel.best_tabs):
        shown = tabs.currentIndex()
        for k in range(tabs.count()):
            tabs.setCurrentIndex(k)
            qtbot.waitUntil(tabs.currentWidget().isVisible, timeout=300_000)
            QApplication.processEvents()
            problems += [f"search panel's {tabs.tabText(k)!r} {where}: {line}" for line in misfits(window)]
        tabs.setCurrentIndex(shown)
    return problems


def _shown(dialog, qtbot):
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(dialog.isVisible, timeout=300_000)
    QApplication.processEvents()
    return dialog


def _dialog_problems(dialog) -> list[str]:
    """A shown dialog's misfits at its size, then at its minimum size (the narrowest: the most wrapped
    lines), which must fit the smaller screen."""
    QApplication.processEvents()  # a message just shown: its layout done
    problems = misfits(dialog)
    smallest = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    if smallest.width() > SIZES[0][0] or smallest.height() > SIZES[0][1]:
        problems.append(f"its minimum size {smallest.width()}x{smallest.height()} does not fit {SIZES[0]}")
    dialog.resize(smallest)
    QApplication.processEvents()
    problems += [f"at its minimum size: {line}" for line in misfits(dialog)]
    return problems


def _dialogs_misfits(window, qtbot, mode: str, tmp_path) -> list[str]:
    """The export dialog (fresh, then refusing a non-empty folder), the stored runs (two compared),
    paste AutoSA sizes (a string it refuses) and the user guide."""
    problems = []

    def check(name: str, dialog) -> None:
        problems.extend(f"{name}{mode}: {line}" for line in _dialog_problems(dialog))

    export = _shown(window.show_export(), qtbot)
    check("export dialog", export)
    full = tmp_path / f"full{mode.strip()}"
    full.mkdir()
    (full / "kept.txt").write_text("not empty\n")
    export.folder.setText(str(full))
    export.export_button.click()  # refused in place, naming the checkbox
    assert "not empty" in export.outcome.text()
    check("export dialog refusing a folder", export)
    export.close()
    runs = _shown(window.runs_dialog(), qtbot)
    runs.table.selectAll()
    assert runs.compare_selected()
    check("runs dialog comparing", runs)
    runs.close()
    paste = _shown(window.paste_sa_sizes(), qtbot)
    paste.line.setText("{kernel[]->space_time[99]}")
    paste.buttons.button(paste.buttons.StandardButton.Ok).click()  # refused: the reason in place
    assert paste.isVisible() and paste.message.isVisible()
    check("paste AutoSA sizes refusing", paste)
    paste.close()
    guide = _shown(window.menus.open_docs(), qtbot)
    check("user guide", guide)
    guide.close()
    return problems


def _store_two_runs(database) -> None:
    from engine.search.progress import Candidate, DesignResult, ExplorationResult
    from engine.search.store import RunStore

    with RunStore(database) as store:
        for method, seed, gops in (("random", 1, {"i__i-j.k": 10.0, "j__i-j.k": 30.0}), ("hybrid", 2, {"i__i-j.k": 20.0})):
            designs = tuple(DesignResult(d, method, 10, 1.0, Candidate({"i_t1": 4}, 1000.0 / g, 1.0, 1.0, g), ())
                            for d, g in gops.items())
            store.save(kernel_path="tiny.c", kernel_text="", sizes={"I": 32, "J": 32, "K": 32}, device="u250",
                       method=method, seed=seed, budget={"seconds": None, "samples": 100},
                       result=ExplorationResult("tiny", method, seed, designs))


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
