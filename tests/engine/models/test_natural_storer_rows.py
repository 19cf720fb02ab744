"""A natural-layout storer behind a reduction chain of PEs (docs/sim.md item 11): where the design's
last space loop sums the output from PE to PE (MM j-k__j-k.i__simd-k: k, which C[i][j] does not
index), the exported storer walks only the PE loops of the space loops that index the array (j), so
with PE boxes of one row and one tile along the row it writes C row after row, one incrementing
address: one long burst a run, a word a cycle. The model and the simulator take their runs from the
compiler (engine/compiler/architecture/dram_runs.py, the storer's `box_rows` from io_network.py
`row_of_boxes`), which took the storer's innermost PE loop to be the design's last space loop (k)
and so charged one-beat bursts (65/16 cycles a word), naming the storer the bottleneck.

`row_of_boxes` now compares the array's innermost-dimension space loops with the last space loop
that indexes the array (model / simulator / timed C simulation 1,478 / 1,474 / 1,373 before,
1,371 / 1,373 / 1,373 after); the test fails without it."""
from __future__ import annotations

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import DramModel, simulate


def test_a_storer_of_whole_rows_behind_a_reduction_chain_writes_a_word_a_cycle():
    """MM 32x128x32 j-k__j-k.i__simd-k 1/1/128/16/32/16 (i_t1/i_t2/j_t1/j_t2/k_t1/k_t2): C's port is
    natural (partial results could be read back), its storer writes 32 rows of 8 words, one
    after another (C[(i_tile + d0) * 8 + j_pe + w1], timed C simulation: 4 bursts of 64 beats)."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "32", "J": "128", "K": "32"})
    model = PerformanceModel(space, space.design("j-k__j-k.i__simd-k"), load_device())
    params = {"i_t1": 1, "i_t2": 1, "j_t1": 128, "j_t2": 16, "k_t1": 32, "k_t2": 16}
    evaluation = model.evaluate(params)
    words = 32 * 128 // 16
    # a word a cycle and a pipeline drain per row; one-beat bursts would cost about 4 cycles a word
    assert float(evaluation["module:C_L3_out"]) <= words + 2 * 32
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    simulated = simulate(descriptor, values, dram=DramModel(model.device.dram_ports())).cycles
    assert simulated == 1373  # the timed C simulation of the export
    assert abs(evaluate_configuration(model, params)["latency_cycles"] / simulated - 1) < 0.01
