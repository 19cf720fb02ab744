"""Loading a configuration from the proof or a plot (DesignFocus.load): the proof's best becomes the
selection and the tree's best of its design, with the same numbers; a configuration the kernel
compiled now makes illegal is refused with the reason, in place, and the selection is kept."""
from __future__ import annotations

import pytest

from app.models.design_focus import DesignFocus
from app.models.design_selection import DesignSelection, default_values
from app.models.design_tree_model import DesignTreeModel
from app.models.search_session import SearchSession
from app.views.qt_proof import QtProof
from engine.compiler.design_space import compile_kernel
from engine.models.constraints import violations
from engine.resources import KERNELS

DESIGN = "i-j__i-j.k"


def _mm(n: int):
    return compile_kernel(KERNELS / "mm.c", defines={"I": n, "J": n, "K": n})


@pytest.fixture
def focus(qtbot):
    selection, tree = DesignSelection(), DesignTreeModel()
    focus = DesignFocus(tree, selection)
    space = _mm(32)
    selection.set_space(space)
    tree.set_space(space)
    yield focus
    selection.shutdown()


def test_the_proof_s_configuration_loads_into_every_panel_and_the_tree(focus, qtbot, settle):
    selection, tree = focus.selection, focus.tree_model
    view = QtProof(selection, tree, SearchSession())
    qtbot.addWidget(view)
    focus.follow_proof(view)
    selection.select(DESIGN)  # the defaults: the proof starts from them and finds better
    settle(selection)
    assert view.load_button.isHidden()
    view.seconds.setValue(30)
    view.prove()
    qtbot.waitUntil(lambda: not view.busy, timeout=300000)
    params = view.certificates[DESIGN]["params"]
    assert view.loadable() == params and not view.load_button.isHidden()
    view.load_button.click()
    settle(selection)
    qtbot.waitUntil(lambda: DESIGN in tree.best, timeout=300000)
    assert selection.design.id == DESIGN and selection.values == params
    assert tree.best[DESIGN].params == params
    assert tree.best[DESIGN].throughput_gops == selection.report["throughput_gops"]
    assert tree.best[DESIGN].latency_cycles == view.certificates[DESIGN]["latency_cycles"]
    assert view.load_button.isHidden() and view.refusal.isHidden()
    view.shutdown()


def test_a_configuration_illegal_after_a_kernel_change_is_refused_and_the_selection_kept(focus, settle):
    selection, tree = focus.selection, focus.tree_model
    old = selection.space.design(DESIGN)
    name = next(p.name for p in old.params if p.tunable and p.upper == 32)
    found = {**default_values(old), name: 32}  # a point of a plot made for the 32^3 kernel
    assert violations(old, found) == []
    smaller = _mm(16)  # the kernel changed
    selection.set_space(smaller)
    tree.set_space(smaller)
    selection.select(DESIGN)
    settle(selection)
    shown, report = dict(selection.values), selection.report
    messages = []
    focus.messageShown.connect(messages.append)
    why = focus.load(DESIGN, found)
    assert why and f"{name}=32 is outside its bounds 1..16" in why and messages == [why]
    assert selection.values == shown and selection.report is report and not selection.busy
    assert "no-such-design" in focus.load("no-such-design", found)
