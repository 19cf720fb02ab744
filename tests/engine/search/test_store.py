"""RunStore: runs go into SQLite and come back as the same dataclasses."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from engine.errors import EngineError
from engine.search.progress import Candidate, DesignResult, ExplorationResult, TracePoint
from engine.search.store import SCHEMA_VERSION, RunStore, default_database_path


@pytest.fixture(autouse=True)
def _no_user_database(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_DB", str(tmp_path / "default" / "runs.sqlite"))


def make_result(kernel="mm", seed=3, latency=1200.5) -> ExplorationResult:
    fast = Candidate({"k_t1": 8, "i_t1": 64, "j_t1": 32}, latency, 512.0, 96.0, 41.25)
    pareto = (fast, Candidate({"i_t1": 32, "j_t1": 32, "k_t1": 8}, 2400.0, 256.0, 48.0, 20.5))
    found = DesignResult("i-j__i-j.k", "evolution", 640, 2.5, fast,
                         (TracePoint(64, 0.1, 5000.0), TracePoint(128, 0.4, latency)),
                         pareto, ("MP seed: SCIP timed out, continuing unseeded",), "budget")
    empty = DesignResult("i__i.j-k", "evolution", 64, 0.25, None, (TracePoint(64, 0.2, None),),
                         (), (), "exhausted")
    return ExplorationResult(kernel, "evolution", seed, (found, empty))


def save(store, result=None, **overrides):
    fields = {"kernel_path": "resources/kernels/mm.c", "kernel_text": "/* mm */\n", "sizes": {"I": 64, "J": 64},
              "device": "u250", "method": "evolution", "seed": 3, "budget": {"seconds": 10.0, "samples": None},
              "result": result or make_result(), "options": {"batch": 64}}
    fields.update(overrides)
    return store.save(**fields)


def test_round_trip_gives_back_equal_dataclasses(tmp_path):
    result = make_result()
    with RunStore(tmp_path / "nested" / "runs.sqlite") as store:
        run_id = save(store, result)
    with RunStore(tmp_path / "nested" / "runs.sqlite") as store:  # reopened from disk
        stored = store.load(run_id)
    assert stored.result == result
    assert stored.result.designs[1].best is None
    assert list(stored.result.designs[0].best.params) == ["k_t1", "i_t1", "j_t1"]  # order kept for display
    assert isinstance(stored.result.designs[0].trace, tuple) and isinstance(stored.result.designs[0].pareto, tuple)
    assert (stored.id, stored.kernel_path, stored.kernel_text) == (run_id, "resources/kernels/mm.c", "/* mm */\n")
    assert stored.sizes == {"I": 64, "J": 64} and stored.device == "u250"
    assert (stored.method, stored.seed, stored.status) == ("evolution", 3, "finished")
    assert stored.budget == {"seconds": 10.0, "samples": None} and stored.options == {"batch": 64}
    assert "T" in stored.created


def test_designs_and_traces_live_in_their_own_tables(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run_id = save(store)
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    assert db.execute("SELECT design, best_latency FROM designs WHERE run_id = ? ORDER BY position",
                      (run_id,)).fetchall() == [("i-j__i-j.k", 1200.5), ("i__i.j-k", None)]
    assert db.execute("SELECT samples, best_latency FROM trace WHERE run_id = ? AND position = 0 ORDER BY step",
                      (run_id,)).fetchall() == [(64, 5000.0), (128, 1200.5)]
    db.close()


def test_list_runs_is_newest_first_with_the_best_design(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert store.list_runs() == []
        first = save(store, make_result(latency=900.0))
        second = save(store, make_result(kernel="cnn", seed=7), device="u280", status="interrupted")
        empty = save(store, ExplorationResult("ttm", "random", 0, ()))
        runs = store.list_runs()
    assert [r.id for r in runs] == [empty, second, first]
    newest, middle, oldest = runs
    assert (newest.designs, newest.best_design, newest.best_latency, newest.best_throughput) == (0, None, None, None)
    assert (middle.kernel, middle.device, middle.seed, middle.status) == ("cnn", "u280", 3, "interrupted")
    assert (oldest.designs, oldest.best_design, oldest.best_latency, oldest.best_throughput) == \
        (2, "i-j__i-j.k", 900.0, 41.25)
    assert oldest.budget == {"seconds": 10.0, "samples": None} and oldest.method == "evolution"


def test_top_k_orders_designs_by_latency_and_skips_infeasible_ones(tmp_path):
    a = Candidate({"x": 1}, 300.0, 1.0, 2.0, 3.0)
    b = Candidate({"x": 2}, 100.0, 4.0, 5.0, 6.0)
    result = ExplorationResult("mm", "random", 0, (
        DesignResult("a", "random", 1, 0.1, a, ()), DesignResult("none", "random", 1, 0.1, None, ()),
        DesignResult("b", "random", 1, 0.1, b, ())))
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = save(store, result)
        assert store.top_k(run_id) == [("b", b)]
        assert store.top_k(run_id, 5) == [("b", b), ("a", a)]


def test_update_replaces_results_and_status(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = save(store, ExplorationResult("mm", "evolution", 3, ()), status="running")
        assert store.list_runs()[0].status == "running"
        store.update(run_id, result=make_result(), status="interrupted")
        stored = store.load(run_id)
        assert stored.status == "interrupted" and stored.result == make_result()
        store.update(run_id, result=make_result(latency=10.0), status="finished")
        assert store.load(run_id).result == make_result(latency=10.0)
        assert store.list_runs()[0].best_latency == 10.0
        with pytest.raises(ValueError, match="status"):
            store.update(run_id, result=make_result(), status="done")


def test_delete_removes_the_run_and_its_rows(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        keep, gone = save(store), save(store)
        store.delete(gone)
        assert [r.id for r in store.list_runs()] == [keep]
        with pytest.raises(EngineError, match=f"no stored run {gone} in "):
            store.load(gone)
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM designs WHERE run_id = ?", (gone,)).fetchone() == (0,)
    assert db.execute("SELECT COUNT(*) FROM trace WHERE run_id = ?", (gone,)).fetchone() == (0,)
    db.close()


def test_unknown_run_id_is_an_engine_error_naming_the_database(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        for call in (lambda: store.load(7), lambda: store.top_k(7), lambda: store.delete(7),
                     lambda: store.update(7, result=make_result(), status="finished")):
            with pytest.raises(EngineError) as info:
                call()
            assert str(info.value) == f"no stored run 7 in {path}"


def test_failed_write_leaves_nothing_behind(tmp_path):
    bad = ExplorationResult("mm", "evolution", 3, (make_result().designs[0], "not a design result"))
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(AttributeError):
            save(store, bad)
        assert store.list_runs() == []


@pytest.mark.parametrize("content", [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 200])
def test_corrupt_file_is_a_one_line_engine_error_naming_it(tmp_path, content):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(content)
    with pytest.raises(EngineError) as info:
        RunStore(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message


def test_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.commit()
    db.close()
    with pytest.raises(EngineError, match="not a Systolic Studio run database"):
        RunStore(path)


def test_default_path_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_DB", str(tmp_path / "mine.sqlite"))
    assert default_database_path() == tmp_path / "mine.sqlite"
    with RunStore() as store:
        assert store.path == tmp_path / "mine.sqlite"
    assert (tmp_path / "mine.sqlite").exists()
    monkeypatch.delenv("SYSTOLIC_STUDIO_DB")
    path = default_database_path()  # only computed, never created here
    assert path.name == "runs.sqlite" and "systolic-studio" in str(path.parent)


def begin(store, **overrides):
    fields = {"kernel_path": "mm.c", "kernel_text": "/* mm */\n", "sizes": {"I": 64}, "device": "u250",
              "method": "evolution", "seed": 3, "budget": {"seconds": 10.0, "samples": None}, "kernel": "mm"}
    fields.update(overrides)
    return store.begin(**fields)


def test_a_run_stored_as_it_goes(tmp_path):
    """begin -> running row before any result; put_design replaces one design's row; finish sets the status."""
    result = make_result()
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = begin(store)
        [summary] = store.list_runs()
        assert (summary.status, summary.designs) == ("running", 0)
        partial = DesignResult("i-j__i-j.k", "evolution", 64, 0.1, None, (), (), (), "running")
        store.put_design(run_id, 0, partial)
        assert store.load(run_id).result.designs == (partial,)
        store.put_design(run_id, 0, result.designs[0])  # the next checkpoint replaces it
        store.put_design(run_id, 1, result.designs[1])
        assert store.load(run_id).result.designs == result.designs
        store.finish(run_id, "interrupted")
        stored = store.load(run_id)
    assert stored.status == "interrupted" and stored.result == result


