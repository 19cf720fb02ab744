"""The model of designs that run sequential passes (engine/models/passes.py): one pass and the
design's own latency when no output block is revisited, the passes' latencies added otherwise, the
same expression evaluated for a whole population."""
from __future__ import annotations

import numpy as np
import sympy

from engine.compiler.architecture.passes import pass_loops
from engine.compiler.architecture.symbols import symbol
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.packing_inference import lambdify
from engine.models.sampling import random_configuration
from engine.models.symbolic import build_symbolic_model
from engine.resources import KERNELS

MM = {"I": "64", "J": "64", "K": "64"}


def _model(design: str) -> PerformanceModel:
    space = compile_kernel(KERNELS / "mm.c", defines=MM)
    return PerformanceModel(space, space.design(design), load_device())


def _at(model: PerformanceModel, expr: sympy.Expr, params: dict, exact: bool = False) -> float:
    """`expr` at `params`, rounded as the model rounds a latency (unrounded when `exact`: a pass's
    latency is fractional where a DRAM port moves a word every 65/16 cycles)."""
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    if exact:
        syms = sorted(expr.free_symbols, key=lambda s: s.name)
        return float(lambdify(syms, expr)(*[values[s.name] for s in syms]))
    return float(np.ravel(model.compile_objective(expr)(values))[0])


def test_pass_loops_are_the_tile_loops_up_to_the_last_reduction_loop_with_an_output_loop_inside():
    assert pass_loops(["i", "k", "j"], ["k"]) == ("i", "k")
    assert pass_loops(["k", "i", "j"], ["k"]) == ("k",)
    assert pass_loops(["i", "j", "k"], ["k"]) == ()
    assert pass_loops(["o", "i", "p", "q", "h", "w"], ["i", "p", "q"]) == ("o", "i", "p", "q")


def test_one_reduction_tile_is_one_pass_and_the_design_latency():
    model = _model("i-j__i-k.j")
    sizes = dict(zip(model.design.band_loops, model.design.problem_size))
    plain = build_symbolic_model(model.architecture, sizes, model.device.dram_ports()).latency
    params = {"i_t1": 16, "j_t1": 16, "k_t1": 64, "i_t2": 4, "j_t2": 4, "k_t2": 4}
    assert float(model.evaluate_fast(params).latency) == _at(model, plain, params)


def test_passes_add_up():
    model = _model("i-j__i-k.j")
    sizes = dict(zip(model.design.band_loops, model.design.problem_size))
    params = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4}
    first = _at(model, build_symbolic_model(model.pass_architectures["first"], sizes, model.device.dram_ports(), model.architecture.groups).latency, params, exact=True)
    reload = _at(model, build_symbolic_model(model.pass_architectures["reload"], sizes, model.device.dram_ports(), model.architecture.groups).latency, params, exact=True)
    # 4 i tiles x 4 k tiles: 4 passes (k tile 0) read nothing back, 12 do
    assert float(model.evaluate_fast(params).latency) == round(4 * first + 12 * reload)
    assert reload > first
    # resources and traffic are the design's
    assert model.symbolic.resources == build_symbolic_model(model.architecture, sizes, model.device.dram_ports()).resources


def test_a_design_that_never_revisits_a_block_has_no_passes():
    model = _model("i-j__i-j.k")
    assert model.pass_architectures == {}
    assert not model.symbolic.latency.has(sympy.Piecewise)


def test_a_population_evaluates_like_its_members():
    model = _model("i-k__i-k.j")
    rng = np.random.default_rng(3)
    configs = [random_configuration(model.design, rng) for _ in range(400)]
    population = {n: np.array([c[n] for c in configs]) for n in model.tunable}
    fast = model.evaluate_fast(population)
    assert np.all(np.isfinite(fast.latency)) and np.all(fast.latency > 0)
    for k in range(0, 400, 57):
        assert model.evaluate_fast(configs[k]).latency == fast.latency[k]
    one_pass = population["k_t1"] == 64
    several = ~one_pass
    assert one_pass.any() and several.any()
    assert model.symbolic.latency.has(symbol("k_t1"))
