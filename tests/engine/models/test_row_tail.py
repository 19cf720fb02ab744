"""The input path's last-row tail (engine/models/symbolic.py `_last_row_tail`, docs/sim.md item 11):
after the level that splits a group's rows has passed on its last block, the last row's head still
loads its part of it at its own pace. Checked against the cycle simulator, which agrees with the
timed C simulation of the export on these designs (bench/bench_fidelity.py)."""
from __future__ import annotations

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import DramModel, simulate


def model_and_simulator(size_i: int, size_j: int, size_k: int, design: str, params: dict) -> tuple[float, int]:
    """(the model's latency, the cycle simulator's cycles) of MM IxJxK `design` at `params`."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": str(size_i), "J": str(size_j), "K": str(size_k)})
    model = PerformanceModel(space, space.design(design), load_device())
    latency = evaluate_configuration(model, params)["latency_cycles"]
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    return latency, simulate(descriptor, values, dram=DramModel(model.device.dram_ports())).cycles


def test_the_last_row_of_feeders_loads_its_part_of_the_last_block_after_the_loader():
    """MM 18x8x64 i-k__j-k.i 18/1/2/1/64 (i_t1/i_t2/j_t1/j_t2/k_t1), the searched best of MM 64^3
    scaled down: A's DRAM loader is the longest stage; A_L2_in, a chain of 18 along i, passes each
    row its part of the block, row 17's 4 words of 72 last, and row 17's A_L1_in head unpacks them
    into 64 elements, one a cycle, before the row's 2 feeders along j have their last block. The
    model ended A's path one PE block after the loader's last word: 665 cycles against 704 (timed C
    simulation 704)."""
    latency, simulated = model_and_simulator(18, 8, 64, "i-k__j-k.i",
                                             {"i_t1": 18, "i_t2": 1, "j_t1": 2, "j_t2": 1, "k_t1": 64})
    assert simulated == 704
    assert abs(latency / simulated - 1) < 0.01


def test_a_part_spread_over_the_whole_block_adds_no_tail():
    """MM 64^3 j-k__i-k.j 64/2/32/4/64, the searched best: B_L2_in passes its 8 rows their parts of
    B[k][j] interleaved over the whole block, so each row's head loads beside it and ends with it
    (model 1,877 against the simulator's 1,875; a tail from the part's share of the block alone
    said 1,941)."""
    latency, simulated = model_and_simulator(64, 64, 64, "j-k__i-k.j",
                                             {"i_t1": 64, "i_t2": 2, "j_t1": 32, "j_t2": 4, "k_t1": 64})
    assert simulated == 1875
    assert abs(latency / simulated - 1) < 0.01
