"""The simulator on compiled designs: a one-tile PE timeline by hand, stall accounting, double
buffering, FIFO depths from the one place the exporter reads them, deadlock and budget errors,
refused configurations, and agreement with the latency model on small MM designs."""
from __future__ import annotations

import numpy as np
import pytest

from engine.compiler import topology
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.errors import DesignError
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.models.sampling import random_configuration
from engine.resources import KERNELS
from engine.sim import SimulationBudgetExceeded, SimulationDeadlock, simulate

DESIGN = "i-j__i-j.k"


@pytest.fixture(scope="module")
def mm8():
    return compile_kernel(KERNELS / "mm.c", defines=["I=8", "J=8", "K=8"])


def prepared(space, design_id, params, *, double_buffering=True):
    model = PerformanceModel(space, space.design(design_id), load_device("u250"), double_buffering=double_buffering)
    descriptor = build_descriptor(space, model.design, model.architecture)
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    return model, descriptor, values


ONE_TILE = {"i_t1": 8, "j_t1": 8, "k_t1": 8, "i_t2": 2, "j_t2": 2, "k_t2": 2}


def test_one_tile_pe_timeline_by_hand(mm8):
    _, descriptor, values = prepared(mm8, DESIGN, ONE_TILE)
    result = simulate(descriptor, values)
    pe = result.modules["PE"]
    # 4 x 4 PEs; each computes k_t1/k_t2 * i_t2 * j_t2 = 16 iterations at II = ceil(8 / (i_t2 j_t2)) = 2
    # (fp32 add latency 8) in its compute half (the busiest thread); its pipeline (depth 14) drains,
    # then the drain half, beside it, writes its i_t2 * j_t2 = 4 results
    assert pe.instances == 16 and pe.thread.endswith(".compute") and pe.iterations == 16
    assert pe.busy == 16 * 2
    # nothing reaches a PE before the first DRAM read (64 cycles) and a whole 8 x 8 block of A went
    # through A_L3_in (8 words of 8) and the head of the A_L2_in chain
    assert pe.stall_in > 64 + 8
    assert result.cycles > pe.busy + pe.stall_in + 64  # the results still have to reach DRAM


def test_busy_and_stalls_add_up_to_the_cycles_for_every_module(mm8):
    _, descriptor, values = prepared(mm8, DESIGN, {"i_t1": 4, "j_t1": 3, "k_t1": 5, "i_t2": 2, "j_t2": 1, "k_t2": 1})
    result = simulate(descriptor, values)
    for name, m in result.modules.items():
        assert m.busy + m.stall_in + m.stall_out + m.idle == result.cycles, name
        assert m.busy > 0 and m.iterations > 0
    assert result.bottleneck == max(result.modules, key=lambda n: result.modules[n].busy)
    assert all(0 < peak <= result.fifo_depths[k] for k, peak in result.fifo_peaks.items())


def test_double_buffering_overlaps_loads_with_feeding(mm8):
    params = {"i_t1": 8, "j_t1": 4, "k_t1": 4, "i_t2": 4, "j_t2": 2, "k_t2": 1}  # II = 1: the I/O modules keep pace
    on = simulate(*prepared(mm8, DESIGN, params)[1:])
    off = simulate(*prepared(mm8, DESIGN, params, double_buffering=False)[1:])
    assert off.cycles > on.cycles * 1.1


def test_fifo_depths_come_from_fifo_depths_py(mm8, monkeypatch):
    _, descriptor, values = prepared(mm8, DESIGN, ONE_TILE)
    monkeypatch.setattr(topology, "fifo_depth", lambda fifo, values, descriptor: 5)
    result = simulate(descriptor, values)
    assert set(result.fifo_depths.values()) == {5}


def test_fifos_that_hold_nothing_deadlock_and_the_wait_cycle_is_reported(mm8, monkeypatch):
    _, descriptor, values = prepared(mm8, DESIGN, ONE_TILE)
    monkeypatch.setattr(topology, "fifo_depth", lambda fifo, values, descriptor: 0)
    with pytest.raises(SimulationDeadlock) as info:
        simulate(descriptor, values)
    cycle = info.value.cycle
    assert cycle and all(step["fifo_depth"] == 0 for step in cycle)
    # a writer waits on a full FIFO whose reader waits on that same FIFO being empty
    assert {step["side"] for step in cycle} == {"in", "out"}
    assert "deadlock" in str(info.value) and cycle[0]["thread"] in str(info.value)
    assert info.value.result.deadlock["cycle"] == cycle and not info.value.result.complete


def test_the_cycle_budget_stops_with_what_was_measured(mm8):
    _, descriptor, values = prepared(mm8, DESIGN, ONE_TILE)
    with pytest.raises(SimulationBudgetExceeded) as info:
        simulate(descriptor, values, max_cycles=100)
    result = info.value.result
    assert not result.complete and result.cycles <= 100 and result.iterations > 0
    assert "100" in str(info.value) and "--max-cycles" in str(info.value)


def test_a_configuration_that_breaks_a_constraint_is_refused_naming_it(mm8):
    _, descriptor, values = prepared(mm8, DESIGN, ONE_TILE)
    with pytest.raises(DesignError, match="i_t2=3 must divide i_t1=8"):
        simulate(descriptor, {**values, "i_t2": 3})
    with pytest.raises(DesignError, match="k_t2=3 must be a power of two"):
        simulate(descriptor, {**values, "k_t2": 3, "k_t1": 6})


@pytest.fixture(scope="module")
def mm32():
    return compile_kernel(KERNELS / "mm.c", defines=["I=32", "J=32", "K=32"])


# k__j-k.i revisits C at every k tile: at tiles <= 8 it runs 36-80 sequential passes, each paying the
# prologue and the epilogue (a 2-4% miss on such small passes until the drain walk, issue 13)
@pytest.mark.parametrize("design_id", ["i-j__i-j.k", "k__j-k.i"])
def test_model_and_simulator_agree_on_small_mm_designs(mm32, design_id):
    space = mm32
    design = space.design(design_id)
    model = PerformanceModel(space, design, load_device("u250"))
    descriptor = build_descriptor(space, design, model.architecture)
    rng = np.random.default_rng(7)
    errors = []
    for _ in range(2):
        params = random_configuration(design, rng, max_t1={l: 8 for l in design.band_loops})
        report = evaluate_configuration(model, params)
        cycles = simulate(descriptor, report["params"]).cycles
        errors.append(abs(report["latency_cycles"] - cycles) / cycles)
    assert np.mean(errors) < 0.02 and max(errors) < 0.05, errors
