"""The design detail: parameters editable with live validation (the broken constraint named in place,
never an exception), latency split with the bottleneck, resource bars against the device."""
from __future__ import annotations

import pytest

from app.models.design_selection import DesignSelection, default_values
from app.views.qt_design_detail import QtDesignDetail
from engine.compiler.design_space import compile_kernel
from engine.models.constraints import violations
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS


@pytest.fixture(scope="module")
def mm():
    return compile_kernel(KERNELS / "mm.c", defines={"I": 64, "J": 64, "K": 64})


@pytest.fixture
def detail(qtbot, mm):
    selection = DesignSelection()
    view = QtDesignDetail(selection)
    qtbot.addWidget(view)
    selection.set_space(mm)
    yield selection, view
    selection.shutdown()


def test_default_values_are_legal_for_every_design(mm):
    for design in mm.designs:
        assert violations(design, default_values(design)) == []


def test_the_report_is_shown(detail, mm, settle):
    selection, view = detail
    design = mm.design("i-j__i-j.k")
    selection.select(design.id)
    assert selection.busy and set(view.editors) == {p.name for p in design.params if p.tunable}
    settle(selection)
    report = evaluate_configuration(selection.model, selection.values)
    assert set(view.editors) == {p.name for p in design.params if p.tunable}
    assert view.editors["i_t1"].text() == str(selection.values["i_t1"])
    assert f"{report['latency_cycles']:,.0f} cycles" in view.latency.text()
    assert report["bottleneck"] in view.bottleneck.text()
    assert f"{report['dsp']:,.0f} / " in view.bars["DSP"].format()
    assert f"{report['throughput_gops']:,.1f} GOP/s" in view.throughput.text()
    assert "MiB" in view.traffic.text() and view.error.text() == ""


def test_an_illegal_parameter_shows_the_error_in_place(detail, mm, qtbot, settle):
    selection, view = detail
    selection.select("i-j__i-j.k")
    settle(selection)
    edit = view.editors["i_t2"]
    edit.setFocus()
    qtbot.keyClicks(edit, "3")  # i_t2 = "13" (or similar) no longer divides i_t1 = 8
    settle(selection)
    assert selection.report is None
    assert "i_t2=" in view.error.text() and "must divide i_t1" in view.error.text()
    assert "border" in edit.styleSheet() and view.editors["j_t1"].styleSheet() == ""
    assert view.latency.text() == "" and view.bars["DSP"].value() == 0
    edit.selectAll()
    qtbot.keyClicks(edit, "2")
    settle(selection)
    assert selection.report is not None and view.error.text() == "" and edit.styleSheet() == ""


@pytest.mark.parametrize("typed", ["", "x", "-4", "0", "1e3", "99999999999999999999", "  ", "٣"])
def test_nothing_typed_crashes(detail, typed, settle):
    selection, view = detail
    selection.select("i-j__i-j.k")
    settle(selection)
    view.editors["k_t2"].textEdited.emit(typed)
    settle(selection)
    assert selection.report is None and view.error.text()
