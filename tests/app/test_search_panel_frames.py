"""QtSearchPanel while a search streams: ticks only mark the plots stale and a frame redraws them;
the best-so-far lines grow to the present through their tails; a plot on a hidden tab is drawn
when its tab is shown; the value axes do not autorange while the search runs; the legend lists the
best-overall line and each design once; the end of the search draws everything."""
from __future__ import annotations

import time

import pytest

from app.models.search_session import SearchSession
from app.views.qt_search_panel import FRAME_MS, QtSearchPanel
from engine.search.progress import Candidate, Progress


def snapshot(design: str, gops: float, samples: int, elapsed: float) -> Progress:
    best = Candidate({"p": 1}, 1e9 / gops, 100.0, 10.0, gops)
    return Progress(design, "hybrid", samples, elapsed, best, recent=((1e6 * gops, 100.0), (2e6, 50.0)))


@pytest.fixture
def running(qtbot):
    """A panel whose session runs a search fed by hand (the worker's queued ticks, without a process)."""
    session = SearchSession()
    panel = QtSearchPanel(session)
    qtbot.addWidget(panel)
    panel.resize(900, 450)
    panel.show()
    qtbot.waitExposed(panel)
    session.budget, session.status, session.worker = 6.0, "running", object()
    session.budget_started_at, session.phase = time.perf_counter(), "searching"
    session.stateChanged.emit()
    yield session, panel
    session.worker, session.status = None, "finished"
    session.stateChanged.emit()


def test_ticks_are_drawn_by_the_next_frame_and_lines_grow_through_tails(running, qtbot):
    session, panel = running
    session._tick([snapshot("a", 100.0, 50, 0.1)], 0.1)
    session._tick([snapshot("a", 120.0, 90, 0.2)], 0.2)
    assert len(panel.overall.getData()[1] if panel.overall.getData()[1] is not None else []) == 0  # not yet
    qtbot.waitUntil(lambda: panel.overall.getData()[1] is not None and len(panel.overall.getData()[1]) == 2,
                    timeout=10 * FRAME_MS)
    assert panel.overall.getData()[1].tolist() == [100.0, 120.0]
    session._tick([snapshot("a", 120.0, 150, 0.5)], 0.5)  # no improvement: the line stays, its tail grows
    qtbot.waitUntil(lambda: panel.tails["a"].getData()[0] is not None and len(panel.tails["a"].getData()[0])
                    and panel.tails["a"].getData()[0][-1] == pytest.approx(0.5), timeout=10 * FRAME_MS)
    assert panel.design_curves["a"].getData()[0].tolist() == [0.1, 0.2]
    assert panel.tails["a"].getData()[1].tolist() == [120.0, 120.0]
    assert panel.overall_tail.getData()[0].tolist() == pytest.approx([0.2, 0.5])
    session._tick([snapshot("b", 300.0, 40, 0.6)], 0.6)  # the next design: its own line, a's tail ends
    qtbot.waitUntil(lambda: "b" in panel.design_curves, timeout=10 * FRAME_MS)
    assert len(panel.tails["a"].getData()[0]) == 0
    assert panel.legend.names() == ["best overall", "b", "a"]  # the best designs first


def test_value_axes_grow_only_and_hidden_tabs_are_drawn_when_shown(running, qtbot):
    session, panel = running
    assert panel.result_tabs.currentWidget() is not panel.rate_plot
    for n in range(1, 6):
        session._tick([snapshot("a", 100.0 * n, 100 * n, 0.1 * n)], 0.1 * n)
    qtbot.waitUntil(lambda: "a" in panel.design_curves and panel.overall.getData()[1][-1] == 500.0,
                    timeout=10 * FRAME_MS)
    box = panel.throughput_plot.getViewBox()
    assert box.autoRangeEnabled() == [False, False]
    low, high = box.viewRange()[1]
    assert low == 0.0 and high >= 500.0
    assert len(panel.rate.getData()[0] if panel.rate.getData()[0] is not None else []) == 0  # hidden: not drawn
    panel.result_tabs.setCurrentWidget(panel.rate_plot)
    assert len(panel.rate.getData()[0]) >= 2
    session._tick([snapshot("a", 550.0, 700, 0.7)], 0.7)  # within the headroom: the axis stays
    qtbot.waitUntil(lambda: panel.overall.getData()[1][-1] == 550.0, timeout=10 * FRAME_MS)
    assert box.viewRange()[1] == [low, high]


