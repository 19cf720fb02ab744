"""Issue 29's Must-show, driven through the window on a 32^3 matrix multiply: a compile error and its
fix, a seeded search on a sample budget, a design picked in the tree, a proof, the proof's
configuration loaded, two configurations compared and the shown one exported; at each step every
panel (tree, detail, bottleneck, topology, proof, compare, export) shows the numbers of the one
(design, configuration) the window has selected."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QItemSelectionModel

from app.models.compare_session import METRIC_ROWS


def tree_gops(window, design: str) -> str:
    return window.tree_model.index_of(design).siblingAtColumn(1).data()


def check_panels_agree(window) -> dict:
    """Every panel shows the selection's report; returns it."""
    s = window.selection
    report = s.report
    assert report is not None and not s.busy, s.error
    gops, cycles = report["throughput_gops"], report["latency_cycles"]
    assert window.detail.title.text().startswith(s.design.id)
    assert window.detail.throughput.text().split(" GOP/s")[0] == f"{gops:,.1f}"
    assert window.detail.latency.text().startswith(f"{cycles:,.0f} cycles")
    assert window.bottleneck.headline.text().startswith(f"{cycles:,.0f} cycles")
    assert window.tree.currentIndex().siblingAtColumn(0).data().startswith(s.design.id)
    best = window.tree_model.best.get(s.design.id)
    if best is not None and best.params == s.values:  # the tree's best is the configuration shown
        assert tree_gops(window, s.design.id) == f"{gops:,.1f}"
        assert best.latency_cycles == pytest.approx(cycles, rel=1e-9)
    graph = s.topology()
    assert window.topology.scene_items_by_kind()["pe"] == sum(1 for n in graph.nodes if n[0] == "PE") > 0
    return report


def search(window, qtbot, designs) -> None:
    chosen = window.tree.selectionModel()
    chosen.clearSelection()
    for design in designs:
        chosen.select(window.tree_model.index_of(design), QItemSelectionModel.Select | QItemSelectionModel.Rows)
    window.search_panel.scope.setCurrentIndex(1)
    with qtbot.waitSignal(window.search.stateChanged, timeout=180000,
                          check_params_cb=lambda *_: not window.search.running and window.search.result is not None):
        window.search_panel.start_button.click()
    assert window.search.status == "finished", window.search.message


def test_compile_error_fix_search_select_prove_load_compare_export(make_window, qtbot, compiled, settle, tiny_mm,
                                                                    tmp_path):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    ids = window.tree_model.design_ids()
    good = window.session.text
    status = window.compile_status

    # a compile error: the line is marked, the status says so, the previous designs stay (greyed)
    lines = good.split("\n")
    target = next(n for n, line in enumerate(lines) if "C[i][j] +=" in line)
    window.kernel_panel.editor.setPlainText("\n".join(lines[:target] + ["  C[i][j] += expf(A[i][k]);"]
                                                      + lines[target + 1:]))
    window.kernel_panel.compile()
    compiled(window)
    assert window.session.space is None and window.kernel_panel.editor.error_line == target + 1
    assert status.text().startswith("does not compile: ") and not window.tree.isEnabled()
    # fixed: the same designs, the status tells the truth
    window.kernel_panel.editor.setPlainText(good)
    window.kernel_panel.compile()
    compiled(window)
    settle(window.selection)
    assert window.kernel_panel.editor.error_line is None
    assert status.text() == f"tiny: {len(ids)} legal systolic arrays" and window.tree_model.design_ids() == ids
    check_panels_agree(window)

    # a seeded search on a sample budget: its best is selected and every panel shows its numbers
    panel = window.search_panel
    panel.budget_kind.setCurrentIndex(1)
    panel.samples.setValue(200)
    panel.seed.setText("7")
    searched = ids[1:3]
    search(window, qtbot, searched)
    settle(window.selection)
    winner = window.tree_model.best_design()
    assert winner in searched and window.selection.design.id == winner
    assert window.selection.values == window.tree_model.best[winner].params
    report = check_panels_agree(window)
    assert tree_gops(window, winner) == f"{report['throughput_gops']:,.1f}"
    assert status.text() == f"tiny: {len(ids)} legal systolic arrays"  # no message left over from the error
    searched_best = (winner, dict(window.selection.values), report["throughput_gops"])

    # another design picked in the tree: shown with its defaults (it was not searched)
    picked = next(d for d in ids if d not in searched)
    window.tree.setCurrentIndex(window.tree_model.index_of(picked))
    settle(window.selection)
    assert window.selection.design.id == picked and picked not in window.tree_model.best
    defaults = check_panels_agree(window)

    # the proof starts from the configuration shown and finds a better one; loading it updates every panel
    proof = window.proof
    proof.seconds.setValue(30)
    proof.prove()
    qtbot.waitUntil(lambda: not proof.busy, timeout=300000)
    certificate = proof.certificates[picked]
    assert certificate["params"] and proof.loadable() == certificate["params"]
    assert not proof.load_button.isHidden()
    proof.load_button.click()
    settle(window.selection)
    qtbot.waitUntil(lambda: picked in window.tree_model.best, timeout=300000)
    loaded = check_panels_agree(window)
    assert window.selection.values == certificate["params"]
    assert loaded["latency_cycles"] == certificate["latency_cycles"] <= defaults["latency_cycles"]
    assert tree_gops(window, picked) == f"{loaded['throughput_gops']:,.1f}"  # the tree adopted it
    assert proof.load_button.isHidden() and picked in proof.text.text()

    # compare: the proof's configuration and the search's best side by side, each column its report's numbers
    window.compare_view.pin_selected()
    window.focus.load(*searched_best[:2])
    settle(window.selection)
    check_panels_agree(window)
    window.compare_view.pin_selected()
    assert [p.design.id for p in window.compare.pins] == [picked, winner]
    rows = {label: values for label, values, _ in window.compare.table()}
    throughput = next(label for label, _, _ in METRIC_ROWS if label.startswith("throughput"))
    assert rows[throughput] == pytest.approx([loaded["throughput_gops"], searched_best[2]], rel=1e-12)
    table = window.compare_view.table
    assert [table.horizontalHeaderItem(c).text() for c in range(2)] == [picked, winner]

    # export the configuration shown: the project holds that design and configuration
    dialog = window.show_export()
    assert winner in dialog.summary.text() and f"{searched_best[2]:,.1f} GOP/s" in dialog.summary.text()
    dialog.folder.setText(str(tmp_path / "export"))
    with qtbot.waitSignal(dialog.exported, timeout=300000):
        dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=300000)
    design_json = json.loads((dialog.project_dir / "design.json").read_text())
    text = json.dumps(design_json)
    assert winner in text
    assert all(design_json["values"][k] == v for k, v in searched_best[1].items())
    assert str(tiny_mm) in text and str(window.session.work_file) not in text  # the user's file, not the copy
    assert str(tiny_mm) in (dialog.project_dir / "README.md").read_text()
    dialog.close()
    check_panels_agree(window)
