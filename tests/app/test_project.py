"""Projects: save, close, reopen and find everything as it was (kernel text, sizes, type, device,
selection, stored runs replotted); corrupt or unreadable files open with a message and change
nothing; files are written atomically; recent files and the window layout go to QSettings."""
from __future__ import annotations

import json

import pytest

from app.project import FORMAT, Project, ProjectError, load_project, save_project
from engine.search.progress import (
    Candidate,
    DesignResult,
    ExplorationResult,
    TracePoint,
)
from engine.search.store import RunStore


def _stored_run(database, kernel_text) -> int:
    best = Candidate({"i_t1": 8, "j_t1": 8, "k_t1": 8, "i_t2": 1, "j_t2": 1, "k_t2": 8}, 5000.0, 64.0, 12.0, 42.0)
    result = ExplorationResult("mm", "evolution", 0, (
        DesignResult("i-j__i-j.k", "evolution", 100, 1.0, best, (TracePoint(10, 0.2, 9000.0), TracePoint(90, 0.8, 5000.0)),
                     pareto=(best,)),))
    with RunStore(database) as store:
        return store.save(kernel_path="mm.c", kernel_text=kernel_text, sizes={"I": 40, "J": 32, "K": 48}, device="u250",
                          method="evolution", seed=0, budget={"seconds": 1.0, "samples": None}, result=result)


def test_save_close_reopen_restores_everything(make_window, tmp_path, run_database, qtbot, compiled, settle):
    window = make_window(background=False)
    compiled(window)
    panel = window.kernel_panel
    text = panel.editor.toPlainText().replace("Default sizes are the papers'", "Edited in a test:")
    panel.editor.setPlainText(text)
    for name, value in (("I", 40), ("J", 32), ("K", 48)):
        row = next(r for r in range(panel.sizes.rowCount()) if panel.sizes.item(r, 0).text() == name)
        panel.sizes.item(row, 1).setText(str(value))
    panel.data_type.setCurrentText("int16_t")
    panel.data_type.activated.emit(panel.data_type.currentIndex())
    compiled(window)  # the kernel compiles off the GUI thread
    window.search_panel.method.setCurrentText("annealing")
    window.search_panel.seconds.setValue(7.5)
    window.search_panel.set_budget(None, 5000, 2**40)  # a sample budget and a seed: a search to repeat
    window.tree.select_design("i-j__i-j.k")
    window.detail.editors["i_t1"].setValue(10)
    settle(window.selection)
    run_id = _stored_run(run_database, text)
    window.search.run_ids.append(run_id)
    path = tmp_path / "demo.ssproj"
    assert window.save(path)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".demo")] == []  # no temp file left
    saved = window.project()
    window.close()

    again = make_window(background=False)
    compiled(again)
    assert again.open_project(path)
    compiled(again)
    settle(again.selection)
    assert again.project() == saved and (saved.seconds, saved.samples, saved.seed) == (7.5, 5000, 2**40)
    assert again.kernel_panel.editor.toPlainText() == text
    assert again.session.space.kernel.sizes == {"I": 40, "J": 32, "K": 48}
    assert {a.dtype for a in again.session.space.kernel.arrays.values()} == {"int16"}
    assert again.selection.design.id == "i-j__i-j.k" and again.selection.values["i_t1"] == 10
    assert again.detail.editors["i_t1"].value() == 10
    assert again.search.status == "replayed"
    assert again.search_panel.overall.getData()[1].tolist() == [42.0 * 5000 / 9000, 42.0]
    assert again.tree_model.best["i-j__i-j.k"].throughput_gops == 42.0
    assert again.recent_files()[0] == str(path)
    assert again.settings.value("geometry") is not None


@pytest.mark.parametrize("content", [b"", b"{not json", b"\xff\xfe\x00garbage", b"[1, 2]",
                                     json.dumps({"format": FORMAT, "version": 99}).encode(),
                                     json.dumps({"format": FORMAT, "version": 1, "kernel_path": "x.c"}).encode(),
                                     json.dumps({"format": FORMAT, "version": 1, "kernel_path": "x.c",
                                                 "kernel_text": "", "sizes": {"I": "big"}}).encode()])
