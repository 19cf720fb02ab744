"""`systolic runs`: the table of stored runs, one run's designs, and the JSON a script reads."""
from __future__ import annotations

import argparse
import json

import pytest

from engine.cli import runs
from engine.errors import EngineError
from engine.search.progress import Candidate, DesignResult, ExplorationResult, TracePoint
from engine.search.store import RunStore


@pytest.fixture(autouse=True)
def _no_user_database(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_DB", str(tmp_path / "default" / "runs.sqlite"))


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="systolic runs")
    runs.add_arguments(parser)
    return runs.run(parser.parse_args(list(argv)))


@pytest.fixture
def database(tmp_path):
    best = Candidate({"i_t1": 64, "j_t1": 32}, 1200.0, 512.0, 96.0, 41.25)
    result = ExplorationResult("mm", "evolution", 3, (
        DesignResult("i-j__i-j.k", "evolution", 640, 2.5, best, (TracePoint(64, 0.1, 1200.0),), (best,),
                     ("MP seed: SCIP timed out",)),
        DesignResult("i__i.j-k", "evolution", 64, 0.25, None, (), (), (), "exhausted")))
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        first = store.save(kernel_path="mm.c", kernel_text="", sizes={"I": 64}, device="u250", method="evolution",
                           seed=3, budget={"seconds": 10}, result=result)
        second = store.save(kernel_path="cnn.c", kernel_text="", sizes={}, device="u250", method="random",
                            seed=1, budget={"samples": 500}, result=ExplorationResult("cnn", "random", 1, ()),
                            status="interrupted")
    return path, first, second


def test_table_lists_runs_newest_first(database, capsys):
    path, first, second = database
    assert run_cli("--db", str(path)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "created", "kernel", "method", "seed", "budget", "status", "designs",
                                "best", "design", "best", "GOP/s"]
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 4
    assert lines[2].split()[0] == str(second) and "cnn" in lines[2] and "500 samples" in lines[2]
    assert "interrupted" in lines[2] and lines[2].rstrip().endswith("-")
    row = lines[3].split()
    assert row[0] == str(first) and "10s" in row and "finished" in row
    assert row[-3:] == ["2", "i-j__i-j.k", "41.25"]


def test_show_prints_one_row_per_design(database, capsys):
    path, first, _ = database
    assert run_cli("--db", str(path), "--show", str(first)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"run {first}: mm (mm.c, I=64) on u250, evolution seed 3, budget 10s, finished")
    assert lines[1].split() == ["design", "samples", "seconds", "best", "latency", "GOP/s", "DSP", "BRAM", "params"]
    assert lines[3].split() == ["*", "i-j__i-j.k", "640", "2.5", "1200", "41.25", "512", "96", "i_t1=64", "j_t1=32"]
    assert lines[4].split()[:7] == ["i__i.j-k", "64", "0.2", "-", "-", "-", "-"]
    assert "no feasible configuration" in lines[4]
    assert lines[5] == "i-j__i-j.k: MP seed: SCIP timed out"


def test_json_lists_runs_and_shows_a_whole_run(database, capsys):
    path, first, second = database
    assert run_cli("--db", str(path), "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed] == [second, first]
    assert listed[1]["best_design"] == "i-j__i-j.k" and listed[1]["designs"] == 2
    assert listed[1]["budget"] == {"seconds": 10}
    assert run_cli("--db", str(path), "--show", str(first), "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "finished" and shown["sizes"] == {"I": 64}
    designs = shown["result"]["designs"]
    assert designs[0]["best"]["params"] == {"i_t1": 64, "j_t1": 32} and designs[1]["best"] is None
    assert designs[0]["trace"] == [{"samples": 64, "elapsed": 0.1, "best_latency": 1200.0}]


def test_empty_or_missing_database_prints_a_friendly_line(tmp_path, capsys):
    missing = tmp_path / "missing.sqlite"
    assert run_cli("--db", str(missing)) == 0
    assert capsys.readouterr().out.strip() == f"no stored runs in {missing}"
    assert not missing.exists()
    RunStore(tmp_path / "empty.sqlite").close()
    assert run_cli("--db", str(tmp_path / "empty.sqlite")) == 0
    assert capsys.readouterr().out.strip() == f"no stored runs in {tmp_path / 'empty.sqlite'}"
    assert run_cli("--db", str(tmp_path / "empty.sqlite"), "--json") == 0
    assert json.loads(capsys.readouterr().out) == []


def test_default_database_comes_from_the_environment(tmp_path, capsys):
    assert run_cli() == 0
    assert capsys.readouterr().out.strip() == f"no stored runs in {tmp_path / 'default' / 'runs.sqlite'}"


def test_errors_are_engine_errors(database, tmp_path):
    path, _, _ = database
    with pytest.raises(EngineError, match=f"no stored run 99 in {path}"):
        run_cli("--db", str(path), "--show", "99")
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_text("not sqlite at all\n" * 50)
    with pytest.raises(EngineError, match="corrupt.sqlite"):
        run_cli("--db", str(corrupt))


def test_a_damaged_row_is_listed_as_damaged_and_show_is_one_line(database, capsys):
    import sqlite3
    path, first, second = database
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET sizes = 'garbage', budget = x'ff00' WHERE id = ?", (first,))
    db.execute("UPDATE designs SET best_latency = 'fast' WHERE run_id = ?", (first,))
    db.commit()
    db.close()
    assert run_cli("--db", str(path)) == 0
    out = capsys.readouterr().out
    assert "damaged" in out and f"run {first} is damaged and cannot be read" in out and "cnn" in out
    assert run_cli("--db", str(path), "--json") == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed[first]["status"] == "damaged" and listed[second]["status"] == "interrupted"
    with pytest.raises(EngineError, match=f"run {first} in .* is damaged and cannot be read"):
        run_cli("--db", str(path), "--show", str(first))
