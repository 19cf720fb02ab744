"""`Tiling` + `PodSystem` -> `Schedule`: SOSA's offline scheduler (section 4.2).

Time is cut into slices of `system.slice_cycles`; the pods run in lockstep. Tile operations are taken
in the tiling's order. For each, the scheduler finds the earliest slice its row block's dependences
allow (every producer block written back by the post-processor, one slice after its last tile
operation), then, slice after slice, the idle pods and banks and a routing the interconnect admits:
- its X tile is read from the bank that holds it, its W tile from the bank that holds it (tiles are
  interleaved over the banks in creation order: tile t lives in bank t mod N); a bank is single
  ported, so it serves one tile per slice, and none in a slice its port takes a tile from DRAM
  (`dram.py`); pods reading the same tile in a slice share that read (the interconnect multicasts it);
- the partial sum goes to an idle P bank (the pod's own bank first);
- the three routes (X bank -> pod, W bank -> pod, pod -> P bank) must be admitted by their
  interconnects together with the routes already in the slice; every idle pod is tried.
A tile operation longer than a slice (the conventional tiling) holds its pod, its X and P banks and
their routes for all its slices and reads W in the first.

Partial sums over a reduction (tiling's `aggregation`): all summed by the post-processor, all chained
(an op reads its predecessor's partial sum from the bank it wrote, after it), or "mixed", SOSA's
choice per partial sum (4.2): an op is chained where the slice it can run in also takes it chained,
else its chain is cut there when the post-processor has an idle unit in the slot both partial sums
exist (`schedule_kernel._place_mixed`); a reduction's sum is the pairwise tree of its chains' sums.

Multi-tenancy is a tiling of several workloads: their tile operations fill each other's holes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import EngineError

from engine.pods.dram import DramStream, dram_stream
from engine.pods.system import PodSystem
from engine.pods.schedule_kernel import FILL, FREE, run_kernel
from engine.pods.tiling import Tiling

POST_PROCESS_SLICES = 1  # the post-processor sums a block's partial sums in the slice after its last op


@dataclass(frozen=True)
class Schedule:
    system: PodSystem
    tiling: Tiling
    slice_cycles: int
    slices: int               # slices used
    op_slice: np.ndarray      # first slice of each tile operation
    op_span: np.ndarray       # slices it holds its pod
    op_pod: np.ndarray
    op_x_bank: np.ndarray
    op_w_bank: np.ndarray
    op_p_bank: np.ndarray
    op_x_plane: np.ndarray    # interconnect plane of each route (0 unless Butterfly-k, k > 1)
    op_w_plane: np.ndarray
    op_p_plane: np.ndarray
    op_q_bank: np.ndarray     # bank a chained op reads its input partial sum from (-1: none)
    op_q_plane: np.ndarray
    block_ready: np.ndarray   # first slice a row block's output can be read
    post_processors: int = 0  # tile aggregations the post-processor completes per slice (0: unbounded)
    post_used: np.ndarray | None = None  # aggregations per slice when bounded
    op_alone: np.ndarray | None = None      # mixed: the op's reduction chain was cut before it (its partial
    #                                         sum goes to the post-processor)
    op_sum_ready: np.ndarray | None = None  # mixed: a reduction's last op: the slice its sum is ready; else its end
    dram: DramStream | None = None          # when each op's off-chip tiles are on chip


def op_spans(tiling: Tiling, system: PodSystem) -> np.ndarray:
    """Slices each tile operation needs: its rows streamed, at least r (the weight buffering time),
    plus the array's fill and drain (`PodSystem.op_cycles`)."""
    cycles = system.op_cycles(tiling.op_rows)
    return -(-cycles // system.slice_cycles)


def block_order(tiling: Tiling, first: int | None = None) -> np.ndarray:
    """The order blocks are scheduled in (each workload's blocks keep the tiling's order, so every
    block comes after the blocks it reads): with several workloads, `first=None` interleaves them in
    proportion to their block counts, so no tenant gets every slice first; `first=w` takes workload
    w's blocks first and the others after, filling the slots w leaves idle (SOSA's list of tile
    operations, each at its earliest slice)."""
    blocks = len(tiling.block_workload)
    if blocks == 0 or tiling.block_workload.max() == 0:
        return np.arange(blocks, dtype=np.int64)
    if first is not None:
        return np.argsort(tiling.block_workload != first, kind="stable").astype(np.int64)
    counts = np.bincount(tiling.block_workload)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.arange(blocks) - starts[tiling.block_workload]
    return np.argsort((position + 0.5) / counts[tiling.block_workload], kind="stable").astype(np.int64)


class _State:
    """Per-slice state, grown on demand: busy pods (and how many are idle), the tile each bank serves,
    the partial-sum banks' ports (and how many are free), each router's receivers and (Butterfly) the
    source bank on each link of each plane."""

    def __init__(self, system: PodSystem):
        network = system.interconnect
        self.ports = system.pods
        if self.ports > np.iinfo(np.int16).max:
            raise EngineError(f"{self.ports} pods: the scheduler handles at most {np.iinfo(np.int16).max}")
        self.planes = network.expansion if network.blocking else 1
        self.stages = max(1, int(np.log2(self.ports))) if self.ports > 1 else 1
        self.link_count = self.stages * self.ports if network.blocking else 1
        self.arrays: dict[str, np.ndarray] = {}
        self.grow(64)

    def reserve_fills(self, dram: DramStream) -> None:
        """The DRAM stream's writes take their banks' ports in their slices (single-ported banks)."""
        if len(dram.fill_slice):
            self.grow(max(len(self.arrays["idle"]), int(dram.fill_slice.max()) + 64))
        for key, mine in (("x_bank_tile", dram.fill_x), ("w_bank_tile", ~dram.fill_x)):
            self.arrays[key][dram.fill_slice[mine], dram.fill_bank[mine]] = FILL

    def shapes(self, slices: int) -> dict[str, tuple]:
        n = self.ports
        links = (slices, self.planes, self.link_count)
        return {"busy": (slices, n), "p_port": (slices, n), "idle": (slices,), "p_free": (slices,), "x_bank_tile": (slices, n),
                "w_bank_tile": (slices, n), "x_recv": (slices, n), "w_recv": (slices, n), "p_recv": (slices, n),
                "q_recv": (slices, n), "x_links": links, "w_links": links, "p_links": links, "q_links": links}

    def grow(self, slices: int) -> None:
        old = len(self.arrays["idle"]) if self.arrays else 0
        for key, shape in self.shapes(slices).items():
            if key in ("busy", "p_port"):
                fresh = np.zeros(shape, dtype=np.bool_)
            elif key in ("idle", "p_free"):
                fresh = np.full(shape, self.ports, dtype=np.int64)
            elif key.endswith("_tile"):
                fresh = np.full(shape, FREE, dtype=np.int64)
            else:  # bank and pod numbers: int16 keeps ResNet50 on 512 pods within a few hundred MB
                fresh = np.full(shape, FREE, dtype=np.int16)
            if old:
                fresh[:old] = self.arrays[key]
            self.arrays[key] = fresh


def block_aggregations(tiling: Tiling) -> np.ndarray:
    """Tile aggregations the post-processor does for each row block: summing the partial sums of a
    reduction over j takes (ops in it - 1) two-tile additions; chained operations need none."""
    ops = tiling.block_op_count
    chained = np.bincount(tiling.op_block[tiling.op_pred >= 0], minlength=len(ops))
    sums = ops - chained  # partial sums that reach the post-processor
    columns = -(-tiling.gemm_sizes[tiling.block_gemm, 2] // tiling.cols) if len(ops) else ops
    return np.maximum(0, sums - columns).astype(np.int64)


def schedule(tiling: Tiling, system: PodSystem, post_processors: int = 0, first: int | None = None) -> Schedule:
    """`post_processors` > 0 bounds the tile aggregations the SIMD post-processor completes per slice
    (SOSA 4.2: post-processors sum two partial-sum tiles in a slice, in pairs); 0 leaves them unbounded.
    `first`: with several workloads, the one whose blocks are taken first (`block_order`)."""
    if (tiling.rows, tiling.cols) != (system.rows, system.cols):
        raise ValueError(f"tiling is for {tiling.rows}x{tiling.cols}, system is {system.shape}")
    if post_processors < 0:
        raise EngineError(f"post-processor units must be 0 (unbounded) or more, got {post_processors}")
    mixed = tiling.aggregation == "mixed"
    if system.pods < 2 and not mixed and np.any(tiling.op_pred >= 0):
        raise EngineError("chained partial sums need at least 2 pods: a chained operation reads its input "
                          "partial sum from one single-ported bank and writes its output to another "
                          "(use --aggregation post-processor for one pod)")
    aggs = block_aggregations(tiling)
    spans = op_spans(tiling, system).astype(np.int64)
    deps = tiling.block_deps
    dep_ptr = np.zeros(len(deps) + 1, dtype=np.int64)
    dep_ptr[1:] = np.cumsum([len(d) for d in deps])
    dep_idx = np.asarray([b for d in deps for b in d], dtype=np.int64)
    ready = np.zeros(len(deps), dtype=np.int64)
    order = block_order(tiling, first)
    dram = dram_stream(tiling, order, system)
    out = np.zeros((tiling.ops, 14), dtype=np.int64)
    starts = np.append(np.flatnonzero(tiling.op_pred < 0), tiling.ops)  # reductions: from each op without pred
    sums = np.zeros(int(np.diff(starts).max(initial=0)) + 2 if mixed else 2, dtype=np.int64)
    state = _State(system)
    state.reserve_fills(dram)
    a = state.arrays
    post_free = np.full(len(a["idle"]), post_processors, dtype=np.int64)
    has_succ = np.zeros(tiling.ops, dtype=np.bool_)
    has_succ[tiling.op_pred[tiling.op_pred >= 0]] = True
    block = op = end = first_open = 0
    while True:
        block, op, end, first_open, overflow = run_kernel(
            block, op, end, order, spans, dram.op_ready_slice, tiling.op_x_tile, tiling.op_w_tile, tiling.op_pred, tiling.block_first_op,
            tiling.block_op_count, dep_ptr, dep_idx, ready, POST_PROCESS_SLICES, out, a["busy"], a["idle"],
            a["x_bank_tile"], a["w_bank_tile"], a["p_port"], a["x_recv"], a["w_recv"], a["p_recv"], a["q_recv"],
            a["x_links"], a["w_links"], a["p_links"], a["q_links"], system.interconnect.blocking, state.planes,
            state.stages, state.ports, first_open, aggs, post_free, post_processors > 0, has_succ, a["p_free"],
            mixed, sums)
        if not overflow:
            break
        size = max(2 * len(a["idle"]), first_open + int(spans[min(op, len(spans) - 1)]) + 64)
        state.grow(size)
        a = state.arrays
        grown = np.full(len(a["idle"]), post_processors, dtype=np.int64)
        grown[:len(post_free)] = post_free
        post_free = grown
    used = int(np.max(out[:, 0] + spans)) if tiling.ops else 0
    return Schedule(system, tiling, system.slice_cycles, used, out[:, 0], spans, out[:, 1], out[:, 2], out[:, 3],
                    out[:, 4], out[:, 5], out[:, 6], out[:, 7], out[:, 8], out[:, 9], ready, post_processors,
                    post_processors - post_free if post_processors > 0 else None,
                    out[:, 10] > 0 if mixed else None, out[:, 11].copy() if mixed else None, dram)
