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
    assert view.editors["i_t1"].value() == selection.values["i_t1"]
    assert f"{report['latency_cycles']:,.0f} cycles" in view.latency.text()
    assert report["bottleneck"] in view.bottleneck.text()
    assert f"{report['dsp']:,.0f} / " in view.bars["DSP"].format()
    assert f"{report['throughput_gops']:,.1f} GOP/s" in view.throughput.text()
    assert "MiB" in view.traffic.text() and view.error.text() == ""
    assert "usable budget (70%)" in view.resources_box.title()  # the bars divide by the usable budget, and say so


def test_an_illegal_value_keeps_the_last_result_greyed_with_the_error_in_place(detail, mm, settle):
    selection, view = detail
    selection.select("i-j__i-j.k")
    settle(selection)
    shown = view.latency.text()
    edit = view.editors["i_t2"]
    edit.setValue(3)  # typed: i_t2 = 3 does not divide i_t1 = 8
    settle(selection)
    assert selection.report is None
    assert "i_t2=" in view.error.text() and "must divide i_t1" in view.error.text()
    assert "border" in edit.styleSheet() and view.editors["j_t1"].styleSheet() == ""
    assert view.latency.text() == shown and not view.latency_box.isEnabled()  # last valid numbers, greyed
    edit.setValue(2)
    settle(selection)
    assert selection.report is not None and view.error.text() == "" and edit.styleSheet() == ""
    assert view.latency_box.isEnabled()


def test_spin_boxes_step_through_legal_values_only(detail, mm, settle):
    selection, view = detail
    design = mm.design("i-j__i-j.k")
    selection.select(design.id, {"i_t1": 12, "j_t1": 8, "k_t1": 8, "i_t2": 1, "j_t2": 1, "k_t2": 1})
    settle(selection)
    t2 = view.editors["i_t2"]
    seen = [t2.value()]
    for _ in range(8):
        t2.stepBy(1)
        settle(selection)
        seen.append(t2.value())
    assert seen == [1, 2, 3, 4, 6, 12, 12, 12, 12]  # the divisors of i_t1 = 12, then it stays
    t2.stepBy(-2)
    settle(selection)
    assert t2.value() == 4
    simd = view.editors["k_t2"]  # SIMD: a power of two dividing k_t1 = 8, at most its bound
    steps = [simd.value()]
    for _ in range(5):
        simd.stepBy(1)
        settle(selection)
        steps.append(simd.value())
    upper = next(p.upper for p in design.params if p.name == "k_t2")
    assert steps == sorted(set(steps)) + [steps[-1]] * (len(steps) - len(set(steps)))
    assert all(v & (v - 1) == 0 and 8 % v == 0 and v <= upper for v in steps)
    t1 = view.editors["i_t1"]  # t1: a multiple of i_t2 = 4
    t1.stepBy(1)
    settle(selection)
    assert t1.value() == 16 and selection.report is not None


def test_undo_and_redo_of_parameter_edits(detail, mm, settle):
    selection, view = detail
    selection.select("i-j__i-j.k")
    settle(selection)
    before = dict(selection.values)
    view.editors["i_t1"].stepBy(1)
    settle(selection)
    view.editors["j_t1"].stepBy(1)
    settle(selection)
    after = dict(selection.values)
    assert after != before and view.undo_stack.count() == 2
    view.undo_stack.undo()
    view.undo_stack.undo()
    settle(selection)
    assert selection.values == before and view.editors["i_t1"].value() == before["i_t1"]
    view.undo_stack.redo()
    view.undo_stack.redo()
    settle(selection)
    assert selection.values == after and selection.report is not None


@pytest.mark.parametrize("typed", ["", "x", "-4", "0", "1e3", "99999999999999999999", "  ", "٣"])
def test_nothing_typed_crashes(detail, typed, settle):
    selection, view = detail
    selection.select("i-j__i-j.k")
    settle(selection)
    selection.set_value("k_t2", typed)  # what any text field would hand over
    settle(selection)
    assert selection.report is None and view.error.text()
