"""A network run killed with SIGKILL half-way keeps its finished pairs; --resume computes only the rest."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.network.store import NetworkStore
from engine.resources import KERNELS

ROOT = Path(__file__).resolve().parents[3]
NETWORK = '''{"name": "tiny", "workloads": [
  {"name": "a", "params": {"i": 3, "o": 8, "r": 8, "c": 8, "p": 3, "q": 3}},
  {"name": "b", "params": {"i": 8, "o": 16, "r": 4, "c": 4, "p": 3, "q": 3}},
  {"name": "c", "params": {"i": 8, "o": 8, "r": 8, "c": 8, "p": 1, "q": 1}}]}'''
DESIGNS = ["o-h__o-h-w.i-p-q", "h-i__o-h-w.i-p-q", "o-w__o-h-w.i-p-q"]


def stored_pairs(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT layer, design, params, samples, seconds FROM network_pairs").fetchall()
    except sqlite3.OperationalError:  # the tables are not there yet
        return []


@pytest.mark.slow  # a cluster started twice and a run killed half-way: ~60 s on a loaded 2-core machine
def test_sigkill_then_resume_computes_every_pair_once(tmp_path, capsys):
    workload = tmp_path / "tiny.json"
    workload.write_text(NETWORK)
    db = tmp_path / "runs.sqlite"
    command = [sys.executable, "-m", "engine.cli.main", "network", str(KERNELS / "cnn.c"), str(workload),
               "--seconds", "1", "--workers", "1", "--single-designs", "1", "--db", str(db), "-o", str(tmp_path / "o1")]
    for design in DESIGNS:
        command += ["--design", design]
    process = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while len(stored_pairs(db)) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the run and its local cluster's worker processes
        process.wait()
    before = stored_pairs(db)
    total = 3 * len(DESIGNS)
    assert 3 <= len(before) < total, "the run was not killed half-way"
    with NetworkStore(db) as store:
        row, = store.runs()
        run_id = row.id
        assert row.status == "killed" and row.pairs == len(before)  # its process is gone: not "running"

    assert main(["network", "--resume", str(run_id), "--workers", "1", "--db", str(db), "--single-designs", "1",
                 "-o", str(tmp_path / "o2")]) == 0
    err = capsys.readouterr().err
    assert f"pairs {len(before)}/{total}" in err  # the progress starts from the stored pairs
    after = stored_pairs(db)
    assert len(after) == total and len({(l, d) for l, d, *_ in after}) == total
    assert set(before) <= set(after)  # the pairs finished before the kill were not computed again
    with NetworkStore(db) as store:
        assert store.load(run_id).status == "finished"
        assert len(store.singles(run_id)) == 1
