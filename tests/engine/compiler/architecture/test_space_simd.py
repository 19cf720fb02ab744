"""SIMD on a space loop (AutoSA --simd-touch-space --local-reduce) through the descriptor, the model
and the simulator: MM [k] with k_t1 = 16, k_t2 = 4 is 4 PEs of 4 lanes, each reducing its lanes
before passing the partial sums of C on."""
from __future__ import annotations

import pytest

from engine.compiler.architecture.build import build_architecture
from engine.compiler.descriptor import VERSION, build_descriptor
from engine.compiler.expressions import evaluate
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.sim.simulate import simulate

PARAMS = dict(i_t1=16, j_t1=16, k_t1=16, i_t2=4, j_t2=4, k_t2=4)


@pytest.fixture(scope="module")
def mm():
    from engine.resources import KERNELS
    return compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])


def test_descriptor_states_the_space_simd(mm):
    design = mm.design("k__i-j.k__simd-k")
    descriptor = build_descriptor(mm, design, build_architecture(mm, design))
    assert VERSION == "1.9"
    assert descriptor["design"]["simd_on_space"] is True and descriptor["design"]["split_space_loops"] == ["k"]
    assert descriptor["design"]["latency_hiding_loops"] == ["i", "j"]
    assert descriptor["topology"]["pe_grid"] == ["k_t1/k_t2"] and descriptor["topology"]["simd"] == "k_t2"
    assert descriptor["design"]["simd_layout"] == {"B": [1, 0]}  # B[k][j] stored [j][k]: k stride one
    twin = mm.design("k__i-j.k")
    assert build_descriptor(mm, twin, build_architecture(mm, twin))["design"]["simd_on_space"] is False
    # C's partial sums flow along k from PE to PE one element a word; A and B reach a PE k_t2 lanes a word
    fifos = {(f["array"], f["pattern"]): f for f in descriptor["topology"]["fifos"]}
    assert fifos[("C", "pe_chain")]["pack"] == "1"
    assert fifos[("A", "to_pe")]["pack"] == fifos[("B", "to_pe")]["pack"] == "k_t2"
    assert evaluate(descriptor["topology"]["pe_grid"][0], PARAMS) == 4


def test_model_counts_lanes_and_pes(mm):
    model = PerformanceModel(mm, mm.design("k__i-j.k__simd-k"), load_device())
    assert model.evaluate(PARAMS)["DSP"] == 4 * 4 * 5  # 4 PEs x 4 lanes x an fp32 MAC (3 + 2 DSP)
    # 16 MACs a cycle: at least 64^3 / 16 cycles, plus the last (i, j) tile's 16 x 16 block of C drained
    # (the PE sends a tile's block while it computes the next: double-buffered accumulators)
    latency = evaluate_configuration(model, PARAMS)["latency_cycles"]
    assert 64 ** 3 / 16 + 16 * 16 <= latency <= 1.1 * (64 ** 3 / 16 + 16 * 16)


def test_simulator_agrees_with_the_model(mm):
    design = mm.design("k__i-j.k__simd-k")
    model = PerformanceModel(mm, design, load_device())
    arch = model.architecture
    values = {**PARAMS, **{k: int(v) for k, v in model.inferred_packing(PARAMS).items()}}
    simulated = simulate(build_descriptor(mm, design, arch), values)
    latency = evaluate_configuration(model, PARAMS)["latency_cycles"]
    assert abs(simulated.cycles / latency - 1) < 0.05, (simulated.cycles, latency)


def test_lanes_on_a_parallel_space_loop_each_carry_their_own_output():
    """--simd-touch-space on MM [i,j]: j_t2 lanes on j, each PE computing j_t2 elements of C. B and
    the drain of C move j_t2 lanes a word, A (stride 0 along j) one element shared by the lanes; the
    simulator agrees with the model."""
    from engine.resources import KERNELS
    mm = compile_kernel(KERNELS / "mm.c", defines=["I=32", "J=32", "K=32"], simd_touch_space=True)
    design = mm.design("i-j__i-j.k__simd-j")
    descriptor = build_descriptor(mm, design, build_architecture(mm, design))
    assert descriptor["design"]["simd_on_space"] is True and descriptor["design"]["split_space_loops"] == ["i", "j"]
    assert descriptor["topology"]["pe_grid"] == ["i_t1/i_t2", "j_t1/j_t2"]
    fifos = {(f["array"], f["pattern"]): f["pack"] for f in descriptor["topology"]["fifos"]}
    assert fifos[("C", "to_pe")] == fifos[("B", "pe_chain")] == "j_t2" and fifos[("A", "pe_chain")] == "1"
    params = dict(i_t1=8, j_t1=8, k_t1=8, i_t2=2, j_t2=4)
    model = PerformanceModel(mm, design, load_device())
    assert model.evaluate(params)["DSP"] == 4 * 2 * 4 * 5  # 4 x 2 PEs x 4 lanes x an fp32 MAC
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    simulated = simulate(build_descriptor(mm, design, model.architecture), values)
    latency = evaluate_configuration(model, params)["latency_cycles"]
    assert abs(simulated.cycles / latency - 1) < 0.05, (simulated.cycles, latency)