def test_a_corrupt_project_changes_nothing_and_says_why(make_window, tmp_path, content, compiled):
    window = make_window(background=False)
    compiled(window)
    before = window.project()
    path = tmp_path / "bad.ssproj"
    path.write_bytes(content)
    assert not window.open_project(path)
    assert window.project() == before
    assert str(path) in window.last_message
    assert window.recent_files() == []


def test_an_unreadable_project_says_why(make_window, tmp_path):
    window = make_window(background=False)
    assert not window.open_project(tmp_path / "missing.ssproj")
    assert "cannot read project" in window.last_message


def test_project_files_round_trip_and_refuse_bad_fields(tmp_path):
    project = Project("k.c", "text", {"N": 4}, "int8_t", "u250", "random", 3.0, "d", {"a": 1}, None, [1, 2])
    save_project(project, tmp_path / "p.ssproj")
    assert load_project(tmp_path / "p.ssproj") == project
    data = json.loads((tmp_path / "p.ssproj").read_text())
    data["runs"] = ["one"]
    (tmp_path / "q.ssproj").write_text(json.dumps(data))
    with pytest.raises(ProjectError, match="runs must be a list of run ids"):
        load_project(tmp_path / "q.ssproj")
    with pytest.raises(ProjectError, match="cannot write project"):
        save_project(project, tmp_path / "missing-folder" / "p.ssproj")


def _project(**changes) -> Project:
    return Project(**{"kernel_path": "/tmp/mm.c", "kernel_text": "/* mm */\n", **changes})


def test_saving_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real" / "demo.ssproj"
    target.parent.mkdir()
    save_project(_project(), target)
    link = tmp_path / "link.ssproj"
    link.symlink_to(target)
    chain = tmp_path / "chain.ssproj"
    chain.symlink_to(link)
    save_project(_project(device="u280"), chain)
    assert chain.is_symlink() and link.is_symlink() and not target.is_symlink()
    assert load_project(target).device == "u280"
    assert sorted(p.name for p in target.parent.iterdir()) == ["demo.ssproj"]  # no temp file left


def test_a_new_project_file_respects_the_umask_and_a_replaced_one_keeps_its_mode(tmp_path):
    import os
    old = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.ssproj"
        save_project(_project(), fresh)
        assert fresh.stat().st_mode & 0o777 == 0o640
        kept = tmp_path / "kept.ssproj"
        kept.write_text("{}")
        kept.chmod(0o664)
        save_project(_project(), kept)
        assert kept.stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(old)


@pytest.mark.parametrize("changes, phrase", [
    ({"kernel_path": ""}, "does not name a kernel file"), ({"kernel_path": "/"}, "does not name a kernel file"),
    ({"sizes": {"I": 10**23}}, "sizes must be in 0..2^31-1"), ({"seconds": float("nan")}, "positive, finite"),
    ({"seconds": float("inf")}, "positive, finite"), ({"values": {"i_t1": -4}}, "values must be in"),
    ({"runs": [0]}, "runs must be a list of run ids"), ({"samples": 0}, "samples must be a positive integer"),
    ({"seed": -1}, "seed must be an integer in 0..2^63-1"), ({"seed": 2**63}, "seed must be an integer"),
])
def test_bad_fields_are_refused_with_one_line(tmp_path, changes, phrase):
    path = tmp_path / "bad.ssproj"
    data = {**_project().to_json(), **changes}
    path.write_text(json.dumps(data).replace("NaN", "NaN").replace("Infinity", "Infinity"))
    with pytest.raises(ProjectError) as info:
        load_project(path)
    assert phrase in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("content, phrase", [
    (b"\xff\xfe\x00garbage", "not UTF-8"), (b'{"format": ', ":1:12: not a project file"),
    (b"[" * 100000 + b"]" * 100000, "not a project file"),
])
def test_corrupt_files_are_one_line_errors(tmp_path, content, phrase):
    path = tmp_path / "corrupt.ssproj"
    path.write_bytes(content)
    with pytest.raises(ProjectError) as info:
        load_project(path)
    assert phrase in str(info.value) and "\n" not in str(info.value)
