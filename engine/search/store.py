"""RunStore: turns finished (or interrupted) searches -- an ExplorationResult plus the kernel, sizes,
device, budget and options that produced it -- into rows of an SQLite database, and those rows back
into the same dataclasses, so runs can be listed, reopened, compared and replayed.

Tables: `runs` (one row per run, dicts as JSON), `designs` (one row per DesignResult, the best
configuration in plain columns, Pareto set and notes as JSON) and `trace` (one row per TracePoint,
so a plot can be redrawn with one query) and `certificates` (one row per design whose best was
certified, engine/search/certify.py: the bound and gap in plain columns for sorting, the whole
certificate as JSON). Each write is one transaction.

A run can be stored as it goes: `begin` creates its row ("running", with the writer's pid and host)
before the first sample, `put_design` replaces one design's row at each checkpoint and `finish`
sets the final status. A "running" row whose process is gone (kill -9, the OOM killer) reads back
as "incomplete" with whatever its last checkpoint stored; a row that cannot be decoded is listed as
"damaged" instead of making the whole database unreadable.

Rows are untrusted input (another version, another process or a person may have written them):
every column is read back through engine/validation.py's stored_* checks (types, finite numbers,
JSON objects of integer parameters, nesting depth), so a wrong type is "damaged", never a traceback
further on.
"""
from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import astuple, dataclass
from datetime import datetime
from pathlib import Path
from typing import Self

from engine.errors import EngineError
from engine.limits import INT64_MAX
from engine.search.progress import Candidate, DesignResult, ExplorationResult, TracePoint
from engine.validation import (StoredRowError, stored_int, stored_number, stored_object, stored_params,
                               stored_text)

SCHEMA_VERSION = 3  # 2: pid, host, updated of a running run; 3: certificates
STATUSES = ("running", "finished", "interrupted", "failed")  # what a writer may store
# read back only: a "running" run whose process is gone, and a row that cannot be decoded
INCOMPLETE, DAMAGED = "incomplete", "damaged"
OTHER_HOST_STALE = 600.0  # seconds without a checkpoint after which another host's running run is incomplete

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL, kernel_path TEXT NOT NULL,
    kernel_text TEXT NOT NULL, sizes TEXT NOT NULL, device TEXT NOT NULL, method TEXT NOT NULL,
    seed INTEGER NOT NULL, budget TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL,
    kernel TEXT NOT NULL, result_method TEXT NOT NULL, result_seed INTEGER NOT NULL,
    pid INTEGER, host TEXT, updated REAL);
CREATE TABLE IF NOT EXISTS designs (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    design TEXT NOT NULL, method TEXT NOT NULL, samples INTEGER NOT NULL, elapsed REAL NOT NULL,
    stopped TEXT NOT NULL, notes TEXT NOT NULL, pareto TEXT NOT NULL, best_params TEXT,
    best_latency REAL, best_dsp REAL, best_bram18k REAL, best_throughput REAL,
    PRIMARY KEY (run_id, position));
CREATE TABLE IF NOT EXISTS trace (
    run_id INTEGER NOT NULL, position INTEGER NOT NULL, step INTEGER NOT NULL, samples INTEGER NOT NULL,
    elapsed REAL NOT NULL, best_latency REAL, PRIMARY KEY (run_id, position, step),
    FOREIGN KEY (run_id, position) REFERENCES designs(run_id, position) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS certificates (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, design TEXT NOT NULL,
    latency REAL, lower_bound REAL, gap REAL, proven INTEGER NOT NULL, fits INTEGER NOT NULL,
    certificate TEXT NOT NULL, PRIMARY KEY (run_id, design));
"""


def default_database_path() -> Path:
    """$SYSTOLIC_STUDIO_DB if set, else runs.sqlite in the user's data directory (not created here)."""
    override = os.environ.get("SYSTOLIC_STUDIO_DB")
    if override:
        return Path(override).expanduser()
    import platformdirs
    return Path(platformdirs.user_data_dir("systolic-studio")) / "runs.sqlite"


@dataclass(frozen=True)
class RunSummary:
    id: int
    created: str  # ISO 8601 local time with offset
    kernel: str
    device: str
    method: str
    seed: int
    budget: dict
    status: str
    designs: int
    best_design: str | None
    best_latency: float | None
    best_throughput: float | None
    problem: str | None = None  # why a damaged row could not be read


@dataclass(frozen=True)
class StoredRun:
    id: int
    created: str
    kernel_path: str
    kernel_text: str
    sizes: dict[str, int]
    device: str
    method: str
    seed: int
    budget: dict
    options: dict
    status: str
    result: ExplorationResult


def _json(value) -> str:
    """JSON text keeping key order; numpy scalars become Python numbers."""
    return json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else str(o))


