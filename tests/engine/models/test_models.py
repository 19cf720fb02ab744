"""Performance models: vectorised evaluation, the accumulation II, padding, budgets and constraints."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.compiler.design_space import compile_kernel
from engine.errors import DesignError
from engine.models.constraints import check, feasible_mask
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.models.sampling import random_configuration
from engine.resources import KERNELS


@pytest.fixture(scope="module")
def mm_model():
    space = compile_kernel(KERNELS / "mm.c")
    return PerformanceModel(space, space.design("i-j__i-j.k"), load_device())


def test_a_population_evaluates_like_its_members_one_by_one(mm_model):
    rng = np.random.default_rng(7)
    configs = [random_configuration(mm_model.design, rng) for _ in range(40)]
    population = {k: np.array([c[k] for c in configs]) for k in configs[0]}
    latency, dsp, bram, fits = mm_model.evaluate_fast(population)
    full = mm_model.evaluate(population)
    for n, config in enumerate(configs):
        single = mm_model.evaluate(config)
        assert latency[n] == single["latency_cycles"] == full["latency_cycles"][n]
        assert dsp[n] == single["DSP"] and bram[n] == single["BRAM18K"]
        assert fits[n] == single["fits"] == full["fits"][n]


def test_latency_is_prologue_plus_main_plus_epilogue_and_main_is_the_slowest_module(mm_model):
    # one k tile per event: the PE (its pipeline filled once an event) is the bottleneck, not the feeders
    # (whose pipelines fill once a tile; at k_t1=64 they are, by 0.06%, since the PE no longer stops to drain)
    result = mm_model.evaluate(dict(i_t1=64, j_t1=64, k_t1=256, i_t2=8, j_t2=8, k_t2=8))
    modules = [v for k, v in result.values.items() if k.startswith("module:")]
    assert result["main"] == max(modules)
    assert result["latency_cycles"] == result["prologue"] + result["main"] + result["epilogue"]
    assert 0 < result["prologue"] < result["main"] and 0 < result["epilogue"] < result["main"]


def test_accumulation_without_enough_latency_hiding_raises_the_ii(mm_model):
    """fp32 add takes 8 cycles: with i_t2 * j_t2 = 2 independent accumulators each PE iteration
    waits ceil(8 / 2) = 4 cycles; with 8 or more it runs at II = 1. The PE's pipeline (depth 14 for
    fp32) fills again for every tile."""
    base = dict(i_t1=64, j_t1=64, k_t1=64, k_t2=8)
    slow = mm_model.evaluate({**base, "i_t2": 1, "j_t2": 2})["module:PE"]
    fast = mm_model.evaluate({**base, "i_t2": 2, "j_t2": 4})["module:PE"]
    tiles = 16 ** 3
    assert slow >= tiles * (1 * 2 * 64 / 8) * 4
    assert fast < tiles * (2 * 4 * 64 / 8 + 14) * 1.1


def test_int16_accumulation_is_not_stalled(tmp_path):
    space = compile_kernel(KERNELS / "mm.c", defines=["DATA_T=int16_t", "I=64", "J=64", "K=64"])
    model = PerformanceModel(space, space.design("i-j__i-j.k"), load_device())
    result = model.evaluate(dict(i_t1=16, j_t1=16, k_t1=16, i_t2=1, j_t2=1, k_t2=8))
    assert result["DSP"] == 16 * 16 * 8 * 1  # int16 MAC: 1 DSP per lane
    depth = model.architecture.module("PE").depth  # the PE pipeline fills once per tile
    assert result["module:PE"] < 4 ** 3 * ((16 / 8 - 1) * 1 + depth) + 100  # II = 1 despite a single accumulator


def test_non_divisor_tiling_pads_the_problem(mm_model):
    """i_t1 = 129 does not divide 1024: 8 tiles of 129 rows are computed (1032 rows, 8 of them zeros)."""
    padded = mm_model.evaluate(dict(i_t1=129, j_t1=128, k_t1=64, i_t2=3, j_t2=8, k_t2=8))
    tiles = 8 * 8 * 16
    per_tile = 3 * 8 * 64 // 8  # i_t2 * j_t2 * k_t1 / SIMD iterations of each PE
    assert padded["module:PE"] >= tiles * per_tile > (1024 / 129) * 8 * 16 * per_tile
    assert float(padded["offchip:A"]) == tiles * 129 * 64  # whole padded A tiles, once per (i, j, k) tile


def test_throughput_counts_the_real_work(mm_model):
    result = mm_model.evaluate(dict(i_t1=129, j_t1=130, k_t1=64, i_t2=3, j_t2=13, k_t2=4))
    seconds = float(result["latency_cycles"]) / 300e6
    assert math.isclose(float(result["throughput_gops"]), 2 * 1024 ** 3 / seconds / 1e9)


def test_over_budget_is_not_an_error_but_says_what_and_by_how_much(mm_model):
    result = evaluate_configuration(mm_model, dict(i_t1=512, j_t1=512, k_t1=64, i_t2=4, j_t2=4, k_t2=8))
    assert result["fits"] is False
    # 128 x 128 PEs x 8 lanes x 5 DSP
    assert "DSP 655360 > 8602 (70% of 12288) by 646758" in result["violations"]


def test_every_broken_constraint_is_named(mm_model):
    with pytest.raises(DesignError) as info:
        check(mm_model.design, dict(i_t1=2000, j_t1=64, k_t1=64, i_t2=7, j_t2=5, k_t2=3))
    message = str(info.value)
    for part in ("i_t1=2000 is outside its bounds 1..1024", "i_t2=7 must divide i_t1=2000",
                 "j_t2=5 must divide j_t1=64", "k_t2=3 must be a power of two"):
        assert part in message


def test_feasible_mask_agrees_with_check(mm_model):
    rng = np.random.default_rng(3)
    population = {p.name: rng.integers(1, 9, 200) for p in mm_model.design.params if p.tunable}
    mask = feasible_mask(mm_model.design, population)
    for n in range(200):
        config = {k: int(v[n]) for k, v in population.items()}
        try:
            check(mm_model.design, config)
            legal = True
        except DesignError:
            legal = False
        assert mask[n] == legal


def test_inferred_packing_is_a_power_of_two_dividing_its_block(mm_model):
    params = dict(i_t1=129, j_t1=130, k_t1=64, i_t2=3, j_t2=13, k_t2=4)
    packs = mm_model.inferred_packing(params)
    blocks = mm_model.packing_blocks(params)
    for name, pack in packs.items():
        assert pack & (pack - 1) == 0 and 1 <= pack <= 16 and blocks[name] % pack == 0
    assert packs["A_in_pack_l3"] == 16  # DRAM side: a whole 512-bit word of k
    # results leave the array as PE boxes, so drain words must not straddle one: j_t2 = 13 allows 1
    assert packs["C_out_pack_l3"] == 1


@pytest.mark.parametrize("name", ["ttm", pytest.param("ttmc", marks=pytest.mark.slow)])  # mm, cnn, mttkrp: every
# design in test_ast_check.py; ttmc (17 s) with the benchmarks
def test_models_build_for_every_design_of_the_other_kernels(name):
    device = load_device()
    space = compile_kernel(KERNELS / f"{name}.c", defines=["I=16"])
    rng = np.random.default_rng(0)
    for design in space.designs:
        model = PerformanceModel(space, design, device)
        latency, dsp, bram, _ = model.evaluate_fast(random_configuration(design, rng))
        assert latency > 0 and dsp > 0 and bram >= 0


def test_double_buffering_trades_bram_for_overlap():
    space = compile_kernel(KERNELS / "mm.c")
    design = space.design("i__i-j.k")
    params = dict(i_t1=64, j_t1=64, k_t1=64, i_t2=8, j_t2=8, k_t2=8)
    double = PerformanceModel(space, design, load_device()).evaluate(params)
    single = PerformanceModel(space, design, load_device(), double_buffering=False).evaluate(params)
    assert float(single["bram:A"]) == float(double["bram:A"]) / 2  # A_L1_in keeps one tile, not two
    assert single["module:A_L1_in"] > double["module:A_L1_in"]  # its load and feed now run one after the other
