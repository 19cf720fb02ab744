"""Objective vectors (rows: latency, DSP, BRAM, ...; all minimised) -> Pareto-front masks, and the
incremental merge a search run does once per batch.

A run sees hundreds of feasible points per batch and keeps a front of a thousand or more; numpy
broadcasting of batch x front x objectives cost more than evaluating the batch, so the two sweeps
are compiled with numba (cached on disk, like the simulator's kernel) and exit at the first point
that covers the one being tested.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _covers(q: np.ndarray, p: np.ndarray) -> bool:
    for d in range(p.shape[0]):
        if q[d] > p[d]:
            return False
    return True


@njit(cache=True)
def _sweep(points: np.ndarray, order: np.ndarray) -> np.ndarray:
    # in lexicographic order only an earlier point can dominate (or equal) a later one
    keep = np.zeros(points.shape[0], dtype=np.bool_)
    kept = np.empty(points.shape[0], dtype=np.int64)
    n_kept = 0
    for i in order:
        covered = False
        for t in range(n_kept):
            if _covers(points[kept[t]], points[i]):
                covered = True
                break
        if not covered:
            keep[i] = True
            kept[n_kept] = i
            n_kept += 1
    return keep


@njit(cache=True)
def _covered_by(front: np.ndarray, points: np.ndarray) -> np.ndarray:
    out = np.zeros(points.shape[0], dtype=np.bool_)
    for i in range(points.shape[0]):
        for j in range(front.shape[0]):
            if _covers(front[j], points[i]):
                out[i] = True
                break
    return out


def warm_up() -> None:
    """Load the compiled sweeps (about half a second the first time in a process)."""
    covered_by(np.zeros((1, 3)), np.zeros((1, 3)))
    non_dominated(np.zeros((1, 3)))


def non_dominated(points: np.ndarray) -> np.ndarray:
    """Mask of the points no other point dominates (<= everywhere, < somewhere); duplicates kept once."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    if len(points) == 0:
        return np.zeros(0, dtype=bool)
    return _sweep(points, np.lexsort(points.T[::-1]))


def covered_by(front: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Mask of the points some front point dominates or equals."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    if len(front) == 0 or len(points) == 0:
        return np.zeros(len(points), dtype=bool)
    return _covered_by(np.ascontiguousarray(front, dtype=np.float64), points)


def merge_batch(front: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A front and a batch -> (indices of the front still non-dominated, indices of the batch joining).
    Only the batch's own front meets the stored one: |front| x |batch front| work per batch."""
    joining = np.flatnonzero(non_dominated(points))
    joining = joining[~covered_by(front, points[joining])]
    # a joining point equals no stored one, so covering a stored point means dominating it
    staying = np.flatnonzero(~covered_by(points[joining], front))
    return staying, joining
