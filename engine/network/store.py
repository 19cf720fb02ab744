"""NetworkStore: network runs <-> SQLite rows, in the runs database `systolic search` uses.

Tables (beside engine/search/store.py's, whose schema is created first so the file stays a run
database): `network_runs` (one row per run: kernel text, workload, device, method, budget per pair,
seed, status), `network_pairs` (one row per finished (layer, design) search) and `network_single`
(one row per design optimised as the single array). A result is one transaction written as it
arrives, so a run killed at any point keeps every finished pair and `--resume` computes the others.
A pair is stored once: its (run, layer, design) key is the primary key.
"""
from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Self

from engine.errors import EngineError
from engine.network.single_array import SingleArrayResult
from engine.network.task import PairResult
from engine.search.progress import Candidate
from engine.search.store import RunStore, default_database_path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS network_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL, kernel_path TEXT NOT NULL,
    kernel_text TEXT NOT NULL, defines TEXT NOT NULL, network TEXT NOT NULL, workload TEXT NOT NULL,
    device TEXT NOT NULL, method TEXT NOT NULL, seconds REAL, samples INTEGER, seed INTEGER NOT NULL,
    options TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS network_pairs (
    run_id INTEGER NOT NULL REFERENCES network_runs(id) ON DELETE CASCADE, layer TEXT NOT NULL,
    design TEXT NOT NULL, params TEXT, latency REAL, dsp REAL, bram18k REAL, gops REAL,
    samples INTEGER NOT NULL, seconds REAL NOT NULL, notes TEXT NOT NULL, error TEXT,
    PRIMARY KEY (run_id, layer, design));
CREATE TABLE IF NOT EXISTS network_single (
    run_id INTEGER NOT NULL REFERENCES network_runs(id) ON DELETE CASCADE, design TEXT NOT NULL,
    params TEXT, network_latency REAL, layer_latency TEXT NOT NULL, dsp REAL, bram18k REAL,
    samples INTEGER NOT NULL, seconds REAL NOT NULL, exact_check REAL, notes TEXT NOT NULL,
    PRIMARY KEY (run_id, design));
"""
STATUSES = ("running", "finished", "interrupted")


@dataclass(frozen=True)
class NetworkRun:
    id: int
    created: str
    kernel_path: str
    kernel_text: str
    defines: list[str]
    network: str
    workload: list[dict]  # [{"name", "tags", "sizes"}] in network order
    device: str
    method: str
    seconds: float | None
    samples: int | None
    seed: int
    options: dict
    status: str


def _number(value):
    return value.item() if hasattr(value, "item") else value


class NetworkStore:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path).expanduser() if path is not None else default_database_path()
        RunStore(self.path).close()  # the run database's own schema first (and its checks)
        try:
            self._conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            self._conn.execute("PRAGMA foreign_keys = ON")
            with self._transaction() as db:
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    db.execute(statement)
        except sqlite3.Error as error:
            raise EngineError(f"cannot use run database {self.path}: {error}") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _transaction(self):
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
        except sqlite3.Error as error:
            raise EngineError(f"cannot use run database {self.path}: {error}") from None

    # -- writing -------------------------------------------------------------------------------
    def create(self, *, kernel_path: str, kernel_text: str, defines: list[str], network: str, workload: list[dict],
               device: str, method: str, seconds: float | None, samples: int | None, seed: int,
               options: dict) -> int:
        created = datetime.now().astimezone().isoformat(timespec="seconds")
        with self._transaction() as db:
            return db.execute(
                "INSERT INTO network_runs (created, kernel_path, kernel_text, defines, network, workload, device, "
                "method, seconds, samples, seed, options, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (created, kernel_path, kernel_text, json.dumps(defines), network, json.dumps(workload), device,
                 method, seconds, samples, seed, json.dumps(options), "running")).lastrowid

    def add_pair(self, run_id: int, result: PairResult) -> None:
        b = result.best
        best = (None,) * 5 if b is None else (json.dumps({k: int(v) for k, v in b.params.items()}),
                                              float(b.latency_cycles), float(b.dsp), float(b.bram18k),
                                              float(b.throughput_gops))
        with self._transaction() as db:
            db.execute("INSERT INTO network_pairs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                       (run_id, result.layer, result.design, *best, int(result.samples), float(result.seconds),
                        json.dumps(list(result.notes)), result.error))

    def add_single(self, run_id: int, result: SingleArrayResult) -> None:
        r = result
        with self._transaction() as db:
            db.execute("INSERT INTO network_single VALUES (?,?,?,?,?,?,?,?,?,?,?)", (
                run_id, r.design, None if r.params is None else json.dumps({k: int(v) for k, v in r.params.items()}),
                _number(r.network_latency_cycles), json.dumps(r.layer_latency_cycles), _number(r.dsp),
                _number(r.bram18k), int(r.samples), float(r.seconds), _number(r.exact_check),
                json.dumps(list(r.notes))))

    def set_status(self, run_id: int, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        with self._transaction() as db:
            db.execute("UPDATE network_runs SET status = ? WHERE id = ?", (status, run_id))

    # -- reading -------------------------------------------------------------------------------
    def load(self, run_id: int) -> NetworkRun:
        row = self._conn.execute("SELECT * FROM network_runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise EngineError(f"no stored network run {run_id} in {self.path} (see `systolic network --list`)")
        return NetworkRun(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], json.loads(row[6]), row[7],
                          row[8], row[9], row[10], row[11], json.loads(row[12]), row[13])

    def runs(self) -> list[tuple[int, str, str, str, str, int, int]]:
        """(id, created, network, method, status, pairs stored, layers) of every network run, newest first."""
        return [(r[0], r[1], r[2], r[3], r[4], r[5], len(json.loads(r[6]))) for r in self._conn.execute(
            "SELECT r.id, r.created, r.network, r.method, r.status, "
            "(SELECT COUNT(*) FROM network_pairs p WHERE p.run_id = r.id), r.workload "
            "FROM network_runs r ORDER BY r.id DESC")]

    def pairs(self, run_id: int) -> list[PairResult]:
        results = []
        for layer, design, params, latency, dsp, bram, gops, samples, seconds, notes, error in self._conn.execute(
                "SELECT layer, design, params, latency, dsp, bram18k, gops, samples, seconds, notes, error "
                "FROM network_pairs WHERE run_id = ?", (run_id,)):
            best = None if params is None else Candidate(json.loads(params), latency, dsp, bram, gops)
            results.append(PairResult(layer, design, best, samples, seconds, tuple(json.loads(notes)), error))
        return results

    def singles(self, run_id: int) -> list[SingleArrayResult]:
        return [SingleArrayResult(r[0], None if r[1] is None else json.loads(r[1]), r[2], json.loads(r[3]), r[4], r[5],
                                  r[6], r[7], r[8], tuple(json.loads(r[9]))) for r in self._conn.execute(
            "SELECT design, params, network_latency, layer_latency, dsp, bram18k, samples, seconds, exact_check, "
            "notes FROM network_single WHERE run_id = ?", (run_id,))]
