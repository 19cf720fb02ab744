"""Issue 30 in the window: the detail panel shows both clock estimates (floorplanned and plain) with
what limits each, and the topology coloured by SLR shows the floorplan (solved by SCIP in a process
of its own: never on the GUI thread, and its GIL is not the window's) with each SLR's utilisation and
the crossings beside it."""
from __future__ import annotations

import os

import pytest

from app.models.design_selection import DesignSelection
from app.views.qt_design_detail import QtDesignDetail
from app.views import theme
from app.views.qt_topology import KIND_ROLE, MODULE_ROLE
from app.views.qt_topology_panel import QtTopologyPanel
from engine.compiler.design_space import compile_kernel
from engine.floorplan import estimate_clock
from engine.resources import KERNELS

VALUES = {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 1, "k_t2": 2}


@pytest.fixture
def views(qtbot, settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 16, "J": 16, "K": 16}))
    panel = QtTopologyPanel(selection)
    detail = QtDesignDetail(selection)
    detail.follow_floorplan(panel.floorplan)
    qtbot.addWidget(panel)
    qtbot.addWidget(detail)
    selection.select("i-j__i-j.k", VALUES)
    settle(selection)
    yield selection, panel, detail
    panel.shutdown()
    selection.shutdown()


def test_both_clock_estimates_are_shown_and_the_slr_colours_come_from_a_floorplan_solved_off_the_gui_thread(
        views, qtbot):
    selection, panel, detail = views
    floorplan = panel.floorplan
    qtbot.waitUntil(floorplan.is_current, timeout=300000)
    quick = estimate_clock(selection.descriptor, selection.full_values(), selection.device, quick=True)
    text = detail.clock_estimate.text()
    assert f"floorplanned <b>{quick.floorplanned_mhz:.0f} MHz</b>" in text and quick.floorplanned_reason in text
    assert f"plain build <b>{quick.unfloorplanned_mhz:.0f} MHz</b>" in text and quick.unfloorplanned_reason in text
    assert "no floorplan solved" in text and floorplan.plan is None
    gops = selection.report["throughput_gops"]
    assert f"({gops * quick.floorplanned_mhz / 300:,.1f} GOP/s)" in text

    panel.colours.setCurrentIndex(2)  # colour by SLR: the floorplan is solved in the background
    assert panel.view.colour_mode == "SLR"
    qtbot.waitUntil(lambda: floorplan.plan is not None and floorplan.is_current(), timeout=300000)
    assert floorplan.computed_in not in (None, os.getpid())  # the floorplan process, not the window's
    plan = floorplan.plan
    solved = estimate_clock(selection.descriptor, selection.full_values(), selection.device, plan=plan)
    assert f"floorplanned <b>{solved.floorplanned_mhz:.0f} MHz</b>" in detail.clock_estimate.text()
    assert "floorplan solved" in detail.clock_estimate.text()
    boxes = [i for i in panel.view.scene().items() if i.data(KIND_ROLE) in ("pe", "io", "drain")]
    assert boxes
    for item in boxes:
        node = item.data(MODULE_ROLE)
        expected = theme.SLR_COLOURS[plan.slr_of[node] % len(theme.SLR_COLOURS)]
        assert item.brush().color().name() == expected.lower()
    legend = panel.view.legend.text()
    for slr in range(len(plan.used)):
        resource, share = max(plan.utilisation(slr).items(), key=lambda kv: kv[1])
        assert f"SLR{slr}: {resource} {share:.0%}" in legend
    for b in plan.boundaries:
        if b.fifos:
            assert f"SLR{b.below}-{b.below + 1}: {b.wires:,} / {b.capacity:,} wires" in legend

    panel.colours.setCurrentIndex(1)  # by array: no more solving for later selections
    assert not floorplan.floorplan_wanted


def test_a_selection_made_while_a_floorplan_is_solved_gets_its_own(views, qtbot, settle):
    selection, panel, detail = views
    floorplan = panel.floorplan
    panel.colours.setCurrentIndex(2)  # a solve starts for the configuration shown
    assert floorplan.busy
    selection.select("i-j__i-j.k", {**VALUES, "i_t2": 4})  # another one meanwhile: the first is abandoned
    settle(selection)
    qtbot.waitUntil(lambda: floorplan.plan is not None and floorplan.is_current(), timeout=300000)
    assert floorplan.current_key()[1] == tuple(sorted(selection.full_values().items()))
    assert "floorplan solved" in detail.clock_estimate.text()
