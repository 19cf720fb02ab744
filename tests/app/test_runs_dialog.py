"""The runs dialog: each stored run in this computer's local time, with its kernel's sizes, method,
seed and budget (sizes read by engine/search/run_sizes.py without loading the runs' traces)."""
from __future__ import annotations

import time

import pytest

from app.views.qt_runs_dialog import COLUMNS, QtRunsDialog, local_time
from engine.search.progress import ExplorationResult
from engine.search.run_sizes import run_sizes
from engine.search.store import RunStore


@pytest.fixture
def berlin(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_runs_show_local_time_sizes_seed_and_method(qtbot, run_database, berlin):
    with RunStore(run_database) as store:
        first = store.save(kernel_path="mm.c", kernel_text="", sizes={"I": 64, "J": 32, "K": 16}, device="u250",
                           method="evolution", seed=12345, budget={"seconds": None, "samples": 600},
                           result=ExplorationResult("mm", "evolution", 12345, ()))
        second = store.save(kernel_path="cnn.c", kernel_text="", sizes={"O": 8}, device="u250", method="random",
                            seed=7, budget={"seconds": 2.5, "samples": None},
                            result=ExplorationResult("cnn", "random", 7, ()))
        runs = store.list_runs()
    assert run_sizes(run_database) == {first: {"I": 64, "J": 32, "K": 16}, second: {"O": 8}}
    dialog = QtRunsDialog(runs, run_sizes(run_database))
    qtbot.addWidget(dialog)
    rows = [{name: dialog.table.item(row, col).text() for col, name in enumerate(COLUMNS)}
            for row in range(dialog.table.rowCount())]
    assert [r["run"] for r in rows] == [str(second), str(first)]  # newest first
    assert rows[1]["sizes"] == "I=64 J=32 K=16" and rows[1]["seed"] == "12345" and rows[1]["method"] == "evolution"
    assert rows[1]["budget"] == "600 samples" and rows[0]["budget"] == "2.5 s" and rows[0]["sizes"] == "O=8"
    assert rows[0]["started"] == local_time(runs[0].created) and "T" not in rows[0]["started"]


def test_a_stored_time_is_shown_in_the_local_zone(berlin):
    assert local_time("2026-11-27T21:00:00+00:00") == "2026-11-27 22:00:00"  # CET, UTC+1
    assert local_time("2026-07-01T12:00:00") == "2026-07-01 14:00:00"  # no offset: UTC; CEST, UTC+2
    assert local_time("not a time") == "not a time"


def test_an_unreadable_database_has_no_sizes(tmp_path):
    (tmp_path / "junk.sqlite").write_bytes(b"not sqlite at all" * 100)
    assert run_sizes(tmp_path / "junk.sqlite") == {} and run_sizes(tmp_path / "missing.sqlite") == {}


def _run(store, method: str, seed: int, gops: dict) -> int:
    from engine.search.progress import Candidate, DesignResult

    designs = tuple(DesignResult(d, method, 10, 1.0, Candidate({"i_t1": 4}, 1000.0 / g, 1.0, 1.0, g), ())
                    for d, g in gops.items())
    return store.save(kernel_path="mm.c", kernel_text="", sizes={"I": 64}, device="u250", method=method, seed=seed,
                      budget={"seconds": None, "samples": 100}, result=ExplorationResult("mm", method, seed, designs))


def test_runs_are_compared_side_by_side_and_deleted_after_asking(qtbot, run_database):
    with RunStore(run_database) as store:
        first = _run(store, "random", 1, {"i__i-j.k": 10.0, "j__i-j.k": 30.0})
        second = _run(store, "hybrid", 2, {"i__i-j.k": 20.0})
        runs = store.list_runs()
    asked = []
    dialog = QtRunsDialog(runs, run_sizes(run_database), database=run_database,
                          confirm=lambda text: asked.append(text) or len(asked) > 1)
    qtbot.addWidget(dialog)
    dialog.table.selectAll()
    assert dialog.compare_selected()
    table = dialog.comparison
    assert [table.verticalHeaderItem(r).text() for r in range(table.rowCount())] == ["j__i-j.k", "i__i-j.k"]
    assert table.horizontalHeaderItem(0).text().startswith(f"run {second}: hybrid, seed 2")
    assert [[table.item(r, c).text() for c in range(2)] for r in range(2)] == [["-", "30.0"], ["20.0", "10.0"]]
    assert table.item(1, 0).font().bold() and not table.item(1, 1).font().bold()
    dialog.table.selectRow(1)  # the older run: one row selected is no comparison
    assert not dialog.compare_selected() and "two or more" in dialog.message.text()
    assert not dialog.delete_selected() and f"Delete run {first}" in asked[0]  # the first answer is no
    with RunStore(run_database) as store:
        assert len(store.list_runs()) == 2
    assert dialog.delete_selected()  # yes
    with RunStore(run_database) as store:
        assert [r.id for r in store.list_runs()] == [second]
    assert dialog.table.rowCount() == 1 and dialog.table.item(0, 0).text() == str(second)
