"""DesignSelection builds models, reports and topologies in a worker thread, never on the GUI thread:
select() takes effect at once for the design and its values, the report follows; values typed while
a worker runs are evaluated last-one-wins, and a stale result never overwrites a newer state."""
from __future__ import annotations

import threading

import pytest

from app.models import design_selection
from app.models.design_selection import DesignSelection, default_values
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS


@pytest.fixture(scope="module")
def mm():
    return compile_kernel(KERNELS / "mm.c", defines={"I": 64, "J": 64, "K": 64})


@pytest.fixture
def selection(mm):
    selection = DesignSelection()
    selection.set_space(mm)
    yield selection
    selection.shutdown()


def test_the_model_is_built_off_the_gui_thread(selection, mm, monkeypatch, settle, qtbot):
    threads, evaluate = [], design_selection.evaluate_selection
    monkeypatch.setattr(design_selection, "evaluate_selection",
                        lambda request: threads.append(threading.current_thread()) or evaluate(request))
    with qtbot.waitSignal(selection.changed, timeout=1000):  # at once: the design and its values
        selection.select("i-j__i-j.k")
    assert selection.design.id == "i-j__i-j.k" and selection.values == default_values(selection.design)
    assert selection.busy and selection.report is None and selection.model is None
    settle(selection)
    assert selection.report is not None and selection.model is not None and selection.topology() is not None
    assert threads and threading.main_thread() not in threads


def test_typing_fast_evaluates_the_latest_values_only(selection, settle):
    selection.select("i-j__i-j.k")
    settle(selection)
    model = selection.model
    reports = []
    selection.changed.connect(lambda: reports.append((dict(selection.values), selection.report)))
    for text in ("1", "16", "2", "4"):  # as typed into i_t1, one key at a time
        selection.set_value("i_t1", text)
    settle(selection)
    assert selection.values["i_t1"] == 4 and selection.report["params"]["i_t1"] == 4
    assert selection.model is model  # built once per design
    shown = [values["i_t1"] for values, report in reports if report is not None]
    assert shown[-1] == 4 and len(shown) <= 2  # the first request, then the last one; none between


def test_a_stale_result_does_not_overwrite_a_newer_state(selection, qtbot):
    selection.select("i-j__i-j.k")
    selection.set_value("i_t2", "x")  # not a number: shown at once, the running evaluation is stale
    assert selection.error and not selection.busy
    selection.shutdown()  # the worker finishes; its result, delivered next, must be ignored
    qtbot.wait(100)
    assert selection.report is None and "not a whole number" in selection.error


def test_switching_designs_shows_no_numbers_of_the_previous_one(selection, settle):
    selection.select("i-j__i-j.k")
    settle(selection)
    selection.select("i__i-j.k")
    assert selection.report is None and selection.topology() is None and selection.busy
    settle(selection)
    assert selection.report is not None and selection.design.id == "i__i-j.k"
