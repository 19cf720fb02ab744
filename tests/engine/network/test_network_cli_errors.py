"""Bad input to `systolic network`: one line naming the layer or the address, exit 2, nothing stored."""
from __future__ import annotations

import socket
import sqlite3

import pytest

from engine.cli.main import main
from engine.network import runner
from engine.resources import KERNELS

GOOD = '{"workloads": [{"name": "l1", "params": {"i": 4, "o": 4, "r": 4, "c": 4, "p": 3, "q": 3}}]}'


def network_rows(db) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return conn.execute("SELECT COUNT(*) FROM network_runs").fetchone()[0] if "network_runs" in tables else 0


def run(tmp_path, capsys, text, *extra, kernel="cnn.c"):
    workload = tmp_path / "net.json"
    workload.write_text(text)
    db = tmp_path / "runs.sqlite"
    code = main(["network", str(KERNELS / kernel), str(workload), "--db", str(db), "--seconds", "0.1",
                 "-o", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert network_rows(db) == 0
    assert not (tmp_path / "out").exists()
    return err


@pytest.mark.parametrize("text, message", [
    ('{"workloads": [{"name": "l1", "params": {"i": 4,}}]}', "net.json:1:49: not valid JSON"),
    ('{"workloads": [{"name": "l1", "params": {"i": 4, "o": 4, "r": 4, "c": 4, "p": 3}}]}',
     "net.json:1: layer l1: no size for Q"),
    ('{"workloads": [{"name": "conv9", "params": {"i": 4, "o": 0, "r": 4, "c": 4, "p": 3, "q": 3}}]}',
     "layer conv9: size o = 0, sizes must be at least 1"),
    ('{"workloads": [{"name": "l1", "params": {"i": 4, "o": 4, "r": 4, "c": 4, "p": 3, "q": 3, "z": 2}}]}',
     "layer l1: the kernel cnn has no size Z"),
])
def test_bad_workloads(tmp_path, capsys, text, message):
    assert message in run(tmp_path, capsys, text)


def test_a_malformed_scheduler_address(tmp_path, capsys):
    assert "scheduler address 'localhost:8786': expected tcp://HOST:PORT" in run(
        tmp_path, capsys, GOOD, "--scheduler", "localhost:8786")


def test_a_scheduler_that_does_not_answer(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 1.0)
    with socket.socket() as silent:  # accepts connections, never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        err = run(tmp_path, capsys, GOOD, "--scheduler", address)
    assert f"scheduler {address} did not answer within 1 s" in err


def test_an_unknown_scheduler_host(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 1.0)
    assert "scheduler tcp://no-such-host.invalid:8786 did not answer" in run(
        tmp_path, capsys, GOOD, "--scheduler", "tcp://no-such-host.invalid:8786")


def test_resume_of_an_unknown_run(tmp_path, capsys):
    assert main(["network", "--resume", "7", "--db", str(tmp_path / "runs.sqlite")]) == 2
    assert "no stored network run 7" in capsys.readouterr().err