class RunStore:
    def __init__(self, path: str | Path | None = None, *, timeout: float = 10.0):
        """`timeout`: seconds to wait for another writer's lock before a write is an error."""
        self.path = Path(path).expanduser() if path is not None else default_database_path()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EngineError(f"cannot create the folder of run database {self.path}: {exc.strerror}") from None
        self._conn = None
        try:
            with self._guard():
                self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
                self._conn.execute("PRAGMA foreign_keys = ON")
            self._create_schema()
        except BaseException:
            self.close()
            raise

    def _create_schema(self) -> None:
        if self._current():
            return
        with self._transaction("IMMEDIATE") as db:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "schema_version" not in tables:
                raise EngineError(f"{self.path} is an SQLite file but not a Systolic Studio run database")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)
            version = db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
            if version is None:
                db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif version > SCHEMA_VERSION:
                raise EngineError(f"{self.path} has run-database schema {version}; this version of "
                                  f"Systolic Studio reads up to {SCHEMA_VERSION}")
            elif version < SCHEMA_VERSION:  # 1 -> 2: who is writing a running run, and when it last did
                # (2 -> 3: the certificates table, created above)
                columns = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
                for column, kind in (("pid", "INTEGER"), ("host", "TEXT"), ("updated", "REAL")):
                    if column not in columns:
                        db.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
                db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    def _current(self) -> bool:
        """The file already holds this schema version (so opening it needs no write: read-only is fine)."""
        with self._guard():
            tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"schema_version", "runs", "designs", "trace", "certificates"} <= tables:
                return False
            return self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION

    # -- plumbing ------------------------------------------------------------------------------
    @contextmanager
    def _guard(self):
        try:
            with self._lock:
                yield
        except sqlite3.Error as exc:
            raise EngineError(f"cannot use run database {self.path}: {exc}") from None

    @contextmanager
    def _transaction(self, mode: str = "DEFERRED"):
        """One transaction: IMMEDIATE for writes (take the write lock up front), DEFERRED for reads."""
        with self._guard():
            if self._conn is None:
                raise EngineError(f"run database {self.path} is closed")
            self._conn.execute(f"BEGIN {mode}")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check(self, db, run_id: int) -> None:
        if not (isinstance(run_id, int) and 0 < run_id < 2**63) or \
                db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
            raise EngineError(f"no stored run {run_id} in {self.path}")

    def _insert_designs(self, db, run_id: int, result: ExplorationResult) -> None:
        for pos, d in enumerate(result.designs):
            self._insert_design(db, run_id, pos, d)

    @staticmethod
    def _insert_design(db, run_id: int, pos: int, d: DesignResult) -> None:
        b = d.best
        best = (None,) * 5 if b is None else (_json(b.params), *map(float, astuple(b)[1:]))
        db.execute("INSERT INTO designs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
            run_id, pos, d.design, d.method, int(d.samples), float(d.elapsed), d.stopped,
            _json(list(d.notes)), _json([_candidate(c) for c in d.pareto]), *best))
        db.executemany("INSERT INTO trace VALUES (?,?,?,?,?,?)", [
            (run_id, pos, step, int(t.samples), float(t.elapsed),
             None if t.best_latency is None else float(t.best_latency)) for step, t in enumerate(d.trace)])

    # -- writing -------------------------------------------------------------------------------
    def begin(self, *, kernel_path: str, kernel_text: str, sizes: dict[str, int], device: str, method: str,
              seed: int, budget: dict, kernel: str, options: dict | None = None) -> int:
        """Create a run's row, status "running", before its first sample: fails here (an EngineError)
        when the database cannot be written. Returns the run id."""
        created = datetime.now().astimezone().isoformat(timespec="seconds")
        with self._transaction("IMMEDIATE") as db:
            cur = db.execute(
                "INSERT INTO runs (created, kernel_path, kernel_text, sizes, device, method, seed, budget, options, "
                "status, kernel, result_method, result_seed, pid, host, updated) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (created, str(kernel_path), kernel_text, _json(sizes), device, method, int(seed), _json(budget),
                 _json(options or {}), "running", kernel, method, int(seed), os.getpid(), socket.gethostname(),
                 time.time()))
            return cur.lastrowid

    def put_design(self, run_id: int, position: int, result: DesignResult) -> None:
        """Store (or replace) one design's result of a run, in one transaction: a checkpoint."""
        with self._transaction("IMMEDIATE") as db:
            self._check(db, run_id)
            db.execute("DELETE FROM trace WHERE run_id = ? AND position = ?", (run_id, position))
            db.execute("DELETE FROM designs WHERE run_id = ? AND position = ?", (run_id, position))
            self._insert_design(db, run_id, position, result)
            db.execute("UPDATE runs SET updated = ? WHERE id = ?", (time.time(), run_id))

    def finish(self, run_id: int, status: str) -> None:
        """Set a run's final status (its designs are already stored)."""
        _check_status(status)
        with self._transaction("IMMEDIATE") as db:
            self._check(db, run_id)
            db.execute("UPDATE runs SET status = ?, pid = NULL, updated = ? WHERE id = ?",
                       (status, time.time(), run_id))

    def save(self, *, kernel_path: str, kernel_text: str, sizes: dict[str, int], device: str, method: str,
             seed: int, budget: dict, result: ExplorationResult, status: str = "finished",
             options: dict | None = None) -> int:
        """Store one run in one transaction; returns its id. A "running" run is this process's."""
        _check_status(status)
        created = datetime.now().astimezone().isoformat(timespec="seconds")
        pid = os.getpid() if status == "running" else None
        with self._transaction("IMMEDIATE") as db:
            cur = db.execute(
                "INSERT INTO runs (created, kernel_path, kernel_text, sizes, device, method, seed, budget, options, "
                "status, kernel, result_method, result_seed, pid, host, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (created, str(kernel_path), kernel_text, _json(sizes), device, method, int(seed), _json(budget),
                 _json(options or {}), status, result.kernel, result.method, int(result.seed), pid,
                 socket.gethostname(), time.time()))
            run_id = cur.lastrowid
            self._insert_designs(db, run_id, result)
        return run_id

    def update(self, run_id: int, *, result: ExplorationResult, status: str) -> None:
        """Replace a run's results and status (e.g. a run saved as "running" that has now stopped)."""
        _check_status(status)
        with self._transaction("IMMEDIATE") as db:
            self._check(db, run_id)
            db.execute("DELETE FROM designs WHERE run_id = ?", (run_id,))
            db.execute("UPDATE runs SET status = ?, kernel = ?, result_method = ?, result_seed = ?, updated = ?, "
                       "pid = CASE WHEN ? = 'running' THEN pid ELSE NULL END WHERE id = ?",
                       (status, result.kernel, result.method, int(result.seed), time.time(), status, run_id))
            self._insert_designs(db, run_id, result)

    def delete(self, run_id: int) -> None:
        with self._transaction("IMMEDIATE") as db:
            self._check(db, run_id)
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def put_certificate(self, run_id: int, certificate: dict) -> None:
        """Store (or replace) the certificate of one design of a run: Certificate.to_json()."""
        c = certificate
        with self._transaction("IMMEDIATE") as db:
            self._check(db, run_id)
            db.execute("INSERT OR REPLACE INTO certificates VALUES (?,?,?,?,?,?,?,?)", (
                run_id, str(c["design"]), c.get("latency_cycles"), c.get("lower_bound_cycles"), c.get("gap"),
                int(bool(c["proven"])), int(bool(c.get("fits", True))), _json(c)))

    # -- reading -------------------------------------------------------------------------------
    def certificates(self, run_id: int) -> dict[str, dict]:
        """The stored certificates of a run, by design (a row that cannot be decoded is left out)."""
        with self._transaction() as db:
            self._check(db, run_id)
            rows = db.execute("SELECT design, certificate FROM certificates WHERE run_id = ? ORDER BY design",
                              (run_id,)).fetchall()
        out = {}
        for design, text in rows:
            try:
                out[stored_text(design, "design")] = stored_object(text, "certificate")
            except ValueError:
                continue
        return out

    def list_runs(self) -> list[RunSummary]:
        """Every stored run, newest first, with its best design (lowest latency, first on ties)."""
        query = """
            WITH ranked AS (SELECT run_id, design, best_latency, best_throughput, ROW_NUMBER() OVER
                              (PARTITION BY run_id ORDER BY best_latency, position) AS rank
                            FROM designs WHERE best_latency IS NOT NULL),
                 counts AS (SELECT run_id, COUNT(*) AS n FROM designs GROUP BY run_id)
            SELECT r.id, r.created, r.kernel, r.device, r.method, r.seed, r.budget, r.status,
                   COALESCE(c.n, 0), b.design, b.best_latency, b.best_throughput, r.pid, r.host, r.updated
            FROM runs r LEFT JOIN counts c ON c.run_id = r.id
                        LEFT JOIN ranked b ON b.run_id = r.id AND b.rank = 1
            ORDER BY r.id DESC"""
        with self._transaction() as db:
            rows = db.execute(query).fetchall()
        return [_summary(r) for r in rows]

    def load(self, run_id: int) -> StoredRun:
        """One run with its designs; an EngineError naming the run when its rows cannot be decoded."""
        with self._transaction() as db:
            self._check(db, run_id)
            run = db.execute("SELECT id, created, kernel_path, kernel_text, sizes, device, method, seed, budget, "
                             "options, status, kernel, result_method, result_seed, pid, host, updated "
                             "FROM runs WHERE id = ?", (run_id,)).fetchone()
            designs = db.execute("SELECT * FROM designs WHERE run_id = ? ORDER BY position", (run_id,)).fetchall()
            traces: dict[int, list[tuple]] = {}
            for pos, samples, elapsed, best in db.execute(
                    "SELECT position, samples, elapsed, best_latency FROM trace WHERE run_id = ? "
                    "ORDER BY position, step", (run_id,)):
                traces.setdefault(pos, []).append((samples, elapsed, best))
        try:
            return _stored_run(run, designs, traces)
        except (ValueError, TypeError, AttributeError) as exc:
            raise EngineError(f"run {run_id} in {self.path} is damaged and cannot be read ({_reason(exc)})") from None

    def top_k(self, run_id: int, k: int = 1) -> list[tuple[str, Candidate]]:
        """The k designs of a run with the lowest best latency (designs without a feasible one left out)."""
        with self._transaction() as db:
            self._check(db, run_id)
            rows = db.execute("SELECT design, best_params, best_latency, best_dsp, best_bram18k, best_throughput "
                              "FROM designs WHERE run_id = ? AND best_latency IS NOT NULL "
                              "ORDER BY best_latency, position LIMIT ?", (run_id, max(0, int(k)))).fetchall()
        try:
            return [(stored_text(r[0], "design"), _best(r[1:], "best")) for r in rows]
        except (ValueError, TypeError) as exc:
            raise EngineError(f"run {run_id} in {self.path} is damaged and cannot be read ({_reason(exc)})") from None


