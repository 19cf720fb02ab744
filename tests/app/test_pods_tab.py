"""The explorer's Pods tab: the engine's multi-pod schedule run on a worker thread and shown as the
pod grid, the interconnect, a Gantt chart, busy pods, the energy split and a granularity heat map."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.views.qt_pods import PodSettings, QtPods, run_pods
from engine.pods.studies import ScheduleOptions, run_workloads
from engine.pods.system import build_system
from engine.pods.technology import load_technology
from engine.pods.workload import load_pod_workload

NETWORK = '''{"name": "small", "workloads": [
  {"name": "c1", "params": {"i": 3, "o": 32, "r": 16, "c": 16, "p": 3, "q": 3}},
  {"name": "c2", "params": {"i": 32, "o": 48, "r": 8, "c": 8, "p": 3, "q": 3}},
  {"name": "fc", "params": {"i": 8, "j": 40, "k": 96}}]}'''


@pytest.fixture
def view(qtbot, tmp_path):
    path = tmp_path / "small.json"
    path.write_text(NETWORK)
    pods = QtPods()
    qtbot.addWidget(pods)
    for k in range(pods.networks.count()):
        pods.networks.item(k).setCheckState(Qt.Unchecked)
    pods.add_network(str(path))
    pods.rows.setValue(8)
    pods.cols.setValue(8)
    pods.pods.setValue(16)
    yield pods
    pods.wait()


def run(qtbot, view, button):
    with qtbot.waitSignal(view.finished, timeout=120000):
        qtbot.mouseClick(button, Qt.LeftButton)
    assert not view.busy


def test_a_schedule_runs_off_the_gui_thread_and_shows_the_engines_figures(qtbot, view, tmp_path):
    run(qtbot, view, view.schedule_button)
    outcome = view.outcome
    assert outcome is not None and outcome.settings.networks == (str(tmp_path / "small.json"),)
    # the same figures as the engine's own call (what `systolic pods schedule` prints)
    system = build_system(8, 8, 16, "butterfly-2", load_technology())
    _, expected = run_workloads([load_pod_workload(tmp_path / "small.json")], system, ScheduleOptions())
    assert outcome.summary["effective_tops"] == pytest.approx(expected.effective_tops)
    assert outcome.summary["cycles"] == expected.cycles
    assert f"{expected.effective_tops:.1f} TOP/s" in view.figures.text()
    assert "butterfly-2" in view.interconnect_label.text() and "16 pods" in view.interconnect_label.text()
    assert len(view.grid.busy) == 16 and 0 < view.grid.busy.max() <= 1
    # the Gantt chart: one column per pod, one row per slice; busy cells per slice add up
    image = view.gantt_image.image
    assert image.shape[:2] == (expected.slices, 16)
    assert np.isfinite(outcome.gantt).sum() == outcome.busy_per_slice.sum()
    heights = view.energy_bars.opts["height"]
    assert sum(heights) == pytest.approx(sum(expected.energy_j.values()) * 1e3)
    assert view.schedule_button.isEnabled() and view.status.text().startswith("done:")


def test_two_checked_networks_are_scheduled_together(qtbot, view, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(NETWORK.replace('"small"', '"other"'))
    view.add_network(str(other))
    assert len(view.settings().networks) == 2
    run(qtbot, view, view.schedule_button)
    assert view.outcome.summary["workloads"] == ["small", "other"]


def test_a_bounded_post_processor_is_passed_to_the_engine(qtbot, view, tmp_path):
    view.post_processors.setValue(0.125)  # 2 aggregations a slice on 16 pods
    run(qtbot, view, view.schedule_button)
    system = build_system(8, 8, 16, "butterfly-2", load_technology())
    _, expected = run_workloads([load_pod_workload(tmp_path / "small.json")], system,
                                ScheduleOptions(post_processors_per_pod=0.125))
    assert view.outcome.summary["cycles"] == expected.cycles


def test_a_butterfly_over_a_pod_count_not_a_power_of_two_is_one_line(qtbot, view):
    view.pods.setValue(12)
    run(qtbot, view, view.schedule_button)
    text = view.status.text()
    assert text.startswith("error:") and "power of two" in text and "\n" not in text
    assert view.outcome is None


def test_nothing_checked_is_one_line():
    with pytest.raises(Exception, match="check at least one network"):
        run_pods(PodSettings(()))


def test_the_granularity_sweep_draws_a_heat_map_with_the_best_shape(qtbot, view):
    run(qtbot, view, view.sweep_button)
    assert view.points and view.heat_image.image is not None
    best = max(view.points, key=lambda p: p.effective_tops)
    assert f"best {best.rows}x{best.cols}" in view.heat_label.text()
    assert view.tabs.currentIndex() == view.tabs.count() - 1


def test_the_window_has_a_pods_tab(make_window, compiled):
    window = make_window()
    compiled(window)
    tabs = [window.views.tabText(k) for k in range(window.views.count())]
    assert "Pods" in tabs and window.views.widget(tabs.index("Pods")).widget() is window.pods  # in a scroll area
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    pods = next(a for a in view_menu.actions() if a.text() == "Pods")
    assert pods.shortcut().toString() == "Ctrl+4"
    pods.trigger()
    assert window.views.currentWidget().widget() is window.pods


@pytest.mark.parametrize("mode", ["dark", "light"])
def test_the_gantt_follows_the_theme_and_has_a_legend(mode):
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from app.views import theme
    from app.views.qt_pods import gantt_colours

    theme.apply(QApplication.instance(), mode)
    try:
        grid = np.array([[0, 1, np.nan], [8, np.nan, 0]])
        colours, legend = gantt_colours(grid)
        assert tuple(colours[0, 2]) == QColor(theme.PANEL).getRgb()  # idle: the theme's panel, not white
        assert tuple(colours[0, 0]) == tuple(colours[1, 2]) == QColor(theme.ARRAY_COLOURS[0]).getRgb()
        assert tuple(colours[0, 1]) != tuple(colours[0, 0])
        assert "GEMM 0" in legend and "GEMM 1" in legend and "GEMM 8" in legend and "idle" in legend
        assert "repeat every 7" in legend  # GEMM 8 shares GEMM 1's colour, and the legend says so
    finally:
        theme.apply(QApplication.instance(), "dark")
