"""The mathematical-programming step (Odyssey sec. 4.2) with the real SCIP and the real models."""
from __future__ import annotations

import dataclasses
import math
import random
import time

import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.constraints import violations
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search import genome
from engine.search import mathematical_programming as mp
from engine.search.mathematical_programming import MPSearch, mp_objectives, solve_mp
from engine.search.run import SearchRun
from engine.search.space import SearchSpace

CNN = ["O=64", "I=64", "H=28", "W=28"]


@pytest.fixture(scope="module")
def mm():
    return compile_kernel(KERNELS / "mm.c")


@pytest.fixture(scope="module")
def cnn():
    return compile_kernel(KERNELS / "cnn.c", defines=CNN)


def search_space(design_space, design_id, device=None) -> SearchSpace:
    return SearchSpace(PerformanceModel(design_space, design_space.design(design_id), device or load_device()))


@pytest.fixture(scope="module")
def mm2d(mm):
    return search_space(mm, "i-j__i-j.k")


def assert_legal_and_feasible(space: SearchSpace, config: dict) -> None:
    assert set(config) == set(space.names)
    assert violations(space.design, config) == []
    for g in space.loops:
        if g.t2 is not None:
            assert config[g.t1] % config[g.t2] == 0
            if g.simd:
                assert config[g.t2] & (config[g.t2] - 1) == 0 and config[g.t2] <= g.t2_upper
    assert space.evaluate([config]).feasible[0]


def test_obj1_fills_the_dsp_budget(mm2d):
    result = solve_mp(mm2d, objective="obj1", time_limit=10)
    assert result.config is not None, result.message
    assert_legal_and_feasible(mm2d, result.config)
    dsp = mm2d.evaluate([result.config]).dsp[0]
    assert dsp >= 0.9 * 0.7 * 12288
    assert result.objective == pytest.approx(-dsp / mm2d.dsp_budget)
    assert result.status in ("optimal", "time limit") and "obj1" in result.message


def test_obj2_moves_less_data_than_obj1(mm2d):
    by_dsp = solve_mp(mm2d, objective="obj1", time_limit=5)
    by_traffic = solve_mp(mm2d, objective="obj2", time_limit=4)
    assert by_dsp.config is not None and by_traffic.config is not None
    assert_legal_and_feasible(mm2d, by_traffic.config)
    assert mp_objectives(mm2d, by_traffic.config)["obj2"] < mp_objectives(mm2d, by_dsp.config)["obj2"]


def test_obj3_answer_is_legal_and_feasible(mm2d):
    result = solve_mp(mm2d, objective="obj3", time_limit=3)
    assert result.config is not None, result.message
    assert_legal_and_feasible(mm2d, result.config)
    assert result.objective == pytest.approx(mp_objectives(mm2d, result.config)["obj3"])
    assert result.seconds < 3 + 10.0  # honours its limit (a generous margin: the machine may be loaded)


def test_objectives_are_normalised(mm2d):
    whole = {g.t1: g.extent for g in mm2d.loops} | {g.t2: 1 for g in mm2d.loops if g.t2}
    objectives = mp_objectives(mm2d, whole)
    assert objectives["obj2"] == pytest.approx(1.0)  # one tile: every array moves once
    assert objectives["obj1"] == pytest.approx(-5 * 1024 * 1024 / mm2d.dsp_budget)
    assert objectives["obj3"] == pytest.approx(objectives["obj1"] + objectives["obj2"])


@pytest.mark.parametrize("kernel, design_id", [("mm", "i-j__i-j.k"), ("cnn", "o-h__o-h-w.i-p-q")])
@pytest.mark.parametrize("objective", ["obj1", "obj2", "obj3"])
def test_the_program_evaluates_like_the_models(request, kernel, design_id, objective):
    """The generated pyomo objective, at a legal point, equals the objectives of the sympy models."""
    space = search_space(request.getfixturevalue(kernel), design_id)
    program = mp._Program(space, objective)
    model = program.model
    rng = random.Random(1)
    for _ in range(5):
        config = genome.random_config(space, rng)
        for g in space.loops:
            t1, n = config[g.t1], math.ceil(g.extent / config[g.t1])
            model.component(g.t1).set_value(t1)
            model.component(f"__n_{g.loop}").set_value(n)
            model.component(f"__p_{g.loop}").set_value(n * t1)
            if g.t2 is None:
                continue
            model.component(f"__q_{g.loop}").set_value(t1 // config[g.t2])
            if g.simd:
                for k, bit in model.component(f"__simd_{g.loop}").items():
                    bit.set_value(int(2 ** k == config[g.t2]))
            else:
                model.component(g.t2).set_value(config[g.t2])
        assert program.pyo.value(model.obj) == pytest.approx(mp_objectives(space, config)[objective], rel=1e-9)


def test_a_tiny_time_limit_returns_quickly(mm2d):
    start = time.perf_counter()
    result = solve_mp(mm2d, objective="obj3", time_limit=0.001)
    assert time.perf_counter() - start < 2.0
    assert result.message
    if result.config is None:
        assert result.status in ("time limit", "infeasible")
    else:
        assert_legal_and_feasible(mm2d, result.config)


def test_nothing_fits_a_tiny_device(mm):
    tiny = dataclasses.replace(load_device(), resources={"DSP": 4, "BRAM18K": 1, "URAM": 0, "LUT": 100, "FF": 100})
    space = search_space(mm, "i-j__i-j.k", tiny)
    result = solve_mp(space, objective="obj3", time_limit=2)
    assert result.config is None
    assert result.status in ("infeasible", "time limit")
    assert result.message


def test_failures_are_reported_not_raised(mm2d, monkeypatch):
    assert solve_mp(mm2d, objective="obj9").status == "error"

    def broken(*args, **kwargs):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(mp, "_Program", broken)
    result = solve_mp(mm2d, time_limit=0.1)
    assert (result.config, result.status) == (None, "error")
    assert "RuntimeError" in result.message and "solver exploded" in result.message


def test_mp_alone_through_the_run_loop(mm2d):
    outcome = SearchRun(mm2d, MPSearch(mm2d), seconds=5).run()
    assert outcome.method == "mp" and outcome.samples == 1
    assert outcome.best is not None
    assert_legal_and_feasible(mm2d, outcome.best.params)
    assert any(note.startswith("MP: ") for note in outcome.notes)


def test_mp_search_without_an_answer_proposes_nothing(mm):
    tiny = dataclasses.replace(load_device(), resources={"DSP": 4, "BRAM18K": 1, "URAM": 0, "LUT": 100, "FF": 100})
    strategy = MPSearch(search_space(mm, "i-j__i-j.k", tiny))
    strategy.start(time_limit=1.0)
    assert strategy.propose(8) is None
    assert strategy.notes and strategy.notes[0].startswith("MP: ")


@pytest.mark.parametrize("kernel, design_id", [("cnn", "o-h__o-h-w.i-p-q"), ("cnn", "o__o-h-w.i-p-q"),
                                                ("mm", "j__i-j.k"), ("mm", "k__i-k.j")])
def test_other_designs(request, kernel, design_id):
    space = search_space(request.getfixturevalue(kernel), design_id)
    result = solve_mp(space, objective="obj3", time_limit=2)
    assert result.config is not None, result.message
    assert_legal_and_feasible(space, result.config)
