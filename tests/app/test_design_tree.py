"""The design tree: kernel -> dataflow -> permutation class -> design, best-known numbers per row
(group rows show their best design's), numeric sorting, and selection reported by design id."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.models.design_tree_model import DESIGN_ROLE, SORT_ROLE, DesignTreeModel
from app.views.qt_design_tree import QtDesignTree
from engine.compiler.design_space import compile_kernel
from engine.search.progress import Candidate


@pytest.fixture(scope="module")
def cnn(bundled_module):
    return compile_kernel(bundled_module("cnn"), defines={"O": 8, "I": 8, "H": 8, "W": 8, "P": 3, "Q": 3})


@pytest.fixture(scope="module")
def bundled_module():
    from engine.resources import KERNELS
    return lambda name: KERNELS / f"{name}.c"


def _leaves(model, parent, depth=0):
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        if model.rowCount(index):
            yield from _leaves(model, index, depth + 1)
        else:
            yield depth, index


def test_tree_levels_follow_dataflow_and_permutation(qtbot, cnn):
    model = DesignTreeModel()
    model.set_space(cnn)
    assert model.rowCount() == 1
    leaves = list(_leaves(model, model.index(0, 0)))
    assert [index.data(DESIGN_ROLE) for _, index in leaves] == [d.id for d in cnn.designs]
    assert {depth for depth, _ in leaves} == {2}  # root -> dataflow -> permutation -> design
    for _, index in leaves:
        design = cnn.design(index.data(DESIGN_ROLE))
        assert index.parent().data() == f"permutation {design.permutation}"
        assert index.parent().parent().data() == f"dataflow {design.dataflow}"
    flows = {str(d.dataflow) for d in cnn.designs}
    assert model.rowCount(model.index(0, 0)) == len(flows)


def test_best_numbers_propagate_and_sort_numerically(qtbot, cnn):
    model = DesignTreeModel()
    view = QtDesignTree(model)
    qtbot.addWidget(view)
    model.set_space(cnn)
    ids = [d.id for d in cnn.designs]
    gops = {ids[0]: 9.5, ids[1]: 120.0, ids[-1]: 33.0}
    for design, value in gops.items():
        model.set_best(design, Candidate({}, 1e6 / value, value * 10, value, value))
    model.set_best(ids[1], Candidate({}, 1e9, 1, 1, 1.0))  # worse: ignored
    row = model.index_of(ids[1])
    assert row.siblingAtColumn(1).data() == "120.0" and row.siblingAtColumn(2).data() == "1,200"
    root = model.index(0, 0)
    assert root.siblingAtColumn(1).data() == "120.0"
    assert model.best_design() == ids[1]
    with qtbot.waitSignal(view.designSelected) as blocker:
        view.select_design(ids[-1])
    assert blocker.args == [ids[-1]]
    model.sort(1, Qt.DescendingOrder)  # by number, not by text: 120 sorts before 33 and 9.5
    root = model.index(0, 0)
    values = [model.index(r, 1, root).data(SORT_ROLE) for r in range(model.rowCount(root))]
    assert values == sorted(values, reverse=True) and values[0] == 120.0
