"""NetworkStore: network runs <-> SQLite rows, in the runs database `systolic search` uses.

Tables (beside engine/search/store.py's, whose schema is created first so the file stays a run
database): `network_runs` (one row per run: kernel text, workload, device, method, budget per pair,
seed, status), `network_pairs` (one row per finished (layer, design) search) and `network_single`
(one row per design optimised as the single array). A result is one transaction written as it
arrives, so a run killed at any point keeps every finished pair and `--resume` computes the others.
A pair is stored once: its (run, layer, design) key is the primary key.

A run's row carries its writer's pid and host and a heartbeat (`updated`, set whenever the run
stores a result), so `runs()` tells a "running" run from a "killed" one (its process gone, or on
another host its heartbeat stale) as well as from an "interrupted" one (stopped and stored). Rows
are untrusted: every column is read through engine/validation.py; a damaged run is listed as
"damaged" with the reason and refused by `load`, and a damaged pair or single-array row is left out
(so `--resume` computes it again and replaces it).
"""
from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple, Self

from engine.errors import EngineError
from engine.network.single_array import SingleArrayResult
from engine.network.task import PairResult
from engine.search.progress import Candidate
from engine.search.store import RunStore, default_database_path, writer_gone
from engine.validation import (StoredRowError, stored_int, stored_number, stored_object, stored_params,
                               stored_text)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS network_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL, kernel_path TEXT NOT NULL,
    kernel_text TEXT NOT NULL, defines TEXT NOT NULL, network TEXT NOT NULL, workload TEXT NOT NULL,
    device TEXT NOT NULL, method TEXT NOT NULL, seconds REAL, samples INTEGER, seed INTEGER NOT NULL,
    options TEXT NOT NULL, status TEXT NOT NULL, pid INTEGER, host TEXT, updated REAL);
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
KILLED, DAMAGED = "killed", "damaged"  # read back only


