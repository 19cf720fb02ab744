"""The proof panel: Prove certifies the selected design's best in a background worker, the result is
shown beside the throughput and in the tree's proof column (which sorts by the proven bound), and it
is stored with the session's latest run, from where a new panel shows it again."""
from __future__ import annotations

import threading

import pytest

import app.views.qt_proof as qt_proof
from app.models.design_selection import DesignSelection
from app.models.design_tree_model import SORT_ROLE, DesignTreeModel, proof_text
from app.models.search_session import SearchSession
from app.views.qt_proof import QtProof
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS
from engine.search.progress import ExplorationResult
from engine.search.store import RunStore

DESIGN = "i-j__i-j.k"


@pytest.fixture(scope="module")
def mm():
    return compile_kernel(KERNELS / "mm.c", defines={"I": 32, "J": 32, "K": 32})


@pytest.fixture
def panel(qtbot, mm, run_database):
    with RunStore(run_database) as store:
        run_id = store.save(kernel_path="mm.c", kernel_text="", sizes={}, device="u250", method="random", seed=0,
                            budget={}, result=ExplorationResult("mm", "random", 0, ()))
    selection, tree, search = DesignSelection(), DesignTreeModel(), SearchSession()
    selection.set_space(mm)
    tree.set_space(mm)
    search.run_ids = [run_id]
    view = QtProof(selection, tree, search)
    qtbot.addWidget(view)
    yield selection, tree, search, view, run_id
    view.shutdown()
    selection.shutdown()


def test_prove_runs_off_the_gui_thread_and_shows_stores_and_sorts(panel, qtbot, settle, monkeypatch):
    selection, tree, search, view, run_id = panel
    threads = []
    real = qt_proof.certify
    monkeypatch.setattr(qt_proof, "certify", lambda *a, **k: threads.append(threading.current_thread()) or real(*a, **k))
    selection.select(DESIGN)
    settle(selection)
    assert "not proven yet" in view.text.text()
    view.seconds.setValue(30)
    view.prove()
    assert view.busy and not view.button.isEnabled()
    qtbot.waitUntil(lambda: not view.busy, timeout=60000)
    assert threads and threads[0] is not threading.main_thread()
    text = view.text.text()
    assert text.startswith(f"{DESIGN}: ") and ("optimal" in text or "within" in text) and "GOP/s" in text
    certificate = view.certificates[DESIGN]
    assert certificate["proven"] and certificate["gap"] <= 0.01 + 1e-12
    item = tree.itemFromIndex(tree.index_of(DESIGN).siblingAtColumn(5))
    assert item.text() == proof_text(certificate)
    # the proof column sorts by the proven bound: the most throughput any configuration can reach
    assert item.data(SORT_ROLE) == pytest.approx(certificate["throughput_constant"] / certificate["lower_bound_cycles"])
    with RunStore(search.database) as store:
        assert store.certificates(run_id)[DESIGN]["lower_bound_cycles"] == certificate["lower_bound_cycles"]
    # a new panel (a reopened window) shows the stored certificate on selection
    other_tree = DesignTreeModel()
    other_tree.set_space(selection.space)
    other = QtProof(selection, other_tree, search)
    qtbot.addWidget(other)
    selection.select(DESIGN)
    settle(selection)
    assert other.certificates[DESIGN] == certificate and certificate["status"] in other.text.text()
    assert other_tree.itemFromIndex(other_tree.index_of(DESIGN).siblingAtColumn(5)).text() == item.text()


def test_proof_text_says_optimal_open_or_none_fits():
    assert proof_text({"gap": 0.0, "proven": True}) == "optimal"
    assert proof_text({"gap": 0.031, "proven": False}) == "<= 3.1% off (open)"
    assert proof_text({"gap": 0.004, "proven": True}) == "<= 0.4% off"
    assert proof_text({"fits": False, "proven": True, "gap": None}) == "none fits (proven)"
