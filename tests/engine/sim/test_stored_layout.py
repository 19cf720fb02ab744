"""The simulator places each instance's part of its chain's block where the exported loaders walk it:
in the array's stored order (descriptor design.simd_layout), not the order of its subscripts."""
from __future__ import annotations

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.sim import DramModel
from engine.sim.hardware import build_network
from engine.sim.kernel import run


def _load_ends(descriptor: dict, values: dict, dram) -> dict[str, int]:
    net = build_network(descriptor, values, DramModel(dram))
    run(net.threads, net.fifos, 10 ** 7)
    return {th.name: th.end for th in net.threads}


def test_the_rows_of_b_get_their_parts_a_quarter_block_apart_in_the_stored_order():
    """MM j-k__i-k.j__simd-k stores B[k][j] as [j][k] (SIMD along k), so B_L2_in's block holds the 4
    rows along j one after the other: row 3's feeders start 3/4 of a block (64 x 32 / 16 = 128 words
    at a word a cycle: 96 cycles) after row 0's and stay that far behind. In [k][j] order the rows'
    parts interleave and the rows end a hop apart (the simulator's figure before; the timed C
    simulation of the export: 1,235 cycles, simulated 1,144 then, 1,234 now)."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "26", "J": "64", "K": "32"}, simd_touch_space=True)
    model = PerformanceModel(space, space.design("j-k__i-k.j__simd-k"), load_device())
    params = {"i_t1": 13, "i_t2": 1, "j_t1": 64, "j_t2": 16, "k_t1": 32, "k_t2": 4}
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    assert descriptor["design"]["simd_layout"] == {"B": [1, 0]}
    dram = model.device.dram_ports()
    stored = _load_ends(descriptor, values, dram)
    declared = _load_ends({**descriptor, "design": {**descriptor["design"], "simd_layout": {}}}, values, dram)
    gap = lambda ends: ends["B_L1_in(3,0).load"] - ends["B_L1_in(0,0).load"]  # noqa: E731
    assert 96 <= gap(stored) <= 96 + 12
    assert gap(declared) <= 12  # a hop (3 cycles) a row
