"""Live search from the window: a short search fills the tree and the plots while the window, shown
at its usual size with the application's theme, keeps handling events (a 10 ms timer probe ticks
while the search runs) and progress streams in, Stop ends the search long before its budget would,
closing the window mid-search stops it cleanly, and the stored run can be reopened and replotted.
The issue's figures (no event-loop stall over 100 ms, progress at >= 5 Hz) are wall-clock
measurements: bench/bench_gui.py prints them (worst_ms, rate_hz); no test here depends on speed."""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QItemSelectionModel, QTimer
from PySide6.QtWidgets import QApplication

from app.__main__ import SCREEN_SIZE
from app.views import theme
from engine.search.store import RunStore

class Probe:
    """Ticks every 10 ms; records, in order, its ticks delivered while `running()` is true and the
    search's progress ticks (behaviour, not speed: a search run on the GUI thread would block the
    loop, so no probe tick would fall between two of its progress ticks)."""

    def __init__(self, running):
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.running, self.during, self.events = running, 0, []

    def _tick(self):
        if self.running():
            self.during += 1
            self.events.append("probe")

    def progress(self, _snapshots):
        self.events.append("progress")

    def interleaved(self) -> bool:
        """A probe tick between two progress ticks: the loop ran while the search was streaming."""
        first = self.events.index("progress") if "progress" in self.events else len(self.events)
        last = len(self.events) - 1 - self.events[::-1].index("progress") if "progress" in self.events else -1
        return "probe" in self.events[first:last]

    def start(self):
        self.timer.start()

    def stop(self):
        self.timer.stop()


def test_a_search_fills_tree_and_plots_and_the_window_stays_responsive(make_window, qtbot, run_database, settle,
                                                                        compiled):
    theme.apply(QApplication.instance())
    window = make_window()
    compiled(window)
    window.resize(*SCREEN_SIZE)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: bool(window.tree_model.design_ids()) and not window.models.busy, timeout=300000)
    settle(window.selection)
    qtbot.wait(300)  # the window's first paint (polish, layout, every widget: ~100 ms) is not the search's
    ticks = []
    window.search.ticked.connect(lambda snapshots: ticks.append(snapshots))
    panel = window.search_panel
    panel.method.setCurrentText("hybrid")
    panel.seconds.setValue(3.0)
    # three designs, so that the budget is spent searching rather than building 18 models
    chosen = window.tree_model.design_ids()[::7]
    selection = window.tree.selectionModel()
    selection.clearSelection()
    for design in chosen:
        selection.select(window.tree_model.index_of(design), QItemSelectionModel.Select | QItemSelectionModel.Rows)
    panel.scope.setCurrentIndex(1)
    probe = Probe(lambda: window.search.running)
    window.search.ticked.connect(probe.progress)
    probe.start()
    panel.start_button.click()
    assert window.search.running and not panel.start_button.isEnabled()  # the models were built: it started
    qtbot.waitUntil(lambda: not window.search.running, timeout=300000)
    probe.stop()
    # the search runs off the GUI thread: progress streams in (several ticks, not one at the end) and
    # the event loop keeps delivering the probe's ticks between them (stall and rate: bench_gui.py)
    assert len(ticks) >= 2 and probe.during > 0
    assert probe.interleaved(), "no event-loop tick between two progress ticks: is the search on the GUI thread?"
    assert window.search.status == "finished", window.search.message
    ids = window.tree_model.design_ids()
    searched = [d for d in ids if window.tree_model.status[d].startswith("done")]
    assert searched == chosen  # the budget is sampling time only: every design gets its share
    assert [d.design for d in window.search.result.designs] == searched
    assert all(d.samples > 0 for d in window.search.result.designs)
    found = {d.design: d.best for d in window.search.result.designs if d.best is not None}
    assert found and {d: c.throughput_gops for d, c in window.tree_model.best.items()} == \
        {d: c.throughput_gops for d, c in found.items()}
    best = window.tree_model.best_design()
    assert window.tree_model.index_of(best).siblingAtColumn(1).data() == \
        f"{window.tree_model.best[best].throughput_gops:,.1f}"
    x, y = panel.overall.getData()
    assert len(x) >= 1 and y[-1] == max(c.throughput_gops for c in window.tree_model.best.values())
    assert len(panel.design_curves) == len(window.tree_model.best)
    qtbot.waitUntil(lambda: len(panel.points.getData()[0]) > 100)  # the scatter follows in a pass of its own
    assert len(panel.front.getData()[0]) >= 1
    assert len(panel.rate.getData()[0]) > 5
    with RunStore(run_database) as store:
        runs = store.list_runs()
    assert [r.id for r in runs] == window.search.run_ids and runs[0].status == "finished"

    # reopen the stored run: the same traces are replotted
    window.search.traces = type(window.search.traces)()
    window.reopen_run(runs[0].id)
    assert window.search.status == "replayed"
    assert panel.overall.getData()[1][-1] == pytest.approx(y[-1], rel=1e-12)


def test_stop_ends_the_search_before_its_budget(make_window, qtbot, compiled):
    # Behaviour, not speed (issue 31): the search process stops computing when Stop is clicked, not
    # when its 120 s budget runs out; how quickly it stops (0.5 s at idle, 1 s seen at load 10) is a
    # measurement, not asserted here
    window = make_window()
    compiled(window)
    budget = 120.0
    window.search_panel.seconds.setValue(budget)
    window.search_panel.start_button.click()
    qtbot.waitUntil(lambda: window.search.worker is not None, timeout=180000)  # after the model pool
    worker = window.search.worker
    qtbot.waitUntil(lambda: window.search.traces.total_samples > 0, timeout=300000)
    qtbot.wait(300)
    clicked = time.perf_counter()
    window.search_panel.stop_button.click()
    qtbot.waitUntil(lambda: not window.search.running, timeout=300000)
    assert worker.stop_requested_at >= clicked and worker.search_ended_at >= worker.stop_requested_at
    assert window.search.status == "interrupted"  # stopped by the click: a search its budget ended is "finished"
    assert "stopped" in {s.split(",")[0] for s in window.tree_model.status.values()}
    assert window.search.run_ids == [worker.run_id]  # what was found so far is stored


