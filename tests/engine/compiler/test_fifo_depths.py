"""FIFO depths (engine/compiler/fifo_depths.py): the default of 2 words, row FIFOs that hold two
blocks of their row, FIFOs into PEs that hold the PEs' skew, the same rules in the model's block-RAM
and LUT counts and in the exported code, and - through the cycle simulator - why: with 2-word row
FIFOs the rows of a 2-D array take turns, with 2-word PE FIFOs every tile pays the skew again."""
from __future__ import annotations

import pytest
import sympy

from engine.compiler import topology
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.fifo_depths import (
    DEFAULT_DEPTH,
    SRL_WORDS,
    architecture_fifo_depth,
    architecture_skew_depth,
    fifo_depths,
    fifo_storage,
)
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import simulate

# a 2-D array (i, k in space) whose A[i][k] has one level-1 module per PE, in 5 rows of 12
DESIGN = "i-k__i-j.k"
PARAMS = {"i_t1": 60, "j_t1": 28, "k_t1": 12, "i_t2": 12, "j_t2": 4}


@pytest.fixture(scope="module")
def prepared():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    model = PerformanceModel(space, space.design(DESIGN), load_device())
    report = evaluate_configuration(model, PARAMS)
    return model, build_descriptor(space, model.design, model.architecture), report


def test_row_fifos_hold_two_row_blocks_and_the_others_two_words(prepared):
    _, descriptor, report = prepared
    values = report["params"]
    depths = fifo_depths(descriptor, values)
    row = ("A_L2_in", "A_L1_in", "A", "to_row_heads")
    # 12 modules per row, each buffering i_t2 = 12 elements, 4 elements per word, two blocks
    assert depths[row] == 2 * 12 * 12 // values["A_in_pack_l2"] == 72
    # the PEs' skew: partial sums pass along k (12 PEs, 14 - 2 cycles each), so the operand FIFOs into
    # the PEs hold one tile of PE iterations (i_t2 * j_t1 / j_t2 = 84), not 11 * 12 words
    skewed = {("A_L1_in", "PE", "A", "to_pe"), ("B_L2_in", "PE", "B", "to_boundary_pe")}
    assert {depths[k] for k in skewed} == {84}
    assert {d for k, d in depths.items() if k != row and k not in skewed} == {DEFAULT_DEPTH}


def test_the_model_counts_the_block_ram_of_deep_fifos_with_the_same_rule(prepared):
    model, descriptor, report = prepared
    arch = model.architecture
    modules = {m.name: m for m in arch.modules}
    numeric = fifo_depths(descriptor, report["params"])
    for f in arch.fifos:
        symbolic = architecture_fifo_depth(f, modules, arch)
        values = {sympy.Symbol(k): v for k, v in report["params"].items()}
        assert int(symbolic.subs(values)) == numeric[(f.source, f.target, f.array, f.pattern)]
    # 5 FIFOs of 72 x 128 bits: 4 block RAMs each, on top of the buffers
    assert report["bram18k_by_array"]["A"] >= 5 * 4


def test_two_word_row_fifos_make_the_rows_take_turns(prepared, monkeypatch):
    model, descriptor, report = prepared
    values = report["params"]
    with_rule = simulate(descriptor, values).cycles
    monkeypatch.setattr(topology, "fifo_depth", lambda fifo, values, descriptor: DEFAULT_DEPTH)
    shallow = simulate(descriptor, values).cycles
    monkeypatch.setattr(topology, "fifo_depth", lambda fifo, values, descriptor: 1024)
    unbounded = simulate(descriptor, values).cycles
    assert shallow > 2.5 * unbounded  # the rows of A's network served one after the other
    assert with_rule < 1.05 * unbounded
    assert abs(report["latency_cycles"] - with_rule) / with_rule < 0.10


def test_pe_fifos_hold_the_skew_of_a_reduction_chain():
    """MM `k__i-j.k`: 8 PEs pass partial sums along k; their operand FIFOs hold one tile (64 words)."""
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    model = PerformanceModel(space, space.design("k__i-j.k"), load_device())
    params = {"i_t1": 16, "j_t1": 16, "k_t1": 8, "i_t2": 4, "j_t2": 4}
    report = evaluate_configuration(model, params)
    descriptor = build_descriptor(space, model.design, model.architecture)
    values = report["params"]
    depths = fifo_depths(descriptor, values)
    assert depths[("A_L1_in", "PE", "A", "to_pe")] == depths[("B_L1_in", "PE", "B", "to_pe")] == 64
    assert fifo_storage(next(f for f in descriptor["topology"]["fifos"] if f["pattern"] == "to_pe"),
                        values, descriptor) == "srl"
    # the model counts their shift registers: 8 PEs x (32 + 128 bits) x ceil(64 / 32) LUTs
    without = model.symbolic.resources["LUT"] - sum(
        f.count * f.width_bits * sympy.ceiling(architecture_skew_depth(f, model.architecture) / SRL_WORDS)
        for f in model.architecture.fifos if architecture_skew_depth(f, model.architecture) is not None)
    subs = {sympy.Symbol(k): v for k, v in values.items()}
    assert report["lut"] - float(without.subs(subs)) == pytest.approx(8 * (32 + 128) * 2)
    simulated = simulate(descriptor, values).cycles
    # the project's fidelity bound: the simulator moves the exported loader's words in its order and
    # equals the timed C simulation here (17,420 cycles); the model is 3.9% under it
    assert abs(report["latency_cycles"] - simulated) / simulated < 0.05
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(topology, "fifo_depth", lambda fifo, values, descriptor: DEFAULT_DEPTH)
        shallow = simulate(descriptor, values).cycles
    # since the PEs double-buffer their accumulators (an event's results leave while the next one
    # computes), the chain's skew is absorbed there too: shallow FIFOs cost nothing on this design,
    # and the deep ones must never cost time
    assert shallow >= simulated
