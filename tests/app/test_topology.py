"""The topology viewer holds one item per PE, I/O module and drain module of the topology graph for
the chosen parameters, a DRAM port per DRAM-facing module and an arrow per FIFO; big arrays are
drawn with less detail; hover text tells kind, buffers and trip counts; the title states the
array's shape, PE count and SIMD lanes."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QWheelEvent

from app.models.design_selection import DesignSelection
from app.views import theme
from app.views.qt_topology import CLEAR_DELAY_MS, KIND_ROLE, LARGE, QtTopology, module_shares
from app.views.topology_layout import CELL, FOLD_AT, layout
from engine.compiler.expressions import evaluate
from engine.compiler.design_space import compile_kernel
from engine.models.sampling import random_configuration
from engine.resources import KERNELS


@pytest.fixture(scope="module")
def spaces():
    return {"mm": compile_kernel(KERNELS / "mm.c", defines={"I": 64, "J": 64, "K": 64}),
            "cnn": compile_kernel(KERNELS / "cnn.c", defines={"O": 8, "I": 8, "H": 8, "W": 8, "P": 3, "Q": 3})}


@pytest.fixture
def view(qtbot):
    selection = DesignSelection()
    topology = QtTopology(selection)
    qtbot.addWidget(topology)
    yield selection, topology
    selection.shutdown()


def _expected(selection):
    graph = selection.topology()
    kinds = Counter(data["kind"] for _, data in graph.nodes(data=True))
    dram = sum(1 for m in selection.descriptor["topology"]["modules"] if m["dram"])
    return kinds, dram, graph.number_of_edges()


@pytest.mark.parametrize("kernel,n", [("mm", 0), ("mm", 5), ("mm", 12), ("mm", 17), ("cnn", 0), ("cnn", 21)])
def test_scene_items_match_the_topology_graph(view, spaces, kernel, n, settle):
    selection, topology = view
    space = spaces[kernel]
    selection.set_space(space)
    design = space.designs[n]
    values = random_configuration(design, np.random.default_rng(n), max_t1={loop: 6 for loop in design.band_loops})
    selection.select(design.id, values)
    settle(selection)
    assert selection.report is not None, selection.error
    kinds, dram, edges = _expected(selection)
    counts = topology.scene_items_by_kind()
    assert counts["pe"] == kinds["pe"] > 0
    assert counts.get("io", 0) == kinds["io"] and counts.get("drain", 0) == kinds["drain"]
    assert counts["dram"] == dram
    assert counts["fifo"] == edges
    items = [i for i in topology.scene().items() if i.data(KIND_ROLE) in ("pe", "io", "drain")]
    assert len(items) == sum(kinds.values())
    io = next(i for i in items if i.data(KIND_ROLE) == "io")
    assert "kind: io" in topology.tooltip(io) and "buffer" in io.toolTip()
    pe = next(i for i in items if i.data(KIND_ROLE) == "pe")
    assert "compute:" in topology.tooltip(pe)  # the PE's phase with its loops' trip counts


def test_changing_a_parameter_redraws_with_the_new_grid(view, spaces, settle):
    selection, topology = view
    space = spaces["mm"]
    selection.set_space(space)
    design = next(d for d in space.designs if len(d.space_loops) == 2)
    selection.select(design.id)
    settle(selection)
    before = topology.scene_items_by_kind()["pe"]
    loop = design.space_loops[0]
    selection.set_value(f"{loop}_t1", str(selection.values[f"{loop}_t1"] * 2))
    settle(selection)
    assert topology.scene_items_by_kind()["pe"] == 2 * before == _expected(selection)[0]["pe"]
    # the title states the array's shape (the descriptor's PE grid at these values), PE count and lanes
    rows, cols = (int(evaluate(e, selection.full_values())) for e in selection.descriptor["topology"]["pe_grid"])
    simd = next((p.name for p in design.params if p.role == "simd"), None)
    lanes = selection.values[simd] if simd else 1
    assert topology.title.text() == (f"{design.id}: {rows} x {cols} = {rows * cols:,} PEs x {lanes} lane"
                                     + ("s" if lanes != 1 else "")) and rows * cols == 2 * before
    drawn = topology.scene_items_by_kind()
    selection.set_value(f"{loop}_t1", "0")  # illegal: the last valid array stays, greyed, the reason beside it
    settle(selection)
    assert topology.scene_items_by_kind() == drawn and not topology.isEnabled()
    assert selection.error and selection.error in topology.legend.text()
    selection.set_value(f"{loop}_t1", str(selection.values[f"{loop}_t1"] // 2 or 1))
    settle(selection)
    assert topology.isEnabled()



def test_selecting_another_design_keeps_the_array_until_it_is_evaluated(view, spaces, qtbot, settle, monkeypatch):
    """The previous array stays while the next design evaluates, and is replaced in one redraw; an
    evaluation slower than CLEAR_DELAY_MS has it taken down meanwhile, "evaluating ..." beside."""
    selection, topology = view
    space = spaces["mm"]
    selection.set_space(space)
    first, second = space.designs[0], space.designs[5]
    selection.select(first.id)
    settle(selection)
    drawn = topology.scene_items_by_kind()
    selection.select(second.id)
    assert selection.busy and topology.scene_items_by_kind() == drawn  # not taken down at the click
    settle(selection)
    kinds, dram, edges = _expected(selection)
    assert topology.scene_items_by_kind()["pe"] == kinds["pe"] and topology.isEnabled()
    # an evaluation that does not come back in time (never sent here): the stale array goes after the delay
    monkeypatch.setattr(selection, "_request", lambda: setattr(selection, "_generation", selection._generation + 1))
    selection.select(first.id)
    assert selection.busy and topology.scene_items_by_kind()["pe"] == kinds["pe"]
    qtbot.waitUntil(lambda: not topology.counts, timeout=CLEAR_DELAY_MS + 5000)
    assert f"evaluating {first.id}" in topology.legend.text()

def test_large_arrays_use_level_of_detail(view, spaces, qtbot, settle):
    selection, topology = view
    space = compile_kernel(KERNELS / "mm.c", defines={"I": 512, "J": 512, "K": 64})
    selection.set_space(space)
    design = space.design("i-j__i-j.k")
    values = {"i_t1": 24, "j_t1": 24, "k_t1": 8, "i_t2": 1, "j_t2": 1, "k_t2": 8}
    selection.select(design.id, values)
    settle(selection)
    kinds, _, edges = _expected(selection)
    assert kinds["pe"] == 576 > LARGE
    counts = topology.scene_items_by_kind()
    assert counts["pe"] == 576 and counts["fifo"] == edges
    bundles = [i for i in topology.scene().items() if i.data(KIND_ROLE) == "fifo-bundle"]
    assert 0 < len(bundles) <= len(space.kernel.arrays)  # PE-to-PE FIFOs as one path per array
    topology.resize(800, 600)
    topology.fitInView(topology.scene().sceneRect(), Qt.KeepAspectRatio)
    topology._update_detail()
    assert all(not label.isVisible() for label in topology.labels)
    for _ in range(25):  # zoom in with the wheel: labels come back
        topology.wheelEvent(QWheelEvent(QPointF(400, 300), QPointF(400, 300), QPoint(0, 0), QPoint(0, 120),
                                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False))
    assert topology.transform().m11() > 0.8
    assert topology.labels and all(label.isVisible() for label in topology.labels)


def _box_rects(topology):
    return [i.sceneBoundingRect() for i in topology.scene().items() if i.data(KIND_ROLE) in ("pe", "io", "drain", "dram")]


def test_a_long_chain_folds_into_serpentine_rows_and_no_label_overlaps(view, settle):
    selection, topology = view
    space = compile_kernel(KERNELS / "mm.c", defines={"I": 256, "J": 64, "K": 64})
    selection.set_space(space)
    design = space.design("i__i-j.k")
    values = {"i_t1": 256, "j_t1": 8, "k_t1": 8, "i_t2": 1, "j_t2": 1, "k_t2": 8}
    selection.select(design.id, values)
    settle(selection)
    assert selection.report is not None, selection.error
    boxes, _ = layout(selection.topology(), selection.descriptor)
    pes = {n[1][0]: boxes[n] for n in boxes if n[0] == "PE"}
    assert len(pes) == 256 > FOLD_AT
    assert topology.title.text() == "i__i-j.k: 256 PEs x 8 lanes"  # i_t1 / i_t2 PEs of k_t2 lanes: one row
    xs, ys = {b.x for b in pes.values()}, {b.y for b in pes.values()}
    assert 4 < len(ys) < len(xs) < 256  # rows, wider than high, not one strip
    for i in range(255):  # neighbours in the chain are neighbours on screen (one cell, or one row down)
        a, b = pes[i], pes[i + 1]
        assert (a.y == b.y and abs(a.x - b.x) == 60.0) or (a.x == b.x and b.y > a.y)
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    assert 0.8 < width / height < 3.0
    _no_diagonal_wires(selection.topology(), boxes)
    for zoom in range(12):  # labels never overlap a box or each other, at any zoom
        topology.scale(1.3, 1.3)
        topology._update_detail()
    labels = [label.sceneBoundingRect() for label in topology.labels]
    assert labels
    rects = _box_rects(topology)
    for n, rect in enumerate(labels):
        assert not any(rect.intersects(other) for other in labels[n + 1:])
        assert not any(rect.intersects(box) for box in rects)


def _no_diagonal_wires(graph, boxes):
    """Every FIFO runs along a row or a column (within half a cell): none crosses the array diagonally."""
    for a, b in graph.edges():
        dx, dy = abs(boxes[a].x - boxes[b].x), abs(boxes[a].y - boxes[b].y)
        assert min(dx, dy) <= CELL / 2, (a, b, dx, dy)


def test_a_thin_2d_array_folds_without_diagonal_wires(view, settle):
    selection, _ = view
    space = compile_kernel(KERNELS / "mm.c", defines={"I": 256, "J": 64, "K": 64})
    selection.set_space(space)
    selection.select("i-j__i-j.k", {"i_t1": 128, "j_t1": 2, "k_t1": 8, "i_t2": 1, "j_t2": 1, "k_t2": 8})
    settle(selection)
    assert selection.report is not None, selection.error
    graph = selection.topology()
    boxes, drams = layout(graph, selection.descriptor)
    ys = {boxes[n].y for n in boxes if n[0] == "PE"}
    assert len(ys) > 2 * 2  # 128 x 2 folded into bands
    _no_diagonal_wires(graph, boxes)
    for name, port in drams.items():  # a DRAM port sits straight out from its module
        first = boxes[next(n for n in graph.nodes if n[0] == name)]
        assert min(abs(port.x - first.x), abs(port.y - first.y)) <= CELL / 2


def test_the_heat_scale_gives_the_bottleneck_its_own_colour():
    def distance(a, b):
        return sum((x - y) ** 2 for x, y in zip(a.getRgb()[:3], b.getRgb()[:3])) ** 0.5

    top = theme.heat_colour(1.0)
    below = [theme.heat_colour(s) for s in np.linspace(0.0, 0.99, 100)]
    assert min(distance(top, c) for c in below) > 120  # nothing under 99% is taken for the bottleneck
    assert distance(theme.heat_colour(0.9), top) > 2 * distance(theme.heat_colour(0.8), theme.heat_colour(0.9))
    luma = [0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF() for c in below]
    assert all(a < b for a, b in zip(luma, luma[1:]))  # a perceptual ramp: brighter as the load grows


def test_modules_are_coloured_by_their_share_of_the_bottleneck(view, spaces, settle):
    selection, topology = view
    space = spaces["mm"]
    selection.set_space(space)
    selection.select(space.designs[0].id)
    settle(selection)
    shares = module_shares(selection.report)
    assert shares[selection.report["bottleneck"]] == 1.0 and all(0 <= v <= 1 for v in shares.values())
    pe = next(i for i in topology.scene().items() if i.data(KIND_ROLE) == "pe")
    assert pe.brush().color() == theme.heat_colour(shares["PE"])
    assert selection.report["bottleneck"] in topology.legend.text()
    topology.set_colour_mode("arrays")
    pe = next(i for i in topology.scene().items() if i.data(KIND_ROLE) == "pe")
    assert pe.brush().color() == QColor(theme.PE_COLOUR)