def test_the_end_of_the_search_draws_every_plot_and_stops_the_frames(running, qtbot):
    session, panel = running
    session._tick([snapshot("a", 100.0, 50, 0.1), snapshot("b", 200.0, 60, 0.1)], 0.1)
    session.worker, session.status = None, "finished"
    session.stateChanged.emit()
    assert not panel.frame_timer.isActive()
    assert panel.overall.getData()[1].tolist() == [100.0, 200.0]
    assert len(panel.rate.getData()[0]) >= 1
    assert all(len(tail.getData()[0]) == 0 for tail in panel.tails.values())  # nothing grows after the end
    qtbot.waitUntil(lambda: panel.points.getData()[0] is not None
                    and len(panel.points.getData()[0]) == 4)  # the scatter follows in a pass of its own


def test_each_design_s_best_is_a_ranked_bar_grouped_by_dataflow_and_a_click_picks_it(running, qtbot):
    from PySide6.QtCore import QPointF, Qt

    from app.views.qt_ranked_bars import GROUP_GAP, ranked

    session, panel = running
    bars = panel.ranked
    assert panel.best_tabs.currentWidget() is bars  # the traces are on demand, on the other tab
    bars.group_of = {"a": "[i]", "b": "[i]", "c": "[j]", "d": "[i,j]"}.get
    for design, gops in (("a", 300.0), ("b", 500.0), ("c", 800.0), ("d", 100.0)):
        session._tick([snapshot(design, gops, 10, 0.1)], 0.1)
    qtbot.waitUntil(lambda: len(bars.shown) == 4, timeout=10 * FRAME_MS)
    # groups by their best design (c's [j], then [i] with b before a, then [i,j]), a gap between groups
    assert [b.design for b in bars.shown] == ["c", "b", "a", "d"]
    assert [b.y for b in bars.shown] == [0.0, 1 + GROUP_GAP, 2 + GROUP_GAP, 3 + 2 * GROUP_GAP]
    assert bars.shown == ranked({"a": 300.0, "b": 500.0, "c": 800.0, "d": 100.0}, bars.group_of)
    colours = bars.colours(bars.shown)
    assert len(set(colours.values())) == 3 and all(c in bars.legend.text() for c in colours.values())
    assert [label.toPlainText() for label in bars.labels[:4]] == ["c  800.0", "b  500.0", "a  300.0", "d  100.0"]
    # the traces' legend sits under the plot, not over the data
    assert panel.legend.item.parentItem() is not panel.throughput_plot.getViewBox()
    assert not panel.throughput_plot.getViewBox().sceneBoundingRect().intersects(panel.legend.item.sceneBoundingRect())
    clicked = []
    bars.designClicked.connect(clicked.append)
    target = bars.shown[2]
    scene = bars.plot.getViewBox().mapViewToScene(QPointF(target.gops / 2, target.y))
    qtbot.mouseClick(bars.plot.viewport(), Qt.LeftButton, pos=bars.plot.mapFromScene(scene))
    qtbot.waitUntil(lambda: clicked == ["a"], timeout=5000)
    session.worker, session.status = None, "finished"
    session.clear()  # another kernel opened: the bars go
    assert bars.shown == [] and not bars.bars.isVisible() and "run a search" in bars.note.text()


def test_the_live_scatter_shows_no_negative_resources(running):
    import numpy as np

    _, panel = running
    panel._grow_scatter(np.array([[1e6, 0.0], [1e8, 4000.0], [1e9, 9000.0]]))  # (latency, DSP): one at 0 DSP
    low, high = panel.scatter_plot.getViewBox().viewRange()[1]
    assert -0.02 * high <= low < 0.0 and high >= 9000.0  # the point at 0 stays whole, no "-2,000" tick


def test_the_over_time_legend_names_the_best_designs_and_counts_the_others(running, qtbot):
    from app.views.qt_search_panel import LEGEND_DESIGNS

    session, panel = running
    gops = {f"d{n}": 100.0 * (n + 1) for n in range(LEGEND_DESIGNS + 3)}
    session._tick([snapshot(d, g, 100, 0.5) for d, g in gops.items()], 0.5)
    qtbot.waitUntil(lambda: len(panel.design_curves) == len(gops), timeout=10 * FRAME_MS)
    best = sorted(gops, key=lambda d: -gops[d])[:LEGEND_DESIGNS]
    qtbot.waitUntil(lambda: panel.legend.names()[1:LEGEND_DESIGNS + 1] == best, timeout=10 * FRAME_MS)
    assert panel.legend.names() == ["best overall", *best, "3 more: hover a line"]
