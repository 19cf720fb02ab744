"""The Network tab: a workload run on the window's kernel as a network job on a local Dask cluster, off
the GUI thread, its per-layer answers filling in as pairs finish; a click on a layer hands its sizes,
best design and configuration to the window, which compiles the kernel at those sizes and selects it."""
from __future__ import annotations

from PySide6.QtCore import QTimer, Qt

from app.models.network_session import NetworkSession
from app.views.qt_network import QtNetwork
from engine.network.designs import network_designs
from engine.network.workload import load_network

WORKLOAD = "name,i,j,k\nsquare,32,32,32\nwide,64,32,16\n"


def test_a_network_runs_off_the_gui_thread_and_fills_in_live(qtbot, tmp_path, bundled):
    kernel = bundled("mm")
    workload = tmp_path / "two.csv"
    workload.write_text(WORKLOAD)
    session = NetworkSession()
    view = QtNetwork(session, lambda: kernel)
    qtbot.addWidget(view)
    assert not view.run_button.isEnabled()
    assert view.open_network(workload)
    assert view.model.rowCount() == 2 and view.run_button.isEnabled()
    designs = tuple(network_designs(kernel, load_network(workload)).ids[:3])

    updates, ticks = [], []
    session.updated.connect(updates.append)
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(session.running))
    timer.start(20)
    try:
        view.start(seconds=None, samples=200, workers=1, designs=designs, single_designs=1)
        assert session.running and view.stop_button.isEnabled() and not view.run_button.isEnabled()
        qtbot.waitUntil(lambda: not session.running, timeout=240000)
    finally:
        timer.stop()
    assert session.error == ""
    final = session.update
    assert final.status == "finished" and final.done == final.total == 6
    # the event loop kept turning while the job ran (compiling, starting the cluster, searching)
    assert sum(ticks) >= 20
    # answers arrived while pairs were still running, not only at the end
    assert any(u.answers is not None and u.done < u.total for u in updates)

    for row in range(2):
        best = view.model.data(view.model.index(row, 2))
        assert best in designs
        assert float(view.model.data(view.model.index(row, 3))) > 0
        assert view.model.data(view.model.index(row, 4)).endswith("%")
    assert "single array" in view.summary.text() and "best single dataflow" in view.summary.text()

    rect = view.table.visualRect(view.model.index(1, 0))
    with qtbot.waitSignal(view.layerChosen) as chosen:
        qtbot.mouseClick(view.table.viewport(), Qt.LeftButton, pos=rect.center())
    sizes, design, params = chosen.args
    assert sizes == {"I": 64, "J": 32, "K": 16}
    assert design == final.answers.layers[1].best_design
    assert params == final.best_params["wide"] and params
    assert len(view.bars.bars) == 3 and view.bars.best == design


def test_a_workload_that_does_not_parse_is_one_line(qtbot, tmp_path, bundled):
    session = NetworkSession()
    view = QtNetwork(session, lambda: bundled("mm"))
    qtbot.addWidget(view)
    bad = tmp_path / "bad.json"
    bad.write_text('{"workloads": [{"name": "x", "params": {"i": 0, "j": 4, "k": 4}}]}')
    with qtbot.waitSignal(view.messageShown) as shown:
        assert not view.open_network(bad)
    assert "bad.json" in shown.args[0] and "\n" not in shown.args[0]
    assert session.network is None and not view.run_button.isEnabled()


def test_the_window_opens_a_network_and_a_chosen_layer_selects_its_sizes_and_design(make_window, small_mm,
                                                                                     compiled, settle, tmp_path):
    window = make_window(small_mm, background=False)
    compiled(window)
    assert "Open network..." in [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    workload = tmp_path / "two.csv"
    workload.write_text(WORKLOAD)
    window.open_network(workload)
    assert window.views.currentWidget().widget() is window.network_view  # the tab's scroll area
    assert window.network_view.model.rowCount() == 2
    design = window.tree_model.design_ids()[1]
    params = {p.name: p.lower for p in window.session.space.design(design).params if p.tunable}
    window.network_view.layerChosen.emit({"I": 64, "J": 32, "K": 16}, design, params)
    compiled(window)
    settle(window.selection, 120000)
    assert window.session.sizes() == {"I": 64, "J": 32, "K": 16}
    assert window.selection.design.id == design
    assert all(window.selection.values[k] == v for k, v in params.items())


def test_a_workload_that_does_not_fit_the_window_s_kernel_is_refused_before_running(make_window, small_mm,
                                                                                     compiled, tmp_path):
    window = make_window(small_mm, background=False)
    compiled(window)
    workload = tmp_path / "cnn.csv"
    workload.write_text("name,o,h,w,i,p,q\nconv1,16,16,16,16,3,3\n")  # a CNN layer, the kernel is MM
    view = window.network_view
    window.open_network(workload)
    assert not view.refusal.isHidden()
    assert "no size for J, K" in view.refusal.text() and "layer conv1" in view.refusal.text()
    messages = []
    view.messageShown.connect(messages.append)
    view.run_button.click()
    assert messages == [view.refusal.text()] and not window.network.running and window.network.update is None
    fitting = tmp_path / "mm.csv"
    fitting.write_text(WORKLOAD)
    window.open_network(fitting)
    assert view.refusal.isHidden() and view.refusal.text() == ""
