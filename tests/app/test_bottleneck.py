"""The bottleneck panel's suggestions are checked against the device's full budget before they are
shown (an over-budget step is never the one offered and is named with the resources it breaks), a
click applies the offered step, and packing factors (which the window does not edit) are never offered."""
from __future__ import annotations

from PySide6.QtCore import Qt

from app.models.design_selection import DesignSelection
from app.models.selection_evaluation import module_levers
from app.views.qt_bottleneck import QtBottleneck, best_lever, lever_text
from engine.compiler.design_space import compile_kernel
from engine.models.device import RESOURCE_NAMES, load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

DESIGN = "i-j__i-j.k"
VALUES = {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 1, "k_t2": 2}


def test_levers_are_checked_against_the_full_budget():
    space = compile_kernel(KERNELS / "mm.c", defines={"I": 16, "J": 16, "K": 16})
    design = space.design(DESIGN)
    u250 = load_device("u250")
    dsp = evaluate_configuration(PerformanceModel(space, design, u250), VALUES)["dsp"]
    # a device whose budget this configuration's DSPs just fit: every step that adds PEs breaks it
    tight = load_device("u250", usable_ratio=dsp * 1.05 / u250.resources["DSP"])
    model = PerformanceModel(space, design, tight)
    report = evaluate_configuration(model, VALUES)
    levers = module_levers(model, report)
    tunable = {p.name for p in design.params if p.tunable}
    flat = [lv for lvs in levers.values() for lv in lvs]
    assert flat and {lv.param for lv in flat} <= tunable  # no packing factor offered
    assert any(lv.over for lv in flat)
    for lv in flat:
        if not lv.legal:
            continue
        changed = evaluate_configuration(model, {**VALUES, lv.param: lv.new})
        broken = {r for r in RESOURCE_NAMES if changed[r.lower()] > tight.budget(r)}
        assert {o.split()[0] for o in lv.over} == broken and lv.fits == changed["fits"]
    for module, lvs in levers.items():
        cycles = report["modules"][module]
        best = best_lever(lvs, cycles)
        assert best is None or best.fits
        over = [lv for lv in lvs if lv.legal and lv.over and lv.cycles < cycles
                and (best is None or lv.cycles < best.cycles)]
        if over:  # a better step beyond the budget is named with what it breaks
            assert "needs" in lever_text(lvs, cycles) and "of the budget" in lever_text(lvs, cycles)


def test_a_click_applies_the_offered_step(qtbot, settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 16, "J": 16, "K": 16}))
    selection.select(DESIGN, VALUES)
    settle(selection)
    view = QtBottleneck(selection)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    steps = view.steps()
    k, step = next((k, s) for k, s in enumerate(steps) if s is not None)
    assert all(s is None or s.fits for s in steps)
    assert "click to apply" in view.rows()[k][2]
    qtbot.mouseClick(view.modules, Qt.LeftButton, pos=view.modules.lever_rect(k).center().toPoint())
    qtbot.waitUntil(lambda: selection.values[step.param] == step.new and not selection.busy, timeout=300000)
    assert selection.report is not None and selection.report["params"][step.param] == step.new
    assert selection.report["fits"]
    selection.shutdown()
