"""`systolic search`: table and JSON output, stored runs, errors, and Ctrl-C."""
from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest

from engine.cli import search as search_cli
from engine.cli.main import main
from engine.errors import EngineError
from engine.search import recorder
from engine.search.store import RunStore


def test_json_result_and_stored_run(bundled, tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    code = main(["search", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k", "--design", "k__i-j.k",
                 "--method", "evolution", "--samples", "4000", "--seed", "3", "--json", "--db", str(db)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert {d["design"] for d in out["designs"]} == {"i-j__i-j.k", "k__i-j.k"}
    assert set(out["best"]) == {"design", "params", "latency_cycles", "throughput_gops", "dsp", "bram18k"}
    assert out["best"]["latency_cycles"] == min(d["latency_cycles"] for d in out["designs"])
    with RunStore(db) as store:
        stored = store.load(out["run_id"])
    assert stored.seed == 3 and stored.method == "evolution" and stored.status == "finished"
    assert {d.design for d in stored.result.designs} == {"i-j__i-j.k", "k__i-j.k"}


def test_table_lists_each_design(bundled, tmp_path, capsys):
    assert main(["search", str(bundled("mm")), "--preset", "small", "--design", "i__i-j.k", "--method", "random",
                 "--samples", "500", "--no-store"]) == 0
    out = capsys.readouterr().out
    assert "i__i-j.k" in out and "not stored" in out and "GOP/s" in out


def test_bad_budget_method_and_design_are_one_line_errors(bundled, capsys):
    for argv, phrase in ((["--samples", "0"], "expected a positive integer up to 2^63-1, not 0"), (["--method", "nope"], "unknown search method"),
                         (["--design", "zz"], "no design 'zz'")):
        assert main(["search", str(bundled("mm")), "--no-store", *argv]) == 2
        err = capsys.readouterr().err
        assert phrase in err and err.count("\n") == 1


def test_nothing_fits_names_the_smallest_design(bundled, write_kernel, tmp_path, capsys):
    device = tmp_path / "tiny.json"
    spec = json.loads((bundled("mm").parent.parent / "devices" / "u250.json").read_text())
    spec["resources"].update(DSP=4, BRAM18K=1)
    # one die offering the kernel the whole (tiny) device, with every bank
    spec["slrs"]["dies"] = [{"resources": dict(spec["resources"]), "banks": list(range(spec["memory"]["banks"]))}]
    device.write_text(json.dumps(spec))
    # a matrix-vector product: the smallest of its 15 designs is looked for, as of MM's 27, at a third of the cost
    kernel = write_kernel("""\
        for (int i = 0; i < 16; i++)
          for (int j = 0; j < 16; j++)
            y[i] += A[i][j] * x[j];
        """, prelude="float A[16][16], x[16], y[16];\n", name="mv.c")
    assert main(["search", str(kernel), "--design", "i__i.j", "--samples", "300",
                 "--device", str(device), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "no configuration of any design fits the device" in err and "needs 5 DSP" in err


def test_ctrl_c_stores_the_run_so_far(bundled, tmp_path):
    """Ctrl-C once the search reports progress (stderr on a pseudo-terminal shows the live line)."""
    db = tmp_path / "runs.sqlite"
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli.main", "search", str(bundled("mm")), "--method",
                             "evolution", "--seconds", "120", "--db", str(db)],
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 120  # however loaded the machine, wait for real progress
    while b"samples" not in seen and time.monotonic() < deadline and proc.poll() is None:
        if select.select([master], [], [], 0.2)[0]:
            seen += os.read(master, 4096)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    while select.select([master], [], [], 0.1)[0]:
        try:
            seen += os.read(master, 4096)
        except OSError:  # the terminal closed with the process
            break
    os.close(master)
    err = seen.decode(errors="replace")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted; stored as run 1" in out
    with RunStore(db) as store:
        (run,) = store.list_runs()
    assert run.status == "interrupted" and run.best_latency is not None


def test_a_database_that_cannot_be_used_is_refused_before_the_search(bundled, tmp_path, capsys, monkeypatch):
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database" * 100)
    searched = []
    monkeypatch.setattr(search_cli, "explore", lambda *a, **k: searched.append(1))
    assert main(["search", str(bundled("mm")), "--preset", "small", "--samples", "500", "--db", str(corrupt)]) == 2
    err = capsys.readouterr().err
    assert str(corrupt) in err and err.count("\n") == 1 and not searched

    def read_only(self, **_):
        raise EngineError(f"cannot use run database {self.path}: attempt to write a readonly database")
    monkeypatch.setattr(RunStore, "begin", read_only)  # what sqlite says for a read-only file (not as root)
    assert main(["search", str(bundled("mm")), "--preset", "small", "--samples", "500",
                 "--db", str(tmp_path / "ro.sqlite")]) == 2
    assert "readonly" in capsys.readouterr().err and not searched


def test_results_are_printed_when_storing_fails_late(bundled, tmp_path, capsys, monkeypatch):
    def disk_full(self, *_):
        raise EngineError(f"cannot use run database {self.path}: database or disk is full")
    monkeypatch.setattr(RunStore, "put_design", disk_full)
    db = tmp_path / "runs.sqlite"
    assert main(["search", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k", "--method", "random",
                 "--samples", "500", "--db", str(db)]) == 2
    captured = capsys.readouterr()
    assert "i-j__i-j.k" in captured.out and "GOP/s" in captured.out and "not stored" in captured.out
    assert "the run could not be stored" in captured.err and "disk is full" in captured.err
    assert captured.err.count("\n") == 1


@pytest.mark.parametrize("argv, phrase", [
    (["--seed", "-1"], "seed must be in 0..2^63-1"),
    (["--seed", "99999999999999999999999"], "seed must be in 0..2^63-1"),
    (["--seconds", "0"], "positive and finite"), (["--seconds", "nan"], "positive and finite"),
    (["--seconds", "inf"], "positive and finite"), (["--samples", "-3"], "positive integer"),
    (["--samples", "99999999999999999999999"], "positive integer up to 2^63-1"),
])
def test_seeds_and_budgets_a_run_could_not_honour_are_refused(bundled, capsys, argv, phrase):
    assert main(["search", str(bundled("mm")), "--no-store", *argv]) == 2
    err = capsys.readouterr().err
    assert phrase in err and err.count("\n") == 1


@pytest.mark.parametrize("defines, phrase", [
    (["-D", "ZZZ=4"], "the kernel does not use 'ZZZ' (its sizes: I, J, K)"),
    (["-D", "I=1000000000", "-D", "J=1000000000", "-D", "K=1000000000"], "the limit is 2^63-1"),
    (["-D", "I=100000000000000000000000"], "the limit is 2^31-1 = 2,147,483,647 per loop"),
])
def test_unused_defines_and_sizes_beyond_the_limits_are_refused(bundled, capsys, defines, phrase):
    assert main(["search", str(bundled("mm")), "--no-store", "--seconds", "2", *defines]) == 2
    err = capsys.readouterr().err
    assert phrase in err and err.count("\n") == 1


def test_ctrl_c_while_starting_is_quiet(bundled, tmp_path):
    """Ctrl-C during the imports (before any work): exit 130, 'interrupted', no traceback, nothing stored."""
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli.main", "search", str(bundled("mm")), "--db",
                             str(tmp_path / "runs.sqlite")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)  # past the interpreter's start, inside the imports (well over a second)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted" and out == ""


def test_a_checkpoint_refused_by_another_writers_lock_is_written_later(bundled, tmp_path, capsys, monkeypatch):
    real, refused = RunStore.put_design, []

    def locked_twice(self, *args):
        if len(refused) < 2:
            refused.append(args[1])
            raise EngineError(f"cannot use run database {self.path}: database is locked")
        real(self, *args)
    monkeypatch.setattr(RunStore, "put_design", locked_twice)
    monkeypatch.setattr(recorder, "LOCKED_RETRY", 0.01)
    db = tmp_path / "runs.sqlite"
    assert main(["search", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k", "--design", "k__i-j.k",
                 "--method", "random", "--samples", "600", "--db", str(db)]) == 0
    assert len(refused) == 2 and "stored as run 1" in capsys.readouterr().out
    with RunStore(db) as store:
        stored = store.load(1)
    assert [d.design for d in stored.result.designs] == ["i-j__i-j.k", "k__i-j.k"]
    assert all(d.samples >= 300 for d in stored.result.designs)
