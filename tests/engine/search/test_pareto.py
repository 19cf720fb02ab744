"""The incremental Pareto front equals the brute-force front of everything seen."""
from __future__ import annotations

import numpy as np

from engine.search import pareto


def _brute_front(points: np.ndarray) -> set[tuple[float, ...]]:
    front = set()
    for p in points:
        if not any(np.all(q <= p) and np.any(q < p) for q in points):
            front.add(tuple(p))
    return front


def test_non_dominated_keeps_each_undominated_point_once():
    rng = np.random.default_rng(0)
    points = np.round(rng.uniform(0, 6, size=(400, 3)))  # coarse values: many ties and duplicates
    mask = pareto.non_dominated(points)
    kept = [tuple(p) for p in points[mask]]
    assert len(kept) == len(set(kept))
    assert set(kept) == _brute_front(points)


def test_merging_batches_gives_the_front_of_all_points():
    rng = np.random.default_rng(1)
    front = np.empty((0, 3))
    seen = []
    for _ in range(30):
        batch = np.round(rng.uniform(0, 10, size=(int(rng.integers(0, 60)), 3)))
        seen.append(batch)
        staying, joining = pareto.merge_batch(front, batch)
        front = np.vstack([front[staying], batch[joining]])
    everything = np.vstack(seen)
    assert len({tuple(p) for p in front}) == len(front)
    assert {tuple(p) for p in front} == _brute_front(everything)


def test_empty_inputs():
    assert pareto.non_dominated(np.empty((0, 3))).shape == (0,)
    staying, joining = pareto.merge_batch(np.empty((0, 3)), np.empty((0, 3)))
    assert len(staying) == len(joining) == 0
