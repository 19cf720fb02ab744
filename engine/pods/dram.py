"""`Tiling` + the scheduler's block order + `PodSystem` -> `DramStream`: when each tile operation's
off-chip data is on chip.

SOSA runs every benchmark at batch one (an online setting) with HBM behind the banks (section 5: "HBM
memory as in TPUv3"). What comes from DRAM is read once: the stored weights (W tiles of GEMMs whose
weights are not computed by an earlier layer) and the network input (X tiles of the first layers).
The stream fetches those tiles one after the other, in the order the scheduler first needs them, at
the technology's DRAM bandwidth from cycle 0 (an ideal prefetcher: it never waits for the pods and
never refetches, so SRAM is assumed to hold what it runs ahead; SOSA's 256 KB banks are sized so
its benchmarks' working sets fit, section 6.4). A tile operation can start in the first slice that
begins after its tiles have arrived.

At batch one a transformer's weights are used by few rows (SOSA's sequence length 100), so its layers
wait on this stream; a CNN at 299x299 reuses each weight tile over hundreds of rows and hides it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.pods.system import PodSystem
from engine.pods.technology import Technology
from engine.pods.tiling import Tiling
from engine.pods.workload import PodWorkload


@dataclass(frozen=True)
class DramStream:
    op_ready_slice: np.ndarray  # first slice each op may start in (its DRAM tiles arrived)
    bytes: int                  # bytes read from DRAM (each stored weight and input tile once)
    cycles: float               # cycles the stream takes at the technology's bandwidth


def workload_dram_bytes(workload: PodWorkload, technology: Technology) -> int:
    """The bytes the stream reads for a workload, in closed form (the granularity sweep's bound)."""
    stored = sum(g.depth * g.cols for g in workload.gemms if not g.weights_from)
    inputs = sum(g.rows * g.depth for g in workload.gemms if not g.inputs)
    return stored * technology.weight_bytes + inputs * technology.activation_bytes


def dram_tile_bytes(tiling: Tiling, system: PodSystem) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each op reads from DRAM for its W tile and its X tile (0 where the tile is on chip:
    computed by an earlier layer)."""
    t = system.technology
    gemm = tiling.block_gemm[tiling.op_block]
    w = np.where(tiling.gemm_stored_weights[gemm], tiling.op_depth * tiling.op_cols * t.weight_bytes, 0)
    x = np.where(tiling.gemm_input[gemm], tiling.op_rows * tiling.op_depth * t.activation_bytes, 0)
    return w.astype(np.int64), x.astype(np.int64)


def dram_stream(tiling: Tiling, order: np.ndarray, system: PodSystem) -> DramStream:
    """The stream for ops taken block by block in `order` (`scheduler.block_order`)."""
    ops = tiling.ops
    if ops == 0:
        return DramStream(np.zeros(0, dtype=np.int64), 0, 0.0)
    counts = tiling.block_op_count[order]
    starts = tiling.block_first_op[order]
    op_order = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    # each tile is fetched at its first use (a later op reading the same tile adds nothing); an op
    # waits for the stream up to the first use of each of its DRAM tiles, a tile computed on chip
    # for nothing
    fetched = np.zeros(ops, dtype=np.int64)
    uses = []
    for tiles, sizes in zip((tiling.op_w_tile, tiling.op_x_tile), dram_tile_bytes(tiling, system)):
        _, first, inverse = np.unique(tiles[op_order], return_index=True, return_inverse=True)
        sizes = sizes[op_order]
        fetched[first] += sizes[first]
        uses.append((first[inverse], sizes > 0))
    arrived = np.cumsum(fetched)  # bytes on chip once the op at this position has its tiles
    need = np.zeros(ops, dtype=np.int64)
    for first_use, from_dram in uses:
        need = np.maximum(need, np.where(from_dram, arrived[first_use], 0))
    per_cycle = system.technology.dram_bytes_per_cycle
    ready = np.empty(ops, dtype=np.int64)
    ready[op_order] = np.ceil(need / per_cycle / system.slice_cycles).astype(np.int64)
    total = int(fetched.sum())
    return DramStream(ready, total, total / per_cycle)