def test_a_running_run_whose_process_is_gone_reads_as_incomplete(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run_id = begin(store)
        store.put_design(run_id, 0, make_result().designs[0])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET pid = ? WHERE id = ?", (dead.pid, run_id))
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.list_runs()[0].status == "incomplete"
        stored = store.load(run_id)
    assert stored.status == "incomplete" and stored.result.designs == make_result().designs[:1]


def test_a_version_1_database_is_upgraded_in_place(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run_id = save(store)
    db = sqlite3.connect(path)  # back to the version 1 layout: no pid, host, updated
    for column in ("pid", "host", "updated"):
        db.execute(f"ALTER TABLE runs DROP COLUMN {column}")
    db.execute("UPDATE schema_version SET version = 1")
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.load(run_id).result == make_result()
        begin(store)
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    db.close()


def test_a_read_only_database_reads_but_refuses_a_new_run_up_front(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run_id = save(store)
    path.chmod(0o444)
    try:
        with RunStore(path) as store:
            assert [r.id for r in store.list_runs()] == [run_id]
            if os.geteuid() == 0:
                pytest.skip("root writes read-only files")
            with pytest.raises(EngineError, match="readonly"):
                begin(store)
    finally:
        path.chmod(0o644)


def test_a_damaged_row_is_listed_as_damaged_and_the_others_still_read(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        good, bad = save(store), save(store)
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET budget = '{not json' WHERE id = ?", (bad,))
    db.execute("UPDATE designs SET pareto = '[1, 2' WHERE run_id = ?", (bad,))
    db.commit()
    db.close()
    with RunStore(path) as store:
        runs = {r.id: r for r in store.list_runs()}
        assert runs[good].status == "finished" and runs[bad].status == "damaged"
        assert "budget is not JSON" in runs[bad].problem
        assert store.load(good).result == make_result()
        with pytest.raises(EngineError) as info:
            store.load(bad)
    assert str(info.value).startswith(f"run {bad} in {path} is damaged") and "\n" not in str(info.value)


def test_a_locked_database_is_an_error_naming_the_lock(tmp_path):
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with RunStore(path, timeout=0.1) as store:
            with pytest.raises(EngineError, match="database is locked"):
                begin(store)
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_run_id_sqlite_cannot_hold_is_simply_not_there(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        for run_id in (10**23, -1, 0):
            with pytest.raises(EngineError, match=f"no stored run {run_id} in "):
                store.load(run_id)
            with pytest.raises(EngineError, match=f"no stored run {run_id} in "):
                store.top_k(run_id)


CERTIFICATE = {"design": "i-j__i-j.k", "params": {"i_t1": 4}, "latency_cycles": 1200.5, "lower_bound_cycles": 1190.0,
               "gap": 1200.5 / 1190.0 - 1, "proven": True, "boxes_explored": 10, "boxes_pruned": 4, "seconds": 0.5,
               "target_gap": 0.01, "fits": True, "tightest": None, "improved": False, "status": "within 0.88%"}


def test_certificates_are_stored_per_run_and_design_and_replaced(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = save(store)
        store.put_certificate(run_id, CERTIFICATE)
        store.put_certificate(run_id, CERTIFICATE | {"lower_bound_cycles": 1195.0})
        assert store.certificates(run_id) == {"i-j__i-j.k": CERTIFICATE | {"lower_bound_cycles": 1195.0}}
        with pytest.raises(EngineError, match="no stored run 99"):
            store.put_certificate(99, CERTIFICATE)
        store.delete(run_id)
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    assert db.execute("SELECT COUNT(*) FROM certificates").fetchone() == (0,)  # gone with its run
    db.close()


def test_a_version_2_database_gets_the_certificates_table_in_place(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run_id = save(store)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE certificates")
    db.execute("UPDATE schema_version SET version = 2")
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.load(run_id).result == make_result()
        store.put_certificate(run_id, CERTIFICATE)
        assert list(store.certificates(run_id)) == ["i-j__i-j.k"]
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)] == [(3,)]
    db.close()
