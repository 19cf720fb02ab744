"""Progress snapshots carry a thinned sample of the feasible (latency, DSP) points evaluated since the
previous snapshot: what a live latency-vs-DSP scatter draws."""
from __future__ import annotations

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.explore import Budget, explore
from engine.search.run import RECENT_POINTS
from engine.search.space import SearchSpace


def test_recent_points_are_feasible_samples_and_thinned():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    device = load_device()
    snapshots = []
    explore(space, device, method="random", budget=Budget(samples=3000), designs=["i-j__i-j.k"],
            callbacks=(snapshots.append,))
    points = [p for s in snapshots for p in s.recent]
    assert points and all(len(s.recent) <= RECENT_POINTS for s in snapshots)
    search = SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), device))
    assert all(lat > 0 and 0 <= dsp <= search.dsp_budget for lat, dsp in points)
    best = min(s.best.latency_cycles for s in snapshots if s.best is not None)
    assert min(lat for lat, _ in points) >= best  # the best may be thinned out, never beaten