def _stored_run(run, designs, traces) -> StoredRun:
    """The rows of one run -> StoredRun, every column checked (StoredRowError says which is wrong)."""
    results = []
    for d in designs:
        position = stored_int(d[1], "designs.position")
        notes = stored_object(d[7], f"notes of {d[2]!r}", list)
        pareto = stored_object(d[8], f"pareto set of {d[2]!r}", list)
        results.append(DesignResult(
            design=stored_text(d[2], "designs.design"), method=stored_text(d[3], "designs.method"),
            samples=stored_int(d[4], "designs.samples"), elapsed=stored_number(d[5], "designs.elapsed"),
            stopped=stored_text(d[6], "designs.stopped"),
            notes=tuple(stored_text(n, "a note") for n in notes),
            pareto=tuple(_pareto_candidate(c) for c in pareto),
            trace=tuple(TracePoint(stored_int(t[0], "trace.samples"), stored_number(t[1], "trace.elapsed"),
                                   stored_number(t[2], "trace.best_latency", optional=True))
                        for t in traces.get(position, ())),
            best=None if d[9] is None else _best(d[9:14], "best")))
    result = ExplorationResult(stored_text(run[11], "kernel"), stored_text(run[12], "result_method"),
                               stored_int(run[13], "result_seed"), tuple(results))
    sizes = stored_object(run[4], "sizes")
    for name, value in sizes.items():
        stored_int(value, f"size {name}", -INT64_MAX, INT64_MAX)
    return StoredRun(stored_int(run[0], "id", 1), stored_text(run[1], "created"), stored_text(run[2], "kernel_path"),
                     stored_text(run[3], "kernel_text"), sizes, stored_text(run[5], "device"),
                     stored_text(run[6], "method"), stored_int(run[7], "seed"), stored_object(run[8], "budget"),
                     stored_object(run[9], "options"), _status(stored_text(run[10], "status"), *run[14:17]), result)


