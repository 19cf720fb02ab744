"""`Tiling` + the scheduler's block order + `PodSystem` -> `DramStream`: when each tile operation's
off-chip data is on chip.

SOSA runs every benchmark at batch one (an online setting) with HBM behind the banks (section 5: "HBM
memory as in TPUv3"). What comes from DRAM is read once: the stored weights (W tiles of GEMMs whose
weights are not computed by an earlier layer) and the network input (X tiles of the first layers).
The stream fetches those tiles one after the other, in the order the scheduler first needs them, at
the technology's DRAM bandwidth from cycle 0 (an ideal prefetcher: it never waits for the pods and
never refetches, so SRAM is assumed to hold what it runs ahead; SOSA's 256 KB banks are sized so
its benchmarks' working sets fit, section 6.4).

A tile that arrives is written into the bank that holds it (tile t in bank t mod N, X and W banks
apart), and SOSA's banks are single-ported (4.2): the write takes the bank's port for a slice, in
which no pod reads that bank. The fill goes in the slice its last byte arrives, or, when that
bank's port already takes an earlier fill there, in the bank's next slice without one (the tile
waits in the stream's staging buffer; the stream itself does not stop). A tile operation can start
in the first slice after its tiles' fills.

At batch one a transformer's weights are used by few rows (SOSA's sequence length 100), so its layers
wait on this stream; a CNN at 299x299 reuses each weight tile over hundreds of rows and hides it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.pods.system import PodSystem
from engine.pods.technology import Technology
from engine.pods.tiling import Tiling
from engine.pods.workload import PodWorkload


@dataclass(frozen=True)
class DramStream:
    op_ready_slice: np.ndarray  # first slice each op may start in (its DRAM tiles written to their banks)
    bytes: int                  # bytes read from DRAM (each stored weight and input tile once)
    cycles: float               # cycles the stream takes at the technology's bandwidth
    fill_slice: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # per fetched tile,
    #                             in fetch order: the slice its write takes its bank's port
    fill_bank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    fill_x: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))  # an X bank (else a W bank)
    fill_tile: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # the tile written


def workload_dram_bytes(workload: PodWorkload, technology: Technology) -> int:
    """The bytes the stream reads for a workload, in closed form (the granularity sweep's bound)."""
    stored = sum(g.depth * g.cols for g in workload.gemms if not g.weights_from)
    inputs = sum(g.rows * g.depth for g in workload.gemms if not g.inputs)
    return stored * technology.weight_bytes + inputs * technology.activation_bytes


def workload_dram_cycles(workload: PodWorkload, system: PodSystem) -> float:
    """The fewest cycles the stream can take, in closed form (the granularity sweep's bound): its bytes
    at the DRAM's bandwidth, and at least the slices its bank writes need, one tile per bank and slice
    (W tiles r x c, input tiles of SOSA's tiling r x r, each kind over its N banks)."""
    r, c, n = system.rows, system.cols, system.pods
    w_tiles = sum(-(-g.depth // r) * -(-g.cols // c) for g in workload.gemms if not g.weights_from)
    x_tiles = sum(-(-g.rows // r) * -(-g.depth // r) for g in workload.gemms if not g.inputs)
    fills = -(-max(w_tiles, x_tiles) // n) * system.slice_cycles
    return max(workload_dram_bytes(workload, system.technology) / system.technology.dram_bytes_per_cycle, fills)


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
    # each tile is fetched at its first use (a later op reading the same tile adds nothing), W before
    # X at the same use; an op waits for the fills of its DRAM tiles, a tile computed on chip for nothing
    position, tile, size, is_x, first_uses = [], [], [], [], []
    for x, (tiles, sizes) in enumerate(zip((tiling.op_w_tile, tiling.op_x_tile), dram_tile_bytes(tiling, system))):
        _, first, inverse = np.unique(tiles[op_order], return_index=True, return_inverse=True)
        sizes = sizes[op_order]
        fetched = first[sizes[first] > 0]
        position.append(fetched)
        tile.append(tiles[op_order][fetched])
        size.append(sizes[fetched])
        is_x.append(np.full(len(fetched), bool(x)))
        first_uses.append((first[inverse], sizes > 0))
    position, tile, size, is_x = (np.concatenate(a) for a in (position, tile, size, is_x))
    fetch = np.lexsort((is_x, position))  # fetch order
    tile, size, is_x, position = tile[fetch], size[fetch], is_x[fetch], position[fetch]
    per_cycle = system.technology.dram_bytes_per_cycle
    arrived = np.cumsum(size)  # bytes on chip once this tile's last byte is in
    fill = np.maximum(np.ceil(arrived / per_cycle / system.slice_cycles).astype(np.int64) - 1, 0)
    bank = tile % system.pods
    fill = _one_fill_per_port(fill, bank + is_x * system.pods)
    # the slice an op's tiles are written by: its W and X tiles' fills, looked up by first use
    fill_at = np.full(ops, -1, dtype=np.int64)  # per position in op_order: fill slice of the tile fetched there
    ready = np.zeros(ops, dtype=np.int64)
    for x, (first_use, from_dram) in enumerate(first_uses):
        mine = is_x == bool(x)
        fill_at[:] = -1
        fill_at[position[mine]] = fill[mine]
        ready = np.maximum(ready, np.where(from_dram, fill_at[first_use] + 1, 0))
    op_ready = np.empty(ops, dtype=np.int64)
    op_ready[op_order] = ready
    total = int(size.sum())
    return DramStream(op_ready, total, total / per_cycle, fill, bank, is_x, tile)


def _one_fill_per_port(fill: np.ndarray, port: np.ndarray) -> np.ndarray:
    """Fill slices (in fetch order, non-decreasing) moved so no port takes two in a slice: each fill
    goes in its own slice or the port's next one after its previous fill (g_k = max(f_k, g_{k-1} + 1)
    per port, i.e. g_k = k + running max of f_k - k)."""
    if len(fill) == 0:
        return fill
    by_port = np.argsort(port, kind="stable")
    p, f = port[by_port], fill[by_port]
    new_port = np.r_[True, p[1:] != p[:-1]]
    group_start = np.flatnonzero(new_port)
    k = np.arange(len(f)) - np.repeat(group_start, np.diff(np.r_[group_start, len(f)]))
    # a running max restarted per port: lift each port's values above every earlier port's
    lift = (np.cumsum(new_port) - 1) * (int(f.max()) + len(f) + 1)
    moved = np.maximum.accumulate(f - k + lift) - lift + k
    out = np.empty_like(fill)
    out[by_port] = moved
    return out
