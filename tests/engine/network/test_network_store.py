"""Network runs in the runs database: written pair by pair, read back, each pair stored once."""
from __future__ import annotations

import pytest

from engine.errors import EngineError
from engine.network.single_array import SingleArrayResult
from engine.network.store import NetworkStore
from engine.network.task import PairResult
from engine.search.progress import Candidate
from engine.search.store import RunStore


def create(store):
    return store.create(kernel_path="k.c", kernel_text="int x;", defines=["DATA_T=float"], network="n",
                        workload=[{"name": "l1", "tags": [], "sizes": {"I": 4}}], device="u250", method="hybrid",
                        seconds=0.5, samples=None, seed=3, options={"designs": []})


def test_round_trip_and_a_pair_is_stored_once(tmp_path):
    path = tmp_path / "runs.sqlite"
    with NetworkStore(path) as store:
        run_id = create(store)
        result = PairResult("l1", "i__i-j.k", Candidate({"i_t1": 2}, 100.0, 5.0, 2.0, 1.5), 64, 0.5, ("note",))
        store.add_pair(run_id, result)
        store.add_pair(run_id, PairResult("l1", "j__i-j.k", None, 0, 0.1, (), "cannot model"))
        with pytest.raises(EngineError):
            store.add_pair(run_id, result)
        store.add_single(run_id, SingleArrayResult("i__i-j.k", {"i_t1": 2}, 100.0, {"l1": 100.0}, 5.0, 2.0, 10, 1.0,
                                                   0.0, ()))
        store.set_status(run_id, "finished")
    with NetworkStore(path) as store:
        run = store.load(run_id)
        assert (run.network, run.seed, run.seconds, run.status, run.defines) == ("n", 3, 0.5, "finished", ["DATA_T=float"])
        pairs = {p.design: p for p in store.pairs(run_id)}
        assert pairs["i__i-j.k"] == result
        assert pairs["j__i-j.k"].error == "cannot model" and pairs["j__i-j.k"].best is None
        assert store.singles(run_id)[0].layer_latency_cycles == {"l1": 100.0}
        assert store.runs()[0][:5] == (run_id, run.created, "n", "hybrid", "finished")
        with pytest.raises(EngineError, match="no stored network run 99"):
            store.load(99)
    with RunStore(path) as runs:  # still a run database for `systolic runs`
        assert runs.list_runs() == []
