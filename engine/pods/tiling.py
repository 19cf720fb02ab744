"""A `PodWorkload` + an r x c array -> `Tiling`: the tile operations, their row blocks and dependences.

A tile operation is x_ij (k x r block of X) times w_jl (r x c block of W) -> partial sum y_ijl. W is
cut into r x c tiles to fit the array; X's columns must follow W's rows (r); X's rows are cut into
partitions of k rows:
- SOSA's tiling (`partition=None` -> k = r, the array's row count): the most tile operations that do
  not stall a pod, since a pod needs r cycles to buffer the next weights (SOSA section 3.3);
- the conventional tiling (`conventional=True`): X's rows are not partitioned (k = d1), one long tile
  operation per weight tile (AI-MT);
- any other `partition` (SOSA Fig. 12b's sweep).
The partial sums y_ijl over j are summed by the post-processors into the output block y_il; a row
block (gemm, i) is done when all its tile operations are and its sum is written.

Dependences are between row blocks: a block reads the producer rows its X rows map to (scaled to
the producer's row count and widened by the halo) and all of every `weights_from` producer.

The tiling and the schedule built on it hold about BYTES_PER_TILE_OP per tile operation (measured:
ResNet-50 on 32x32 pods, batch 1 and 16: 131k and 1.9M ops, +950 MB); `tile_workloads` counts the
operations first and refuses, with the estimate, a tiling that would not fit in the available memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.errors import EngineError
from engine.limits import MEMORY_SHARE, available_memory, format_bytes
from engine.pods.workload import PodWorkload

BYTES_PER_TILE_OP = 600


@dataclass(frozen=True)
class Tiling:
    rows: int                 # array rows r
    cols: int                 # array columns c
    partition: int | None     # rows of X per tile operation; None = unpartitioned (conventional)
    workload_names: tuple[str, ...]
    # one entry per tile operation, in the order the scheduler takes them
    op_block: np.ndarray      # row block the op belongs to
    op_rows: np.ndarray       # X rows it streams (<= partition)
    op_depth: np.ndarray      # features (<= r)
    op_cols: np.ndarray       # filters (<= c)
    op_x_tile: np.ndarray     # id of the X tile it reads (shared by the ops of the same i, j)
    op_w_tile: np.ndarray     # id of the W tile it reads (shared by the ops of the same j, l)
    op_pred: np.ndarray       # op whose partial sum it accumulates onto (aggregation="chain"), -1: none
    # one entry per row block
    block_gemm: np.ndarray    # index into gemm_names
    block_workload: np.ndarray
    block_deps: tuple[tuple[int, ...], ...]
    block_first_op: np.ndarray  # ops of block b are op_block == b, contiguous from here
    block_op_count: np.ndarray
    gemm_names: tuple[str, ...]
    gemm_input: np.ndarray    # True when the GEMM reads the network input (its X comes from DRAM)
    gemm_stored_weights: np.ndarray  # True when W is a stored weight (comes from DRAM once)
    gemm_sizes: np.ndarray    # (rows, depth, cols) per GEMM
    aggregation: str = "post-processor"  # "mixed": op_pred is the op a chain may continue (the scheduler chooses)

    @property
    def ops(self) -> int:
        return len(self.op_block)

    @property
    def macs(self) -> int:
        return int(np.sum(self.op_rows.astype(np.int64) * self.op_depth * self.op_cols))


AGGREGATIONS = ("mixed", "post-processor", "chain")


def tile_workloads(workloads: PodWorkload | list[PodWorkload], rows: int, cols: int, *,
                   partition: int | None = None, conventional: bool = False,
                   aggregation: str = "post-processor", row_aligned: bool = True) -> Tiling:
    """Tile operations of one or several workloads (several = multi-tenancy: their ops in one list).

    aggregation: "post-processor" sums the partial sums y_ijl over j in the post-processors (the ops
    over j are independent); "chain" feeds y_i(j-1)l to the op of j as its input partial sum (SOSA
    Fig. 8's dashed lines: a read-after-write chain over j); "mixed" lets the scheduler choose for
    each op of j > 0 (SOSA 4.2), op_pred naming the op of j - 1. row_aligned=False makes every block of
    a layer wait for the whole of its producers (a layer barrier)."""
    if aggregation not in AGGREGATIONS:
        raise EngineError(f"unknown aggregation '{aggregation}' (known: {', '.join(AGGREGATIONS)})")
    if isinstance(workloads, PodWorkload):
        workloads = [workloads]
    if rows < 1 or cols < 1:
        raise EngineError(f"array must be at least 1x1, got {rows}x{cols}")
    if partition is not None and partition < 1:
        raise EngineError(f"partition must be at least 1 row, got {partition}")
    k_rows = None if conventional else (partition or rows)
    check_tiling_memory(workloads, rows, cols, k_rows)
    op_cols: dict[str, list[int]] = {key: [] for key in ("block", "rows", "depth", "cols", "x", "w", "pred")}
    block_gemm, block_workload, block_deps, block_first, block_count = [], [], [], [], []
    gemm_names, gemm_input, gemm_weights, gemm_sizes = [], [], [], []
    x_tiles = w_tiles = 0
    for w_index, workload in enumerate(workloads):
        blocks_of: dict[str, tuple[int, int, int, int]] = {}  # gemm -> (first block, blocks, k, rows)
        for gemm in workload.gemms:
            g_index = len(gemm_names)
            gemm_names.append(f"{workload.name}/{gemm.name}" if len(workloads) > 1 else gemm.name)
            gemm_input.append(not gemm.inputs)
            gemm_weights.append(not gemm.weights_from)
            gemm_sizes.append((gemm.rows, gemm.depth, gemm.cols))
            k = k_rows or gemm.rows
            n_i, n_j, n_l = math.ceil(gemm.rows / k), math.ceil(gemm.depth / rows), math.ceil(gemm.cols / cols)
            first_block = len(block_gemm)
            whole = [b for p in gemm.weights_from for b in _all_blocks(blocks_of[p])]
            for i in range(n_i):
                lo, hi = i * k, min(gemm.rows, (i + 1) * k)
                deps = set(whole)
                for producer in gemm.inputs:
                    deps.update(_row_blocks(blocks_of[producer], lo, hi, gemm.rows, gemm.halo_rows) if row_aligned
                                else _all_blocks(blocks_of[producer]))
                block = len(block_gemm)
                block_gemm.append(g_index)
                block_workload.append(w_index)
                block_deps.append(tuple(sorted(deps)))
                block_first.append(len(op_cols["block"]))
                block_count.append(n_j * n_l)
                for l in range(n_l):
                    for j in range(n_j):
                        op_cols["block"].append(block)
                        op_cols["rows"].append(hi - lo)
                        op_cols["depth"].append(min(gemm.depth, (j + 1) * rows) - j * rows)
                        op_cols["cols"].append(min(gemm.cols, (l + 1) * cols) - l * cols)
                        op_cols["x"].append(x_tiles + i * n_j + j)
                        op_cols["w"].append(w_tiles + j * n_l + l)
                        chained = aggregation != "post-processor" and j > 0
                        op_cols["pred"].append(len(op_cols["block"]) - 2 if chained else -1)
            x_tiles += n_i * n_j
            w_tiles += n_j * n_l
            blocks_of[gemm.name] = (first_block, n_i, k, gemm.rows)
    as_int = {key: np.asarray(value, dtype=np.int64) for key, value in op_cols.items()}
    return Tiling(rows, cols, k_rows, tuple(w.name for w in workloads),
                  as_int["block"], as_int["rows"], as_int["depth"], as_int["cols"], as_int["x"], as_int["w"],
                  as_int["pred"],
                  np.asarray(block_gemm, dtype=np.int64), np.asarray(block_workload, dtype=np.int64),
                  tuple(block_deps), np.asarray(block_first, dtype=np.int64),
                  np.asarray(block_count, dtype=np.int64), tuple(gemm_names),
                  np.asarray(gemm_input, dtype=bool), np.asarray(gemm_weights, dtype=bool),
                  np.asarray(gemm_sizes, dtype=np.int64).reshape(-1, 3), aggregation)


def tile_op_count(workloads: list[PodWorkload], rows: int, cols: int, k_rows: int | None) -> int:
    """The tile operations `tile_workloads` would make (k_rows: X rows per operation, None = all)."""
    return sum(math.ceil(g.rows / (k_rows or g.rows)) * math.ceil(g.depth / rows) * math.ceil(g.cols / cols)
               for w in workloads for g in w.gemms)


def check_tiling_memory(workloads: list[PodWorkload], rows: int, cols: int, k_rows: int | None,
                        available: int | None = None) -> int:
    """The estimated bytes of the tiling and its schedule, or an EngineError when they would not fit."""
    ops = tile_op_count(workloads, rows, cols, k_rows)
    need = ops * BYTES_PER_TILE_OP
    available = available_memory() if available is None else available
    if need > MEMORY_SHARE * available:
        raise EngineError(f"{', '.join(w.name for w in workloads)} on {rows}x{cols} pods is {ops:,} tile operations, "
                          f"about {format_bytes(need)} to schedule; {format_bytes(available)} of memory is available "
                          f"(limit {MEMORY_SHARE:.0%}): a smaller --batch or a larger array")
    return need


def _all_blocks(producer: tuple[int, int, int, int]) -> range:
    first, count, _, _ = producer
    return range(first, first + count)


def _row_blocks(producer: tuple[int, int, int, int], lo: int, hi: int, rows: int, halo: int) -> range:
    """Producer blocks holding the rows consumer rows [lo, hi) read: scaled to the producer's rows
    (a stride or a different resolution), widened by the convolution halo."""
    first, count, k, producer_rows = producer
    a = max(0, lo * producer_rows // rows - halo)
    b = min(producer_rows, -(-hi * producer_rows // rows) + halo)
    return range(first + a // k, first + min(count, -(-b // k)))
