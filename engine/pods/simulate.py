"""`Schedule` -> `PodRun`: the cycle-level replay of a schedule on the multi-pod system.

Each tile operation starts at its slice's first cycle; its pod holds it for `PodSystem.op_cycles`:
max(rows, r) (the rows of X it streams, at least the r cycles of buffering the next weights) plus
the array's fill and drain, and then idles to the end of its slices; the run ends with its last slice. The replay checks the
schedule (no pod with two operations at once, no operation before its producers are written back)
and counts, per cycle, the busy pods, and over the run the energy of each part:
- MAC: the useful multiply-accumulates (padding rows/columns are clock-gated);
- SRAM: X and W tiles read (once per slice and bank when several pods share a tile), partial sums
  written, read back and summed by the post-processor, the output block written, the DRAM stream's
  tiles written;
- interconnect: the bytes each route carries (X, W to the pod; the partial sums back), at the
  network's energy per byte for this pod count;
- DRAM: the stored weights and the network input, loaded once, by the stream the schedule waited
  for (`engine/pods/dram.py`); the replay checks no op starts before its tiles are written into
  their banks and no pod reads a bank in the slice the stream writes it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.pods.scheduler import POST_PROCESS_SLICES, Schedule


class ScheduleViolation(AssertionError):
    """A schedule breaks a rule the hardware cannot: a pod running two operations, a read before its write."""


@dataclass(frozen=True)
class PodRun:
    workloads: tuple[str, ...]
    array: str
    pods: int
    interconnect: str
    slice_cycles: int
    slices: int
    cycles: int
    tile_ops: int
    macs: int
    busy_pods_per_cycle: np.ndarray
    busy_pods_fraction: float     # SOSA's "busy pods": mean share of pods holding an op, per slice
    cycles_per_tile_op: float     # cycles from a tile operation's start to its result written: its
    #                               op_cycles, or the interconnect's round trip where that is longer
    utilization: float            # useful MACs / (PEs x cycles)
    peak_tops: float
    effective_tops: float         # peak x utilization
    energy_j: dict[str, float]    # mac, sram, interconnect, dram
    seconds: float
    dram_bytes: int = 0           # read from DRAM: stored weights and the network input, once
    dram_cycles: float = 0.0      # the DRAM stream's length at the technology's bandwidth

    @property
    def watts(self) -> float:
        return sum(self.energy_j.values()) / self.seconds if self.seconds else 0.0

    @property
    def tops_per_watt(self) -> float:
        return self.effective_tops / self.watts if self.watts else 0.0

    def summary(self) -> dict:
        return {"workloads": list(self.workloads), "array": self.array, "pods": self.pods,
                "interconnect": self.interconnect, "tile_ops": self.tile_ops, "slices": self.slices,
                "slice_cycles": self.slice_cycles, "cycles": self.cycles, "macs": self.macs,
                "busy_pods": self.busy_pods_fraction, "cycles_per_tile_op": self.cycles_per_tile_op,
                "utilization": self.utilization, "peak_tops": self.peak_tops,
                "effective_tops": self.effective_tops, "watts": self.watts,
                "effective_tops_per_watt": self.tops_per_watt, "energy_j": dict(self.energy_j),
                "seconds": self.seconds, "dram_bytes": self.dram_bytes, "dram_cycles": self.dram_cycles}


def simulate(sched: Schedule) -> PodRun:
    system, tiling, t = sched.system, sched.tiling, sched.system.technology
    L = sched.slice_cycles
    _check(sched)
    start = sched.op_slice * L
    compute = system.op_cycles(tiling.op_rows)
    cycles = sched.slices * L if tiling.ops else 0
    delta = np.zeros(cycles + 1, dtype=np.int64)
    np.add.at(delta, start, 1)
    np.add.at(delta, start + compute, -1)
    busy = np.cumsum(delta[:-1])
    per_slice = np.zeros(max(sched.slices, 1), dtype=np.int64)
    for offset in range(int(sched.op_span.max(initial=0))):
        held = sched.op_span > offset
        np.add.at(per_slice, sched.op_slice[held] + offset, 1)
    rows, depth, cols = (a.astype(np.int64) for a in (tiling.op_rows, tiling.op_depth, tiling.op_cols))
    macs = int(np.sum(rows * depth * cols))
    seconds = cycles / t.clock_hz
    peak = system.peak_ops()
    utilization = macs / (system.pes * cycles) if cycles else 0.0
    return PodRun(tiling.workload_names, system.shape, system.pods, system.interconnect.name, L, sched.slices,
                  cycles, tiling.ops, macs, busy, float(per_slice.mean() / system.pods),
                  float(np.mean(np.maximum(compute, system.interconnect.round_trip_cycles(t)))) if tiling.ops else 0.0, utilization, peak / 1e12,
                  peak * utilization / 1e12, _energy(sched, rows, depth, cols, macs), seconds,
                  sched.dram.bytes, sched.dram.cycles)


def _energy(sched: Schedule, rows, depth, cols, macs: int) -> dict[str, float]:
    system, tiling, t = sched.system, sched.tiling, sched.system.technology
    x_bytes = rows * depth * t.activation_bytes
    w_bytes = depth * cols * t.weight_bytes
    p_bytes = rows * cols * t.psum_bytes
    # a tile read by several pods in the same slice is one bank read
    _, first_x = np.unique(np.stack([sched.op_slice, tiling.op_x_tile]), axis=1, return_index=True)
    _, first_w = np.unique(np.stack([sched.op_slice, tiling.op_w_tile]), axis=1, return_index=True)
    sizes = tiling.gemm_sizes
    outputs = int(np.sum(sizes[:, 0] * sizes[:, 2])) * t.activation_bytes
    # + the DRAM stream's tiles written into their banks
    sram = int(x_bytes[first_x].sum() + w_bytes[first_w].sum() + 2 * p_bytes.sum()) + outputs + sched.dram.bytes
    network = int(x_bytes.sum() + w_bytes.sum() + p_bytes.sum() + p_bytes[sched.op_q_bank >= 0].sum())
    dram = sched.dram.bytes
    pj = 1e-12
    return {"mac": macs * t.mac_pj * pj, "sram": sram * t.sram_pj_per_byte * pj,
            "interconnect": network * system.interconnect.pj_per_byte(t) * pj,
            "dram": dram * t.dram_pj_per_byte * pj}


def _check(sched: Schedule) -> None:
    tiling = sched.tiling
    if not tiling.ops:
        return
    if np.any(sched.op_slice < sched.dram.op_ready_slice):
        raise ScheduleViolation("a tile operation starts before its weights or input arrive from DRAM")
    held = np.repeat(np.arange(tiling.ops), sched.op_span)  # (op, slice offset) of every slice an op holds
    offsets = np.arange(len(held)) - np.repeat(np.cumsum(sched.op_span) - sched.op_span, sched.op_span)
    _check_fills(sched, held, offsets)
    keys = (sched.op_slice[held] + offsets) * sched.system.pods + sched.op_pod[held]
    if len(np.unique(keys)) != len(keys):
        raise ScheduleViolation("a pod holds two tile operations in the same slice")
    ends = sched.op_slice + sched.op_span
    mixed = sched.op_alone is not None
    summed = sched.op_sum_ready if mixed else ends  # a reduction's last op: when its sum is ready
    ready = np.zeros(len(tiling.block_deps), dtype=np.int64)
    np.maximum.at(ready, tiling.op_block, summed + POST_PROCESS_SLICES)
    for block, deps in enumerate(tiling.block_deps):
        if not deps:
            continue
        lo = tiling.block_first_op[block]
        begin = int(sched.op_slice[lo:lo + tiling.block_op_count[block]].min())
        need = max(int(ready[d]) for d in deps)
        if begin < need:
            raise ScheduleViolation(f"row block {block} starts at slice {begin}, before its input is written "
                                    f"(slice {need})")
    if sched.post_processors and sched.post_used is not None and np.any(sched.post_used > sched.post_processors):
        raise ScheduleViolation("the post-processor is given more tile aggregations than it completes in a slice")
    chained = (tiling.op_pred >= 0) & (sched.op_q_bank >= 0)
    pred = tiling.op_pred[chained]
    if np.any(sched.op_slice[chained] < ends[pred]):
        raise ScheduleViolation("a tile operation reads a partial sum before it is written")
    if np.any(sched.op_q_bank[chained] != sched.op_p_bank[pred]):
        raise ScheduleViolation("a tile operation reads its input partial sum from a bank that does not hold it")
    if mixed:
        if np.any((tiling.op_pred >= 0) & (sched.op_q_bank < 0) & ~sched.op_alone):
            raise ScheduleViolation("a partial sum is neither chained nor given to the post-processor")
        first = tiling.op_pred < 0
        reduction = np.cumsum(first) - 1
        last = np.append(np.flatnonzero(first)[1:] - 1, tiling.ops - 1)
        latest = np.zeros(len(last), dtype=np.int64)
        np.maximum.at(latest, reduction, ends)
        cut = np.zeros(len(last), dtype=np.int64)
        np.maximum.at(cut, reduction, sched.op_alone.astype(np.int64))
        if np.any(summed[last] < latest + cut):
            raise ScheduleViolation("a reduction's sum is ready before its partial sums are")


def _check_fills(sched: Schedule, held: np.ndarray, offsets: np.ndarray) -> None:
    """The DRAM stream's bank writes: one per bank and slice, never in a slice a pod reads that bank
    (single-ported banks), and each before every op that reads the tile. `held`, `offsets`: the op
    and slice offset of every slice an op holds (`_check`)."""
    tiling, dram, n = sched.tiling, sched.dram, sched.system.pods
    if not len(dram.fill_slice):
        return
    fill_keys = (dram.fill_slice * 2 + dram.fill_x) * n + dram.fill_bank
    if len(np.unique(fill_keys)) != len(fill_keys):
        raise ScheduleViolation("the DRAM stream writes two tiles into one bank in the same slice")
    x_reads = ((sched.op_slice[held] + offsets) * 2 + 1) * n + tiling.op_x_tile[held] % n
    w_reads = (sched.op_slice * 2) * n + tiling.op_w_tile % n
    if np.any(np.isin(np.concatenate([x_reads, w_reads]), fill_keys)):
        raise ScheduleViolation("a pod reads a bank in the slice the DRAM stream writes it")
    gemm = tiling.block_gemm[tiling.op_block]
    for is_x, tiles, from_dram in ((False, tiling.op_w_tile, tiling.gemm_stored_weights[gemm]),
                                   (True, tiling.op_x_tile, tiling.gemm_input[gemm])):
        if not np.any(from_dram):
            continue
        mine = dram.fill_x == is_x
        by_tile = np.argsort(dram.fill_tile[mine])
        known, written = dram.fill_tile[mine][by_tile], dram.fill_slice[mine][by_tile]
        at = np.minimum(np.searchsorted(known, tiles[from_dram]), max(len(known) - 1, 0))
        if len(known) == 0 or np.any(known[at] != tiles[from_dram]):
            raise ScheduleViolation("a tile operation reads an off-chip tile the DRAM stream never fetched")
        if np.any(sched.op_slice[from_dram] <= written[at]):
            raise ScheduleViolation("a tile operation reads a tile before the DRAM stream wrote it into its bank")
