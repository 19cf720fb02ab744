"""The demo (Search > Demo, `--demo`): the bundled kernel reopened at its own sizes, every design,
hybrid, a fixed sample budget and seed, started once it compiles: two demos find the same. The
kernel and the budget are made small here (the mechanism, not the bundled MM's numbers)."""
from __future__ import annotations

import pytest

from app import window_actions
from engine.search.store import RunStore


def test_the_demo_reopens_its_kernel_and_searches_it_with_its_budget(make_window, qtbot, compiled, tiny_mm, small_mm,
                                                                      monkeypatch):
    monkeypatch.setattr(window_actions, "DEFAULT_KERNEL", tiny_mm)
    window = make_window(small_mm, background=False)
    compiled(window)
    window.search_panel.method.setCurrentText("random")  # what a person had set is replaced by the demo's
    window.session.set_size("I", 16)  # a compile still running when the demo starts is not the demo's
    with qtbot.waitSignal(window.search.stateChanged, timeout=300_000, check_params_cb=lambda: window.search.running):
        window.actions_by_name["demo"].trigger()
    panel = window.search_panel
    assert window.session.path == tiny_mm and window.session.overrides == {} and window.session.space is not None
    assert (panel.method.currentText(), panel.budget_kind.currentIndex(), panel.samples.value(), panel.seed_value()) \
        == ("hybrid", 1, window_actions.DEMO_SAMPLES, window_actions.DEMO_SEED)
    assert "demo" in window.statusBar().currentMessage() or window.search.running
    with qtbot.waitSignal(window.search.stateChanged, timeout=300_000,
                          check_params_cb=lambda: not window.search.running):
        window.search.stop()


@pytest.mark.slow
def test_two_demos_find_the_same_whatever_was_set_before(make_window, qtbot, compiled, tiny_mm, small_mm,
                                                         run_database, monkeypatch):
    monkeypatch.setattr(window_actions, "DEFAULT_KERNEL", tiny_mm)
    monkeypatch.setattr(window_actions, "DEMO_SAMPLES", 60)
    window = make_window(small_mm, background=False)
    compiled(window)
    panel = window.search_panel
    panel.method.setCurrentText("random")  # what a person had set is replaced by the demo's
    panel.seed.setText("77")
    window.session.set_size("I", 16)
    found = []
    for _ in range(2):
        with qtbot.waitSignal(window.search.stateChanged, timeout=300_000,
                              check_params_cb=lambda: not window.search.running and window.search.result):
            window.actions_by_name["demo"].trigger()
        assert window.session.path == tiny_mm and window.session.overrides == {}
        found.append([(d.design, d.samples, d.best.params) for d in window.search.result.designs])
    assert found[0] == found[1] and len(found[0]) == len(window.tree_model.design_ids())
    with RunStore(run_database) as store:
        run = store.load(window.search.run_ids[-1])
    assert (run.method, run.seed, run.budget) == ("hybrid", window_actions.DEMO_SEED,
                                                  {"seconds": None, "samples": 60})
