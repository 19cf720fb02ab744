"""A sample-budget pair is reproducible with the hybrid method: its MP seed is bounded by SCIP nodes,
not seconds, so the same task gives the same result again (and on any machine, at any load)."""
from __future__ import annotations

from engine.network.task import Job, PairTask, run_pair
from engine.resources import KERNELS

SIZES = {"I": 8, "O": 16, "H": 8, "W": 8, "P": 3, "Q": 3}
DESIGN = "o-h__o-h-w.i-p-q"


def job(seconds=None, samples=None) -> Job:
    kernel = KERNELS / "cnn.c"
    return Job(str(kernel), kernel.read_text(), (), tuple(SIZES.items()), "u250", "hybrid", seconds, samples)


def test_a_sample_budget_hybrid_pair_gives_the_same_result_twice():
    task = PairTask(job(samples=300), "a", tuple(SIZES.items()), DESIGN, 11)
    first, second = run_pair(task), run_pair(task)
    assert first.error is None and first.best is not None
    assert first.samples == second.samples == 300
    assert first.best.params == second.best.params
    assert first.best.latency_cycles == second.best.latency_cycles
    assert any(n.startswith("MP seed") for n in first.notes)
