"""`network --resume` keeps the original command's options (-o, --single-designs, --single-seconds,
--arrays, --export-arrays, stored with the run) unless given again, reads them as untrusted, and may
write into the run's own output folder."""
from __future__ import annotations

import argparse
import json
import sqlite3

import pytest

from engine.cli import network as cli
from engine.cli.main import main
from engine.network.store import NetworkStore
from engine.resources import KERNELS

SAVED = {"out": "results/first", "single_designs": 1, "single_seconds": 2.5, "arrays": [2, 3], "export_arrays": True}


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_a_new_run_gets_the_defaults():
    args = parsed("k.c", "n.json")
    cli._take_options(args, {})
    assert (args.out, args.single_designs, args.single_seconds, args.arrays, args.export_arrays) == \
        (None, 3, None, None, False)


def test_a_resumed_run_takes_the_stored_options():
    args = parsed("--resume", "4")
    cli._take_options(args, SAVED)
    assert (str(args.out), args.single_designs, args.single_seconds, args.arrays, args.export_arrays) == \
        ("results/first", 1, 2.5, (2, 3), True)


def test_options_given_again_win():
    args = parsed("--resume", "4", "-o", "elsewhere", "--single-designs", "0", "--arrays", "4")
    cli._take_options(args, SAVED)
    assert (str(args.out), args.single_designs, args.arrays, args.export_arrays) == ("elsewhere", 0, (4,), True)


@pytest.mark.parametrize("damage, reason", [
    ({"single_designs": "x"}, "single_designs is 'x', not an integer in 0..1000"),
    ({"arrays": [2, 10**9]}, "arrays is 1000000000, not an integer in 1..256"),
    ({"arrays": "2"}, "arrays is '2', not a list"),
    ({"single_seconds": -1}, "single_seconds is -1, not a finite number of 0 or more"),
    ({"out": ["a"]}, "out is ['a'], not text"),
])
def test_damaged_stored_options_are_one_line(tmp_path, capsys, damage, reason):
    db = tmp_path / "runs.sqlite"
    with NetworkStore(db) as store:
        run_id = store.create(kernel_path="k.c", kernel_text="int x;", defines=[], network="n",
                              workload=[{"name": "l1", "tags": [], "sizes": {"I": 4}}], device="u250",
                              method="random", seconds=1.0, samples=None, seed=0,
                              options={"designs": [], "cli": {**SAVED, **damage}})
        store.set_status(run_id, "interrupted")
    assert main(["network", "--resume", str(run_id), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"network run {run_id} in {db} is damaged: stored options: {reason}" in err, err


NETWORK = '''{"name": "tiny", "workloads": [
  {"name": "a", "params": {"i": 3, "o": 8, "r": 8, "c": 8, "p": 3, "q": 3}},
  {"name": "b", "params": {"i": 8, "o": 16, "r": 4, "c": 4, "p": 3, "q": 3}}]}'''


@pytest.mark.slow  # two local Dask clusters: ~40 s on this machine
def test_resume_writes_into_the_original_output_folder(tmp_path, capsys):
    workload = tmp_path / "tiny.json"
    workload.write_text(NETWORK)
    db, out = tmp_path / "runs.sqlite", tmp_path / "first"
    assert main(["network", str(KERNELS / "cnn.c"), str(workload), "--samples", "30", "--method", "random",
                 "--design", "o-h__o-h-w.i-p-q", "--single-designs", "0", "--workers", "1", "--db", str(db),
                 "-o", str(out), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    with sqlite3.connect(db) as conn:  # as if stopped before its last pair
        conn.execute("DELETE FROM network_pairs WHERE run_id = ? AND layer = 'b'", (run_id,))
        conn.execute("UPDATE network_runs SET status = 'interrupted' WHERE id = ?", (run_id,))
    (out / "mine.txt").write_text("kept")
    assert main(["network", "--resume", str(run_id), "--db", str(db), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert f"files: {out / 'layers.csv'}" in printed and (out / "mine.txt").read_text() == "kept"
    with NetworkStore(db) as store:
        assert len(store.pairs(run_id)) == 2 and store.load(run_id).status == "finished"
