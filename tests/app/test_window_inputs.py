"""The window never crashes on input (issue 19, item 6): a kernel of 10^9 iterations per loop opens
without walking its sizes (default values, the spin boxes' legal values); a missing kernel, a folder
or a `.h` folder / dangling `.h` symlink beside the kernel, an unknown device in a project and a
damaged stored run are a message with the previous state kept; `systolic-studio --screenshot`
exits 2 with the reason when the project or kernel cannot be opened; the window's search stores its
run as it goes (a "running" row with designs before the end), and a database that cannot be written
is an error before the search starts."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from app.models.design_selection import DesignSelection, default_values
from app.models.legal_values import legal_values
from app.project import FORMAT, VERSION
from app.views.qt_design_detail import QtDesignDetail
from engine.compiler.design_space import compile_kernel
from engine.models.constraints import violations
from engine.resources import KERNELS
from engine.search.store import RunStore

from kernel_snippets import VALID_MM

HUGE = 10**9


@pytest.fixture(scope="module")
def huge_mm():
    return compile_kernel(KERNELS / "mm.c", defines={"I": HUGE, "J": 8, "K": 8})


def test_a_huge_size_is_never_walked(huge_mm, qtbot, settle):
    """Before: default_values and legal_values walked range(1..10^9) on the GUI thread (98 s)."""
    for design in huge_mm.designs:
        assert violations(design, default_values(design)) == []
    design = huge_mm.design("i-j__i-j.k")
    values = default_values(design)
    legal = legal_values(design, "i_t1", {**values, "i_t2": 4})
    assert isinstance(legal, range) and len(legal) == HUGE // 4 and legal[-1] == HUGE and legal[0] == 4
    assert legal_values(design, "i_t2", {**values, "i_t1": 2 * 3**10}) == \
        [d for d in range(1, 2 * 3**10 + 1) if 2 * 3**10 % d == 0]
    selection = DesignSelection()
    view = QtDesignDetail(selection)
    qtbot.addWidget(view)
    selection.set_space(huge_mm)
    try:
        selection.select(design.id)
        settle(selection, timeout=300000)
        t1 = view.editors["i_t1"]
        t1.setValue(HUGE - 8)  # 10^9 PEs typed by hand: the report, and no graph filling the memory
        settle(selection, timeout=300000)
        assert selection.report is not None and selection.topology() is None
        assert "too many to draw" in selection.topology_note
        t1.stepBy(3)  # the legal values (multiples of i_t2 = 1) by bisection in a range of 10^9
        assert t1.value() == HUGE - 5
        t1.stepBy(100)  # stops at the last one
        assert t1.value() == HUGE
        t1.stepBy(-2)
        assert t1.value() == HUGE - 2
        settle(selection, timeout=300000)
    finally:
        selection.shutdown()


def _kernel_folder(tmp_path):
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "mm.c").write_text(VALID_MM)
    (folder / "folder.h").mkdir()
    (folder / "gone.h").symlink_to(tmp_path / "nowhere.h")
    (folder / "real.h").write_text("#define UNUSED 1\n")
    return folder


def test_a_h_folder_or_dangling_h_symlink_beside_the_kernel_is_skipped(make_window, tmp_path, compiled):
    folder = _kernel_folder(tmp_path)
    window = make_window(folder / "mm.c", background=False)
    compiled(window)
    assert window.session.space is not None and window.session.error == ""
    assert (window.session.work_file.parent / "real.h").is_file()


@pytest.mark.parametrize("target, phrase", [("missing.c", "No such file"), (".", "it is a folder")])
def test_a_kernel_that_cannot_be_read_keeps_the_previous_one(make_window, tmp_path, compiled, target, phrase):
    window = make_window(background=False)
    compiled(window)
    before = (window.session.path, window.session.text, window.tree_model.design_ids())
    window.open_kernel(tmp_path / target)
    assert phrase in window.last_message and str(tmp_path) in window.last_message
    assert (window.session.path, window.session.text, window.tree_model.design_ids()) == before


def _project(tmp_path, **fields):
    data = {"format": FORMAT, "version": VERSION, "kernel_path": str(tmp_path / "mm.c"), "kernel_text": VALID_MM,
            "sizes": {}, "values": {}, "data_type": None, "device": "u250", "method": "random", "seconds": 2.0,
            "design": None, "database": None, "runs": [], **fields}
    path = tmp_path / "p.ssproj"
    path.write_text(json.dumps(data))
    return path


def test_an_unknown_device_is_a_message_in_the_window_and_changes_nothing(make_window, tmp_path, compiled):
    window = make_window(background=False)
    compiled(window)
    before = window.project()
    assert not window.open_project(_project(tmp_path, device="nowhere-fpga"))
    assert "unknown device 'nowhere-fpga'" in window.last_message
    assert window.project() == before


def test_a_damaged_stored_run_of_a_project_is_a_message(make_window, tmp_path, compiled, run_database):
    with RunStore(run_database) as store:
        run_id = store.begin(kernel_path="mm.c", kernel_text=VALID_MM, sizes={}, device="u250", method="random",
                             seed=0, budget={"seconds": 1.0}, kernel="mm")
        store.finish(run_id, "finished")
    db = sqlite3.connect(run_database)
    db.execute("UPDATE runs SET budget = '{not json' WHERE id = ?", (run_id,))
    db.commit()
    db.close()
    window = make_window(background=False)
    compiled(window)
    assert window.open_project(_project(tmp_path, runs=[run_id]))
    compiled(window)
    assert f"run {run_id}" in window.last_message and "damaged" in window.last_message


def _studio(*args, tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "SYSTOLIC_STUDIO_DB": str(tmp_path / "runs.sqlite")}
    return subprocess.run([sys.executable, "-m", "app", *args], check=False, capture_output=True, text=True,
                          env=env, timeout=400)


@pytest.mark.parametrize("what, phrase", [("missing.c", "No such file or directory"),
                                          ("corrupt.ssproj", "not a project file"),
                                          ("device.ssproj", "unknown device 'nowhere-fpga'")])
def test_screenshot_exits_2_with_the_reason_when_nothing_opens(tmp_path, what, phrase):
    if what == "corrupt.ssproj":
        (tmp_path / what).write_text("{not json")
    elif what == "device.ssproj":
        _project(tmp_path, device="nowhere-fpga").rename(tmp_path / what)
    done = _studio(str(tmp_path / what), "--screenshot", str(tmp_path / "shot.png"), "--search-seconds", "1",
                   tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and phrase in errors[0] and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "shot.png").exists()


def _start_one_design(window, seconds):
    panel = window.search_panel
    panel.method.setCurrentText("random")
    panel.seconds.setValue(seconds)
    window.tree.select_design(window.tree_model.design_ids()[0])
    panel.scope.setCurrentIndex(1)
    panel.start_button.click()


def test_the_window_stores_its_search_as_it_goes(make_window, qtbot, compiled, run_database):
    window = make_window(background=False)
    compiled(window)
    _start_one_design(window, 60.0)
    qtbot.waitUntil(lambda: window.search.worker is not None and window.search.worker.run_id is not None,
                    timeout=300000)
    run_id = window.search.worker.run_id

    def stored_with_samples():
        with RunStore(run_database) as store:
            run = store.load(run_id)
        return run.status == "running" and bool(run.result.designs) and run.result.designs[0].samples > 0

    qtbot.waitUntil(stored_with_samples, timeout=300000)  # checkpoints every 2 s, long before the 60 s end
    assert window.search.running
    window.search_panel.stop_button.click()
    qtbot.waitUntil(lambda: not window.search.running, timeout=300000)
    with RunStore(run_database) as store:
        run = store.load(run_id)
    assert run.status == "interrupted" and window.search.run_ids == [run_id]
    assert run.result.designs[0].samples == window.search.result.designs[0].samples


def test_a_database_that_cannot_be_written_is_an_error_before_the_search(make_window, qtbot, compiled, tmp_path):
    window = make_window(background=False)
    compiled(window)
    (tmp_path / "a folder.sqlite").mkdir()
    window.search.database = str(tmp_path / "a folder.sqlite")
    _start_one_design(window, 60.0)
    qtbot.waitUntil(lambda: not window.search.running, timeout=300000)
    assert window.search.status == "failed" and "not started" in window.search.message
    assert window.search.result.designs == () and window.search.run_ids == []


def test_the_device_bar_s_clock_sets_every_throughput_figure(make_window, tiny_mm, compiled, settle, qtbot):
    """The kernel clock (MHz) of the device bar: the detail, the bottleneck's µs, the tree's search
    results, the plots' roof and the export dialog all at it, as `systolic model --clock` computes."""
    from engine.models.device import load_device
    from engine.models.evaluate import PerformanceModel
    from engine.models.report import evaluate_configuration

    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    design, values = window.selection.design, dict(window.selection.values)
    at_300 = window.selection.report
    assert window.kernel_panel.clock.value() == 300 and at_300["device"]["clock_mhz"] == 300
    window.kernel_panel.clock.setValue(200)
    compiled(window)
    settle(window.selection)
    report = window.selection.report
    assert window.selection.design.id == design.id and window.session.source().clock_mhz == 200
    cli = evaluate_configuration(PerformanceModel(window.selection.space, design, load_device("u250", clock_mhz=200)),
                                 {**values, **{k: v for k, v in report["params"].items() if k not in values}})
    assert report["device"]["clock_mhz"] == 200 and report["throughput_gops"] == pytest.approx(cli["throughput_gops"])
    assert window.detail.throughput.text().startswith(f"{report['throughput_gops']:,.1f} GOP/s")
    assert "at 200 MHz" in window.detail.latency.text() and "at 200 MHz" in window.bottleneck.headline.text()
    dialog = window.show_export()
    assert dialog.clock.value() == 200 and "at 200 MHz" in dialog.summary.text()
    dialog.close()
    window.kernel_panel.clock.setValue(300)  # back to the device's own clock: the same numbers as before
    compiled(window)
    settle(window.selection)
    assert window.session.clock_mhz is None
    assert window.selection.report["throughput_gops"] == pytest.approx(at_300["throughput_gops"])


def test_a_project_keeps_the_device_bar_s_clock_and_a_clock_the_device_refuses_changes_nothing(
        make_window, tiny_mm, compiled, settle, tmp_path):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    window.kernel_panel.clock.setValue(250)
    compiled(window)
    path = tmp_path / "p.ssproj"
    assert window.save(path) and json.loads(path.read_text())["clock_mhz"] == 250
    window.kernel_panel.clock.setValue(300)
    compiled(window)
    assert window.session.clock_mhz is None
    assert window.open_project(path)
    compiled(window)
    settle(window.selection)
    assert window.session.clock_mhz == 250 and window.kernel_panel.clock.value() == 250
    assert window.selection.report["device"]["clock_mhz"] == 250
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "clock_mhz": 5000}))  # above the U250's clock_mhz_max
    assert not window.open_project(path)
    assert "5000 MHz" in window.last_message and window.session.clock_mhz == 250
    path.write_text(json.dumps({**data, "clock_mhz": -1}))
    assert not window.open_project(path) and "clock_mhz must be a positive number" in window.last_message
