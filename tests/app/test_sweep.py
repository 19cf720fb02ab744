"""The one-parameter sweep (issue 29): latency and each resource against one tuning parameter of the
selected design, the others fixed, computed off the GUI thread; its points are the model's numbers
for those configurations (the value shown among them, with the selection's own report)."""
from __future__ import annotations

import threading

import pytest

import app.models.parameter_sweep as parameter_sweep
from app.models.design_selection import DesignSelection
from app.models.parameter_sweep import SweepSession, sweep_values
from app.views.qt_sweep import QtSweep
from engine.compiler.design_space import compile_kernel
from engine.models.device import RESOURCE_NAMES
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

VALUES = {"i_t1": 8, "j_t1": 8, "k_t1": 8, "i_t2": 2, "j_t2": 2, "k_t2": 2}


@pytest.fixture
def view(qtbot, settle, monkeypatch):
    threads = []
    real = parameter_sweep.parameter_sweep
    monkeypatch.setattr(parameter_sweep, "parameter_sweep",
                        lambda *a: threads.append(threading.current_thread()) or real(*a))
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 32, "J": 32, "K": 32}))
    session = SweepSession(selection)
    widget = QtSweep(session)
    qtbot.addWidget(widget)
    selection.select("i-j__i-j.k", VALUES)
    settle(selection)
    yield selection, session, widget, threads
    session.wait()
    selection.shutdown()


def test_the_sweep_is_the_model_at_each_legal_value_off_the_gui_thread(view, qtbot):
    selection, session, widget, threads = view
    qtbot.waitUntil(lambda: session.points is not None, timeout=300000)
    assert threads and threads[0] is not threading.main_thread()
    p = session.points
    assert p.param == "i_t1" == widget.param.currentText() and p.current == 8
    assert p.values == tuple(range(2, 33, 2))  # i_t1 in 1..32, a multiple of i_t2 = 2 (the others fixed)
    model = selection.load_model(selection.design)
    for k, value in enumerate(p.values):
        report = evaluate_configuration(model, {**VALUES, "i_t1": value})
        assert p.latency[k] == report["latency_cycles"] and p.fits[k] == report["fits"]
        assert p.shares["DSP"][k] == pytest.approx(report["dsp"] / model.device.budget("DSP"))
    shown = p.values.index(8)
    assert p.latency[shown] == selection.report["latency_cycles"]
    curve = widget.latency  # xData / yData: the data as given (getData is log-transformed on log axes)
    assert list(curve.xData) == list(p.values) and list(curve.yData) == list(p.latency)
    assert {r for r in RESOURCE_NAMES} == set(widget.resources)
    assert list(widget.resources["LUT"].yData) == pytest.approx([100 * s for s in p.shares["LUT"]])
    assert "i_t1 over 16 legal values" in widget.status.text()
    # another parameter
    widget.param.setCurrentText("k_t1")
    widget.param.activated.emit(widget.param.currentIndex())
    qtbot.waitUntil(lambda: session.points.param == "k_t1", timeout=300000)
    assert session.points.current == 8 and 8 in session.points.values


def test_many_legal_values_are_sampled_on_a_log_scale_keeping_the_current_one():
    picked = sweep_values(range(1, 10**6 + 1), 777)
    assert 777 in picked and picked[0] == 1 and picked[-1] == 10**6 and len(picked) <= 50
    assert sweep_values([1, 2, 4], 2) == [1, 2, 4]