class NetworkRunRow(NamedTuple):
    """One line of `systolic network --list`."""
    id: int
    created: str
    network: str
    method: str
    status: str  # running, finished, interrupted, killed or damaged
    pairs: int
    layers: int
    problem: str | None = None  # why a damaged row cannot be read


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

    @property
    def clock_mhz(self) -> float | None:
        """`systolic network --clock` (None: the device's clock)."""
        clock = self.options.get("clock_mhz")
        return float(clock) if isinstance(clock, (int, float)) and not isinstance(clock, bool) else None


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
                columns = {r[1] for r in db.execute("PRAGMA table_info(network_runs)")}
                for column, kind in (("pid", "INTEGER"), ("host", "TEXT"), ("updated", "REAL")):
                    if column not in columns:  # a database written before the heartbeat
                        db.execute(f"ALTER TABLE network_runs ADD COLUMN {column} {kind}")
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
                "method, seconds, samples, seed, options, status, pid, host, updated) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (created, kernel_path, kernel_text, json.dumps(defines), network, json.dumps(workload), device,
                 method, seconds, samples, seed, json.dumps(options), "running", os.getpid(), socket.gethostname(),
                 time.time())).lastrowid

    def claim(self, run_id: int) -> int:
        """This process now runs `run_id` (--resume): status "running", its pid, host and a heartbeat; its
        damaged pair and single-array rows are deleted, to be computed again. Returns how many."""
        with self._transaction() as db:
            db.execute("UPDATE network_runs SET status = 'running', pid = ?, host = ?, updated = ? WHERE id = ?",
                       (os.getpid(), socket.gethostname(), time.time(), run_id))
            damaged = 0
            for table, columns, decode in (
                    ("network_pairs", "layer, design, params, latency, dsp, bram18k, gops, samples, seconds, notes, "
                                      "error", _pair),
                    ("network_single", "design, params, network_latency, layer_latency, dsp, bram18k, samples, "
                                       "seconds, exact_check, notes", _single)):
                for rowid, *row in db.execute(f"SELECT rowid, {columns} FROM {table} WHERE run_id = ?",
                                              (run_id,)).fetchall():
                    try:
                        decode(row)
                    except (ValueError, TypeError):
                        db.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
                        damaged += 1
        return damaged

    def add_pair(self, run_id: int, result: PairResult) -> None:
        self.add_pairs(run_id, [result])

    def add_pairs(self, run_id: int, results: list[PairResult]) -> None:
        """Several pairs in one transaction (layers of equal sizes share one search)."""
        rows = []
        for result in results:
            b = result.best
            best = (None,) * 5 if b is None else (json.dumps({k: int(v) for k, v in b.params.items()}),
                                                  float(b.latency_cycles), float(b.dsp), float(b.bram18k),
                                                  float(b.throughput_gops))
            rows.append((run_id, result.layer, result.design, *best, int(result.samples), float(result.seconds),
                         json.dumps(list(result.notes)), result.error))
        with self._transaction() as db:
            db.executemany("INSERT INTO network_pairs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            self._beat(db, run_id)

    def add_single(self, run_id: int, result: SingleArrayResult) -> None:
        r = result
        with self._transaction() as db:
            self._beat(db, run_id)
            db.execute("INSERT INTO network_single VALUES (?,?,?,?,?,?,?,?,?,?,?)", (
                run_id, r.design, None if r.params is None else json.dumps({k: int(v) for k, v in r.params.items()}),
                _number(r.network_latency_cycles), json.dumps(r.layer_latency_cycles), _number(r.dsp),
                _number(r.bram18k), int(r.samples), float(r.seconds), _number(r.exact_check),
                json.dumps(list(r.notes))))

    def set_status(self, run_id: int, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        with self._transaction() as db:
            db.execute("UPDATE network_runs SET status = ?, updated = ?, pid = CASE WHEN ? = 'running' THEN pid "
                       "ELSE NULL END WHERE id = ?", (status, time.time(), status, run_id))

    @staticmethod
    def _beat(db, run_id: int) -> None:
        db.execute("UPDATE network_runs SET updated = ? WHERE id = ?", (time.time(), run_id))

    # -- reading -------------------------------------------------------------------------------
    def load(self, run_id: int) -> NetworkRun:
        row = self._conn.execute("SELECT id, created, kernel_path, kernel_text, defines, network, workload, device, "
                                 "method, seconds, samples, seed, options, status FROM network_runs WHERE id = ?",
                                 (run_id,)).fetchone()
        if row is None:
            raise EngineError(f"no stored network run {run_id} in {self.path} (see `systolic network --list`)")
        try:
            return _network_run(row)
        except (ValueError, TypeError) as exc:
            raise EngineError(f"network run {run_id} in {self.path} is damaged and cannot be read "
                              f"({str(exc).splitlines()[0]})") from None

    def running_elsewhere(self, run_id: int) -> int | None:
        """The pid of another live process that is running `run_id` (its heartbeat fresh), else None."""
        row = self._conn.execute("SELECT status, pid, host, updated FROM network_runs WHERE id = ?",
                                 (run_id,)).fetchone()
        if row is None or row[0] != "running" or row[1] == os.getpid() or writer_gone(*row[1:]):
            return None
        return row[1] if isinstance(row[1], int) else -1

    def runs(self) -> list[NetworkRunRow]:
        """Every network run, newest first; a row that cannot be read is "damaged" with the reason."""
        rows = []
        for r in self._conn.execute(
                "SELECT r.id, r.created, r.network, r.method, r.status, "
                "(SELECT COUNT(*) FROM network_pairs p WHERE p.run_id = r.id), r.workload, r.pid, r.host, r.updated "
                "FROM network_runs r ORDER BY r.id DESC"):
            try:
                status = stored_text(r[4], "status")
                if status not in STATUSES:
                    raise StoredRowError(f"status is {status[:20]!r}, not one of {', '.join(STATUSES)}")
                if status == "running" and writer_gone(*r[7:10]):
                    status = KILLED
                rows.append(NetworkRunRow(r[0], stored_text(r[1], "created"), stored_text(r[2], "network"),
                                          stored_text(r[3], "method"), status, r[5],
                                          len(stored_object(r[6], "workload", list))))
            except StoredRowError as exc:
                text = lambda v: v if isinstance(v, str) else "?"  # noqa: E731
                rows.append(NetworkRunRow(r[0], text(r[1]), text(r[2]), text(r[3]), DAMAGED, r[5], 0, str(exc)))
        return rows

    def pairs(self, run_id: int) -> list[PairResult]:
        """The run's stored pairs; a damaged pair row is left out (`claim` deletes it on --resume)."""
        results = []
        for row in self._conn.execute(
                "SELECT layer, design, params, latency, dsp, bram18k, gops, samples, seconds, notes, error "
                "FROM network_pairs WHERE run_id = ?", (run_id,)):
            try:
                results.append(_pair(row))
            except (ValueError, TypeError):
                continue
        return results

    def singles(self, run_id: int) -> list[SingleArrayResult]:
        results = []
        for r in self._conn.execute(
                "SELECT design, params, network_latency, layer_latency, dsp, bram18k, samples, seconds, exact_check, "
                "notes FROM network_single WHERE run_id = ?", (run_id,)):
            try:
                results.append(_single(r))
            except (ValueError, TypeError):
                continue
        return results


def _network_run(row) -> NetworkRun:
    workload = stored_object(row[6], "workload", list)
    for layer in workload:
        if not (isinstance(layer, dict) and isinstance(layer.get("name"), str) and isinstance(layer.get("sizes"), dict)
                and isinstance(layer.get("tags", []), list)):
            raise StoredRowError("a workload layer is not an object with a name, tags and sizes")
        for name, value in layer["sizes"].items():
            stored_int(value, f"size {name} of layer {layer['name']!r}", 1, 2**31 - 1)
    defines = stored_object(row[4], "defines", list)
    if not all(isinstance(d, str) for d in defines):
        raise StoredRowError("defines is not a list of NAME=VALUE strings")
    seconds = stored_number(row[9], "seconds", optional=True)
    samples = None if row[10] is None else stored_int(row[10], "samples", 1)
    if seconds is None and samples is None or seconds == 0:
        raise StoredRowError("the run has no budget per pair (seconds and samples both empty)")
    return NetworkRun(stored_int(row[0], "id", 1), stored_text(row[1], "created"), stored_text(row[2], "kernel_path"),
                      stored_text(row[3], "kernel_text"), defines, stored_text(row[5], "network"), workload,
                      stored_text(row[7], "device"), stored_text(row[8], "method"), seconds, samples,
                      stored_int(row[11], "seed"), stored_object(row[12], "options"), stored_text(row[13], "status"))


def _pair(row) -> PairResult:
    layer, design, params, latency, dsp, bram, gops, samples, seconds, notes, error = row
    best = None if params is None else Candidate(stored_params(params, "params"), stored_number(latency, "latency"),
                                                 stored_number(dsp, "dsp"), stored_number(bram, "bram18k"),
                                                 stored_number(gops, "gops"))
    return PairResult(stored_text(layer, "layer"), stored_text(design, "design"), best, stored_int(samples, "samples"),
                      stored_number(seconds, "seconds"), _notes(notes), stored_text(error, "error", optional=True))


def _single(r) -> SingleArrayResult:
    layer_latency = stored_object(r[3], "layer_latency")
    for value in layer_latency.values():
        stored_number(value, "a layer latency", optional=True)
    return SingleArrayResult(stored_text(r[0], "design"), None if r[1] is None else stored_params(r[1], "params"),
                             stored_number(r[2], "network_latency", optional=True), layer_latency,
                             stored_number(r[4], "dsp", optional=True), stored_number(r[5], "bram18k", optional=True),
                             stored_int(r[6], "samples"), stored_number(r[7], "seconds"),
                             stored_number(r[8], "exact_check", optional=True), _notes(r[9]))


def _notes(text) -> tuple[str, ...]:
    notes = stored_object(text, "notes", list)
    return tuple(stored_text(n, "a note") for n in notes)
