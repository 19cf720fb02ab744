"""The topology the window draws holds the PEs the array holds (descriptor topology.pe_set): LU's
[k,j] array is the triangle k <= j the export instantiates and the model counts, not its grid, and the
view's title says so; a design whose domain fills its grid keeps the plain shape."""
from __future__ import annotations

import pytest

from app.models.selection_evaluation import SelectionRequest, evaluate_selection
from app.views.topology_layout import pe_extents, shape_text
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.resources import KERNELS


@pytest.fixture(scope="module")
def lu4():
    return compile_kernel(KERNELS / "lu.c", defines={"N": "4"})


def evaluate(space, design_id: str):
    design = space.design(design_id)
    values = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
    return evaluate_selection(SelectionRequest(0, space, design, load_device(), values))


def test_lu_k_j_draws_its_triangle(lu4):
    shown = evaluate(lu4, "k-j__k-j-i")
    pes = sorted(node[1] for node in shown.graph if node[0] == "PE")
    assert pes == sorted((k, j) for k in range(4) for j in range(4) if k <= j)
    assert len(pes) == shown.report["pes"]["count"] == 10
    assert shape_text(pe_extents(shown.graph), 1, len(pes)) == "4 x 4 grid, 10 PEs x 1 lane"


def test_a_full_grid_keeps_its_plain_shape(lu4):
    shown = evaluate(lu4, "j-i__k-j-i")
    pes = [node for node in shown.graph if node[0] == "PE"]
    assert len(pes) == shown.report["pes"]["count"] == 16
    assert shape_text(pe_extents(shown.graph), 1, len(pes)) == "4 x 4 = 16 PEs x 1 lane"
