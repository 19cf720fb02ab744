"""Network runs on Dask: a LocalCluster with 2 workers, and a scheduler + workers started as separate
processes on loopback and reached with --scheduler; both give the tables a local run gives."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.network.runner import Cluster, execute, pair_tasks
from engine.network.store import NetworkStore
from engine.network.task import run_pair
from engine.resources import KERNELS

ROOT = Path(__file__).resolve().parents[3]
NETWORK = '''{"name": "tiny", "workloads": [
  {"name": "a", "tags": ["conv"], "params": {"i": 3, "o": 8, "r": 8, "c": 8, "p": 3, "q": 3}},
  {"name": "b", "tags": ["conv"], "params": {"i": 8, "o": 16, "r": 4, "c": 4, "p": 3, "q": 3}}]}'''
DESIGNS = ["o-h__o-h-w.i-p-q", "h-i__o-h-w.i-p-q"]


@pytest.fixture
def network(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(NETWORK)
    return path


def arguments(network, tmp_path, *extra):
    return ["network", str(KERNELS / "cnn.c"), str(network), "--samples", "200", "--method", "evolution",
            "--design", DESIGNS[0], "--design", DESIGNS[1], "--single-designs", "1", "--seed", "5",
            "--db", str(tmp_path / "runs.sqlite"), *extra]


def local_tables(store, run_id):
    """The same tasks run in this process, one after the other."""
    run = store.load(run_id)
    return {(t.layer, t.design): run_pair(t).best for t in pair_tasks(run)}


def test_a_two_layer_network_on_a_local_cluster_with_two_workers(network, tmp_path, capsys):
    assert main(arguments(network, tmp_path, "--workers", "2", "--json", "-o", str(tmp_path / "out"))) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "on 2 workers" in captured.err and "dask dashboard: http" in captured.err
    assert "pairs 4/4" in captured.err
    assert [l["name"] for l in out["layers"]] == ["a", "b"]
    assert out["layers"][0]["sizes"] == {"I": 3, "O": 8, "H": 8, "W": 8, "P": 3, "Q": 3}
    assert {d["id"] for d in out["designs"]} == set(DESIGNS)
    assert out["single_array"]["design"] == out["designs"][0]["id"]
    assert 0 < out["single_array"]["share_of_peak"] <= 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "designs.csv", "designs.png", "layers.csv", "layers.png", "single_array.csv", "single_array.png"]
    with NetworkStore(tmp_path / "runs.sqlite") as store:
        assert store.load(out["run_id"]).status == "finished"
        local = local_tables(store, out["run_id"])
    for layer in out["layers"]:
        for design, gops in layer["designs"].items():
            assert gops == pytest.approx(local[(layer["name"], design)].throughput_gops, rel=1e-12)


@pytest.mark.slow  # a scheduler and two workers start as processes: ~40 s on a loaded 2-core machine
def test_a_scheduler_and_workers_started_apart_are_used_through_scheduler(network, tmp_path, capsys):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scheduler_file = tmp_path / "scheduler.json"
    started = []
    try:
        started.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--scheduler-file", str(scheduler_file), "--no-dashboard"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for _ in range(2):
            started.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--host",
                 "127.0.0.1", "--no-dashboard", "--no-nanny"], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        assert main(arguments(network, tmp_path, "--scheduler", address, "--json", "-o", str(tmp_path / "o"))) == 0
        out = json.loads(capsys.readouterr().out)
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            process.wait(timeout=30)
    with NetworkStore(tmp_path / "runs.sqlite") as store:
        local = local_tables(store, out["run_id"])
    for layer in out["layers"]:
        for design, gops in layer["designs"].items():
            assert gops == pytest.approx(local[(layer["name"], design)].throughput_gops, rel=1e-12)
