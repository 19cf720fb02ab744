"""A node-limited MP solve (the hybrid seed of a sample-budget run) gives the same answer however slow
the wall clock runs: its time limit counts CPU seconds. The load is played by a wall clock that runs
a thousand times fast; no real time is measured."""
from __future__ import annotations

import time

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search import mathematical_programming as mp
from engine.search.space import SearchSpace


def test_a_node_limited_seed_does_not_depend_on_the_wall_clock(monkeypatch):
    kernel = compile_kernel(KERNELS / "mm.c", defines=["I=32", "J=32", "K=32"])
    space = SearchSpace(PerformanceModel(kernel, kernel.design("i-k__j-k.i"), load_device()))
    quiet = mp.solve_mp(space, objective="obj3", time_limit=5.0, node_limit=10)
    real = time.perf_counter
    monkeypatch.setattr(mp.time, "perf_counter", lambda: 1000.0 * real())  # a machine under heavy load
    loaded = mp.solve_mp(space, objective="obj3", time_limit=5.0, node_limit=10)
    assert quiet.config is not None and loaded.config == quiet.config and loaded.status == quiet.status
