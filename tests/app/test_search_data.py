"""Plot data of the search panel, computed without Qt: Pareto front, live traces, stored runs."""
from __future__ import annotations

import numpy as np

from app.models.search_data import SearchTraces, pareto_front
from engine.search.progress import (
    Candidate,
    DesignResult,
    ExplorationResult,
    Progress,
    TracePoint,
)


def _dominated(p, points) -> bool:
    return any(q[0] <= p[0] and q[1] <= p[1] and (q[0] < p[0] or q[1] < p[1]) for q in points)


def test_pareto_front_is_exactly_the_non_dominated_points():
    rng = np.random.default_rng(3)
    points = np.round(rng.uniform(0, 20, size=(300, 2)))  # rounding makes ties
    front = pareto_front(points)
    expected = {tuple(p) for p in points if not _dominated(p, points)}
    assert {tuple(p) for p in front} == expected
    assert np.all(np.diff(front[:, 1]) > 0) and np.all(np.diff(front[:, 0]) < 0)
    assert pareto_front(np.empty((0, 2))).shape == (0, 2)


def _best(latency, gops):
    return Candidate({"i_t1": 4}, latency, 10.0, 5.0, gops)


def test_traces_keep_the_best_so_far_per_design_and_overall():
    traces = SearchTraces()
    traces.add([Progress("a", "m", 100, 0.1, _best(1000, 10), recent=((1000, 10), (2000, 5)))], 0.1)
    traces.add([Progress("a", "m", 200, 0.2, _best(1200, 8)), Progress("b", "m", 50, 0.05, _best(500, 20))], 0.2)
    traces.add([Progress("b", "m", 150, 0.15, None)], 0.3)
    data = traces.plot_data(now=0.5)
    assert list(data.per_design["a"].y) == [10, 10]  # a worse snapshot does not lower the line
    assert list(data.per_design["a"].t) == [0.1, 0.5]
    assert list(data.overall.y) == [10, 20, 20]
    assert traces.total_samples == 350
    assert data.rate.y[-1] == 350 / 0.3
    assert data.points.tolist() == [[1000, 10], [2000, 5]]
    assert data.front.tolist() == [[2000, 5], [1000, 10]]


def test_a_stored_run_is_replotted_from_its_traces():
    best = Candidate({"i_t1": 4}, 100.0, 8.0, 2.0, 50.0)
    trace = (TracePoint(10, 0.5, 400.0), TracePoint(30, 1.0, 100.0))
    result = ExplorationResult("mm", "evolution", 0, (
        DesignResult("d1", "evolution", 40, 2.0, best, trace, pareto=(best,)),
        DesignResult("d2", "evolution", 20, 1.0, None, ())))
    data = SearchTraces.from_result(result).plot_data()
    assert data.per_design["d1"].y.tolist() == [12.5, 50.0]  # throughput inversely proportional to latency
    assert data.overall.t.tolist() == [0.5, 1.0]
    assert data.rate.y.tolist() == [20.0, 20.0]
    assert data.points.tolist() == [[100.0, 8.0]]
