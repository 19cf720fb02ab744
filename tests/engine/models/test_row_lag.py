"""The model's path of a paired input whose rows of feeders the level above passes their parts
(engine/models/symbolic.py `_last_row_lag`): the last row runs behind the first by where its part
lies in the block in the array's stored order, and after its last feed the PEs still send the last
event alone. Checked against the cycle simulator, which agrees with the timed C simulation of the
export on this design (bench/bench_fidelity.py, docs/sim.md item 6)."""
from __future__ import annotations

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import DramModel, simulate


def test_the_last_row_of_b_feeders_runs_a_stored_order_offset_behind_and_the_last_send_follows():
    """MM j-k__i-k.j__simd-k stores B as [j][k]: B_L2_in's block holds the 4 rows along j one after
    the other, so row 3's B_L1_in (the largest term) runs 96 cycles behind row 0's, and the PEs then
    send their last event alone. Model 1,143 against 1,234 simulated (timed C simulation 1,235)
    before; the declared order [k][j] put every row's part across the whole block."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "26", "J": "64", "K": "32"}, simd_touch_space=True)
    model = PerformanceModel(space, space.design("j-k__i-k.j__simd-k"), load_device())
    params = {"i_t1": 13, "i_t2": 1, "j_t1": 64, "j_t2": 16, "k_t1": 32, "k_t2": 4}
    latency = evaluate_configuration(model, params)["latency_cycles"]
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    simulated = simulate(descriptor, values, dram=DramModel(model.device.dram_ports())).cycles
    assert abs(latency / simulated - 1) < 0.02