def _best(columns, what: str) -> Candidate:
    params, latency, dsp, bram, gops = columns
    return Candidate(stored_params(params, f"{what} params"), stored_number(latency, f"{what} latency"),
                     stored_number(dsp, f"{what} DSP"), stored_number(bram, f"{what} BRAM"),
                     stored_number(gops, f"{what} GOP/s"))


def _pareto_candidate(c) -> Candidate:
    if not isinstance(c, dict) or set(c) != {"params", "latency_cycles", "dsp", "bram18k", "throughput_gops"}:
        raise StoredRowError("a Pareto entry is not a configuration object")
    return _best((_json(c["params"]), c["latency_cycles"], c["dsp"], c["bram18k"], c["throughput_gops"]), "a Pareto")


def _candidate(c: Candidate) -> dict:
    """asdict(c), without its deep copies: a checkpoint writes hundreds of these every few seconds."""
    return {"params": c.params, "latency_cycles": c.latency_cycles, "dsp": c.dsp, "bram18k": c.bram18k,
            "throughput_gops": c.throughput_gops}


def _object(text) -> dict:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, found {type(value).__name__}")
    return value


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process (or an id we cannot ask about): assume it still runs
    return True


def writer_gone(pid, host, updated) -> bool:
    """The process that stores a "running" row is gone: on this host its pid is dead (or missing);
    on another host its heartbeat (`updated`) is older than OTHER_HOST_STALE."""
    if host == socket.gethostname():
        return not (isinstance(pid, int) and _alive(pid))
    return not isinstance(updated, (int, float)) or time.time() - updated > OTHER_HOST_STALE


