"""`systolic search` killed from outside: SIGTERM and SIGHUP store the run as "interrupted" with
its results; after SIGKILL the run is listed as "incomplete" holding what its checkpoints stored.

The search runs in a child process whose stderr is a pseudo-terminal, so it draws its live progress
line; the tests wait for real progress (however loaded the machine) before signalling, and read the
progress line to know what the search had found at a given moment."""
from __future__ import annotations

import json
import os
import pty
import random
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from engine.search.store import RunStore

PROGRESS = re.compile(r"\[(\d+)/(\d+)\] (\S+)\s+([\d,]+) samples\s+([\d.]+) s\s+best\s+([\d.]+) GOP/s")


class Search:
    """A `systolic search` child process; `lines` collects (monotonic time, progress match)."""

    def __init__(self, kernel, db, *args):
        self.master, slave = pty.openpty()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.proc = subprocess.Popen([sys.executable, "-m", "engine.cli.main", "search", str(kernel), "--db", str(db),
                                      *args], stdout=subprocess.PIPE, stderr=slave, text=True, env=env)
        os.close(slave)
        self.buffer, self.lines = "", []

    def read(self, seconds: float) -> None:
        """Collect progress for `seconds` (or until the process ends)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.proc.poll() is None:
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    chunk = os.read(self.master, 4096).decode(errors="replace")
                except OSError:
                    return
                self.buffer += chunk
                now = time.monotonic()
                for match in PROGRESS.finditer(chunk):
                    self.lines.append((now, match))

    def wait_for_progress(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while not self.lines and time.monotonic() < deadline and self.proc.poll() is None:
            self.read(0.2)
        assert self.lines, f"no progress from the search: {self.buffer[-2000:]}"

    def stop(self, sig) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, _ = self.proc.communicate(timeout=120)
        self.read(0.2)
        os.close(self.master)
        return self.proc.returncode, out, self.buffer


@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.slow)])
def test_sigterm_and_sighup_store_the_run_as_interrupted(bundled, tmp_path, sig):
    db = tmp_path / "runs.sqlite"
    search = Search(bundled("mm"), db, "--preset", "small", "--method", "random", "--seconds", "120")
    search.wait_for_progress()
    code, out, err = search.stop(sig)
    assert code == 128 + sig, err
    assert "Traceback" not in err and "interrupted; stored as run 1" in out
    with RunStore(db) as store:
        [summary] = store.list_runs()
        stored = store.load(1)
    assert summary.status == "interrupted" and stored.status == "interrupted"
    assert stored.result.designs and stored.result.designs[0].samples > 0
    assert stored.result.designs[-1].stopped == "cancelled"
    assert stored.result.best is not None


def test_sigkill_leaves_an_incomplete_run_with_what_was_checkpointed(bundled, tmp_path):
    db = tmp_path / "runs.sqlite"
    # 180 s over mm's 27 designs: over 6 s a design, so the design running at the kill has been
    # checkpointed running (a checkpoint every 2 s) rather than just after the one before it ended
    search = Search(bundled("mm"), db, "--preset", "small", "--method", "random", "--seconds", "180")
    search.wait_for_progress()
    search.read(3.0)  # a checkpoint at least every 2 s
    _, match = search.lines[-1]
    code, _, _ = search.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    with RunStore(db) as store:
        [summary] = store.list_runs()
        stored = store.load(1)
    assert summary.status == "incomplete" and stored.status == "incomplete"
    current = stored.result.designs[-1]
    assert current.stopped == "running" and current.samples > 0 and current.best is not None
    assert len(stored.result.designs) == int(match.group(1))
    # `systolic runs` lists it
    listed = subprocess.run([sys.executable, "-m", "engine.cli.main", "runs", "--db", str(db), "--json"],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert listed.returncode == 0 and json.loads(listed.stdout)[0]["status"] == "incomplete"


@pytest.mark.slow
def test_sigkill_at_a_random_moment_keeps_the_state_of_five_seconds_before(bundled, tmp_path):
    """A 20 s search killed at a random moment: the stored run holds at least what the progress line
    showed 5 s before the kill (same design further on, or a later design)."""
    seed = int(os.environ.get("SIGKILL_SEED", random.randrange(10**6)))
    print(f"SIGKILL_SEED={seed}")
    db = tmp_path / "runs.sqlite"
    search = Search(bundled("mm"), db, "--method", "hybrid", "--seconds", "20")
    search.wait_for_progress()
    started = search.lines[0][0]
    search.read(random.Random(seed).uniform(6.0, 18.0))
    killed, killed_wall = time.monotonic(), time.time()
    assert search.proc.poll() is None, "the search ended before the kill"
    search.stop(signal.SIGKILL)
    db_rows = sqlite3.connect(db)
    (updated,) = db_rows.execute("SELECT updated FROM runs WHERE id = 1").fetchone()
    db_rows.close()
    print(f"last checkpoint {killed_wall - updated:.2f} s before the kill")
    assert killed_wall - updated <= 5.0
    before = [m for t, m in search.lines if t <= killed - 5.0]
    assert before, "no progress line 5 s before the kill"
    shown = before[-1]
    position, samples, gops = int(shown.group(1)) - 1, int(shown.group(4).replace(",", "")), float(shown.group(6))
    with RunStore(db) as store:
        stored = store.load(1)
    print(f"killed {killed - started:.1f} s after the first progress; 5 s before: design {position + 1} "
          f"{samples} samples {gops} GOP/s; stored: {[(d.design, d.samples) for d in stored.result.designs]}")
    assert stored.status == "incomplete"
    assert len(stored.result.designs) > position
    design = stored.result.designs[position]
    assert design.design == shown.group(3)
    assert design.samples >= samples
    assert design.best is not None and design.best.throughput_gops >= gops - 0.05
