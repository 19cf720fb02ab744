"""Another process holding the run database ("database is locked") delays what `systolic network`
stores but loses nothing: the finished pairs are kept and stored once the lock is gone, as search
does. The lock is taken and released on the run's own progress events (no clock involved)."""
from __future__ import annotations

import sqlite3
import threading

import pytest

from engine.network import store as store_module
from engine.network.runner import Cluster, SingleArrayOptions, StoreQueue, execute, pair_tasks
from engine.network.store import NetworkStore
from engine.network.task import PairResult
from engine.resources import KERNELS
from engine.search.progress import Candidate


def _run(store: NetworkStore, kernel: str = "k.c", text: str = "int x;") -> int:
    return store.create(kernel_path=kernel, kernel_text=text, defines=[], network="n",
                        workload=[{"name": "l1", "tags": [], "sizes": {"I": 4}}], device="u250", method="random",
                        seconds=None, samples=50, seed=0, options={"designs": []})


@pytest.fixture(autouse=True)
def short_lock_wait(monkeypatch):
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT", 0.05)


def test_a_locked_write_is_kept_and_stored_once_the_lock_is_gone(tmp_path):
    path = tmp_path / "runs.sqlite"
    notes = []
    with NetworkStore(path) as store:
        run_id = _run(store)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # another process writing
        queue = StoreQueue(notes.append)
        for design in ("a", "b"):
            result = PairResult("l1", design, Candidate({"i_t1": 2}, 10.0, 1.0, 1.0, 1.0), 5, 0.1)
            queue.put(lambda result=result: store.add_pair(run_id, result))
        assert not queue.flush() and len(queue.pending) == 2
        assert len(notes) == 1 and "locked by another process; 1 result(s) kept" in notes[0]
        holder.execute("COMMIT")
        queue.drain(threading.Event())
        assert not queue.pending and sorted(p.design for p in store.pairs(run_id)) == ["a", "b"]
        holder.close()


def test_a_lock_that_outlasts_a_stop_is_one_error_naming_the_results(tmp_path):
    path = tmp_path / "runs.sqlite"
    with NetworkStore(path) as store:
        run_id = _run(store)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        queue = StoreQueue()
        queue.put(lambda: store.add_pair(run_id, PairResult("l1", "a", None, 0, 0.1)))
        stopped = threading.Event()
        stopped.set()
        with pytest.raises(Exception, match="1 finished result.s. could not be stored: the run database is locked"):
            queue.drain(stopped)
        holder.execute("ROLLBACK")
        holder.close()


NETWORK = [{"name": "a", "tags": [], "sizes": {"I": 3, "O": 8, "H": 8, "W": 8, "P": 3, "Q": 3}},
           {"name": "b", "tags": [], "sizes": {"I": 8, "O": 16, "H": 4, "W": 4, "P": 3, "Q": 3}}]


@pytest.mark.slow  # a local Dask cluster: ~17 s on this machine
def test_a_network_run_keeps_the_pairs_finished_while_another_process_holds_the_database(tmp_path):
    path = tmp_path / "runs.sqlite"
    kernel = KERNELS / "cnn.c"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    seen = []

    def on_event(event):  # lock after the first stored pair, free it when every pair has finished
        seen.append(event.done)
        if event.done == 1 and not holder.in_transaction:
            holder.execute("BEGIN EXCLUSIVE")
        elif event.done == event.total and holder.in_transaction and event.singles_total == 0:
            holder.execute("COMMIT")

    with NetworkStore(path) as store:
        run_id = store.create(kernel_path=str(kernel), kernel_text=kernel.read_text(), defines=[], network="tiny",
                              workload=NETWORK, device="u250", method="random", seconds=None, samples=30, seed=0,
                              options={"designs": ["o-h__o-h-w.i-p-q", "h-i__o-h-w.i-p-q"]})
        run = store.load(run_id)
        notes = []
        with Cluster(None, 1) as cluster:
            _, status = execute(run, store, cluster, on_event=on_event, log=notes.append,
                                single=SingleArrayOptions(designs=0))
        holder.close()
        assert status == "finished" and max(seen) == 4
        assert any("locked by another process" in n for n in notes), notes  # the lock was met, and outlived
        assert len(store.pairs(run_id)) == len(pair_tasks(run)) == 4