def _status(status, pid, host, updated) -> str:
    """A "running" row whose writer is gone reads as "incomplete"."""
    if status != "running":
        return status
    return INCOMPLETE if writer_gone(pid, host, updated) else status


def _summary(r) -> RunSummary:
    """One row of list_runs; a row that cannot be decoded becomes a "damaged" summary saying why."""
    try:
        budget = stored_object(r[6], "budget")
        for column, value in zip(("created", "kernel", "device", "method", "status"), (r[1], r[2], r[3], r[4], r[7])):
            stored_text(value, column)
        stored_int(r[5], "seed")
        stored_text(r[9], "best design", optional=True)
        stored_number(r[10], "best latency", optional=True)
        stored_number(r[11], "best GOP/s", optional=True)
        return RunSummary(r[0], r[1], r[2], r[3], r[4], r[5], budget, _status(r[7], *r[12:15]), *r[8:12])
    except (ValueError, TypeError) as exc:
        text = lambda v: v if isinstance(v, str) else "?"
        return RunSummary(r[0], text(r[1]), text(r[2]), text(r[3]), text(r[4]), r[5] if isinstance(r[5], int) else 0,
                          {}, DAMAGED, r[8] if isinstance(r[8], int) else 0, None, None, None, _reason(exc))


def _check_status(status: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"run status must be one of {', '.join(STATUSES)}, not {status!r}")