def test_closing_the_window_during_a_search_stops_the_worker(make_window, qtbot, compiled):
    window = make_window()
    compiled(window)
    window.search_panel.seconds.setValue(120.0)
    window.search_panel.start_button.click()
    qtbot.waitUntil(lambda: window.search.worker is not None, timeout=180000)
    worker = window.search.worker
    qtbot.waitUntil(lambda: window.search.elapsed > 0.3, timeout=300000)
    window.close()
    assert worker.isFinished()


def search_designs(window, qtbot, designs) -> None:
    """Search `designs` (picked in the tree) with the panel's settings and wait for the end."""
    selection = window.tree.selectionModel()
    selection.clearSelection()
    for design in designs:
        selection.select(window.tree_model.index_of(design), QItemSelectionModel.Select | QItemSelectionModel.Rows)
    window.search_panel.scope.setCurrentIndex(1)
    runs = len(window.search.run_ids)
    window.search_panel.start_button.click()
    # it starts once the model pool is done, and is stored when it ends
    qtbot.waitUntil(lambda: not window.search.running and len(window.search.run_ids) > runs, timeout=180000)
    assert window.search.status == "finished", window.search.message


def test_a_search_ends_with_its_best_selected_and_every_panel_on_the_tree_s_numbers(make_window, qtbot, compiled,
                                                                                    settle, tiny_mm):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    ids = window.tree_model.design_ids()
    shown = window.selection.design.id, dict(window.selection.values)
    window.search_panel.seconds.setValue(window.search_panel.seconds.minimum())
    search_designs(window, qtbot, ids[1:3])
    best = window.tree_model.best_design()
    candidate = window.tree_model.best[best]
    assert best in ids[1:3] and (best, candidate.params) != shown
    settle(window.selection)
    assert window.selection.design.id == best and window.selection.values == candidate.params
    assert window.tree.currentIndex().data().startswith(best)
    assert sorted(window.tree.selected_designs()) == sorted(ids[1:3])  # still chosen for the next search
    tree_gops = window.tree_model.index_of(best).siblingAtColumn(1).data()
    assert window.detail.throughput.text().split(" GOP/s")[0] == tree_gops
    report = window.selection.report
    assert report["latency_cycles"] == pytest.approx(candidate.latency_cycles, rel=1e-9)
    assert window.bottleneck.headline.text().startswith(f"{candidate.latency_cycles:,.0f} cycles")
    graph = window.selection.topology()
    assert window.topology.scene_items_by_kind()["pe"] == sum(1 for n in graph.nodes if n[0] == "PE") > 0
    # a kept configuration clicked in the plots is loaded; one that breaks a bound is refused in place
    qtbot.waitUntil(lambda: len(window.points.table) > 0, timeout=300000)
    table, results = window.points.table, window.search_panel.results
    k = next(i for i, d in enumerate(table.designs) if d != best)
    results.click_point(k)
    settle(window.selection)
    tunable = {n: table.params[k][n] for n in window.selection.values}
    assert window.selection.design.id == table.designs[k] and window.selection.values == tunable
    assert "click one to load it" in results.note.text()
    name = next(iter(tunable))
    results.pointClicked.emit(table.designs[k], {**tunable, name: 0})
    assert f"{name}=0 is outside its bounds" in results.note.text()
    assert window.selection.values == tunable and window.selection.report is not None
    # the ranked bars: one per design searched, grouped by dataflow; a click loads the design's best
    bars = window.search_panel.ranked
    space = window.selection.space
    assert {b.design for b in bars.shown} == set(window.tree_model.best)
    assert all(b.group == str(space.design(b.design).dataflow) for b in bars.shown)
    other = next(b.design for b in bars.shown if b.design != window.selection.design.id)
    bars.designClicked.emit(other)
    settle(window.selection)
    assert window.selection.design.id == other and window.selection.values == window.tree_model.best[other].params


def test_two_window_searches_with_one_seed_and_sample_budget_find_the_same(make_window, qtbot, compiled, tiny_mm,
                                                                           run_database):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    panel = window.search_panel
    panel.budget_kind.setCurrentIndex(1)
    assert panel.samples.isVisibleTo(panel) and not panel.seconds.isVisibleTo(panel)
    panel.samples.setValue(600)
    panel.seed.setText("12345678901234")  # past 32 bits: the CLI's range, 0..2^63-1
    designs = window.tree_model.design_ids()[1:3]
    found = []
    for _ in range(2):
        search_designs(window, qtbot, designs)
        found.append([(d.design, d.samples, d.best.params, d.best.latency_cycles)
                      for d in window.search.result.designs])
    assert found[0] == found[1] and [f[:2] for f in found[0]] == [(d, 300) for d in designs]
    with RunStore(run_database) as store:
        run = store.load(window.search.run_ids[-1])
    assert run.seed == 12345678901234 and run.budget == {"seconds": None, "samples": 600}
    panel.seed.setText("9999999999999999999")  # over 2^63-1: refused in one line, nothing started
    panel.start_button.click()
    assert not window.search.running and panel.status.text().startswith("the seed must be in 0..2^63-1")
