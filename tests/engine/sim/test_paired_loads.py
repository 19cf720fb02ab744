"""A double-buffered input module runs as the exporter writes it (engine/export/io_modules.py): the
first block loaded alone, then per block a call pair `load(next block) || feed(every tile of this
block)` joined before the next pair (issue 27: pairs joined per tile held a block's later tiles behind
its load, 29% slower in the timed C simulation of MM 128^3 k__i-k.j; the export pairs per block now).
The exported structure itself is checked in tests/engine/export/test_hls_kernel.py."""
from __future__ import annotations

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.sim.hardware import build_network

DESIGN = "k__i-k.j"
# 16 PEs along k; A[i][k] is a block per i tile (4 of them), fed over the 2 j tiles of the block
PARAMS = {"i_t1": 4, "i_t2": 4, "j_t1": 8, "j_t2": 8, "k_t1": 16}


@pytest.fixture(scope="module")
def prepared():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=16", "J=16", "K=16"])
    model = PerformanceModel(space, space.design(DESIGN), load_device("u250"))
    descriptor = build_descriptor(space, model.design, model.architecture)
    values = {**PARAMS, **{k: int(v) for k, v in model.inferred_packing(PARAMS).items()}}
    return descriptor, values


def token_ops(segment, name: str, side: str) -> int:
    ops = segment.reads if side == "read" else segment.writes
    return sum(op.count for op in ops if op.fifo.name.endswith(name))


def test_a_block_feeds_all_its_tiles_beside_the_next_blocks_load(prepared):
    descriptor, values = prepared
    threads = {t.name: t for t in build_network(descriptor, values).threads}
    load, feed = list(threads["A_L1_in(0).load"].segments), list(threads["A_L1_in(0).feed"].segments)
    blocks, tiles = 4, 8
    assert len(load) == blocks and len(feed) == tiles
    # every load hands over one `loaded` token; load b (b >= 2) waits for block b - 2's feed (the
    # feed before its pair); load 1 runs beside block 0's feed, free from the start
    assert [token_ops(s, " loaded", "write") for s in load] == [1] * blocks
    assert [token_ops(s, " fed", "read") for s in load] == [0, 0, 1, 1]
    # a block's first tile waits for its load; its second follows the first only
    assert [token_ops(s, " loaded", "read") for s in feed] == [1, 0, 1, 0, 1, 0, 1, 0]
    # the last tile of blocks 0 and 1 lets the loads of blocks 2 and 3 start
    assert [token_ops(s, " fed", "write") for s in feed] == [0, 1, 0, 1, 0, 0, 0, 0]
