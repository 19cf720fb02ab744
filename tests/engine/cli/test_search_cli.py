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

from engine.cli.main import main
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
    for argv, phrase in ((["--samples", "0"], "expected a positive integer, not 0"), (["--method", "nope"], "unknown search method"),
                         (["--design", "zz"], "no design 'zz'")):
        assert main(["search", str(bundled("mm")), "--no-store", *argv]) == 2
        err = capsys.readouterr().err
        assert phrase in err and err.count("\n") == 1


def test_nothing_fits_names_the_smallest_design(bundled, tmp_path, capsys):
    device = tmp_path / "tiny.json"
    spec = json.loads((bundled("mm").parent.parent / "devices" / "u250.json").read_text())
    spec["resources"].update(DSP=4, BRAM18K=1)
    device.write_text(json.dumps(spec))
    assert main(["search", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k", "--samples", "300",
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
