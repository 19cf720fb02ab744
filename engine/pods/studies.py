"""Workloads + technology -> SOSA's studies as plain rows: array granularity (Fig. 5), interconnects
(Table 1), scale-out at iso-power (Table 2), multi-tenancy (section 6.1), and one schedule's figures.

Every row is a dataclass or dict the CLI prints, writes as JSON and plots, and the explorer can show.
Utilisation over several workloads is their mean (SOSA averages its benchmarks); effective
throughput at the budget is peak-at-budget x utilisation (Table 2's arithmetic).

The granularity sweep runs one task per array shape; with a Dask scheduler address the tasks run on
that cluster (`distributed`), otherwise in this process. It scores a shape with the tiling's
utilisation bound (every GEMM's tile operations spread evenly over the pods, layers one after the
other): the scheduler for hundreds of shapes, down to 8x8 arrays with millions of tile operations,
would take hours, and SOSA's own Fig. 5 is its analytic hardware model, not its simulator.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from engine.errors import EngineError
from engine.pods.dram import workload_dram_cycles
from engine.pods.scheduler import Schedule, schedule
from engine.pods.simulate import PodRun, simulate
from engine.pods.system import PodSystem, build_system, pods_at_power
from engine.pods.technology import INTERCONNECTS, Technology
from engine.pods.tiling import tile_workloads
from engine.pods.workload import PodWorkload

SOSA_TABLE2 = {"512x512": (1, 1853, 0.103, 191.3), "256x256": (8, 1712, 0.140, 183.0),
               "128x128": (32, 1481, 0.138, 205.0), "64x64": (128, 1158, 0.174, 200.9),
               "32x32": (256, 806, 0.394, 317.4), "16x16": (512, 498, 0.400, 198.9)}
SOSA_TABLE1 = {"butterfly-1": (0.6681, 19.72, 0.23), "butterfly-2": (0.7241, 20.17, 0.52),
               "butterfly-4": (0.7226, 20.27, 1.15), "butterfly-8": (0.7243, 20.48, 2.53),
               "crossbar": (0.7238, 19.73, 7.36), "benes": (0.7238, 30.00, 0.92)}
SOSA_MULTITENANCY = 1.44
SCALE_ARRAYS = (512, 256, 128, 64, 32, 16)


SOSA_POST_PROCESSOR_PAIRS = 0.5  # tile aggregations a slice per pod: one post-processor a pod, in pairs (4.2)


@dataclass(frozen=True)
class ScheduleOptions:
    partition: int | None = None     # None: SOSA's r x r
    conventional: bool = False
    aggregation: str = "mixed"       # SOSA 4.2: each partial sum chained or given to the post-processor
    row_aligned: bool = True
    post_processors_per_pod: float | None = None  # tile aggregations a slice, per pod (0: unbounded;
    #                                  None: SOSA's pairs with "mixed", unbounded with "post-processor")

    def post_processor_units(self, pods: int) -> int:
        rate = self.post_processors_per_pod
        if rate is None:
            rate = SOSA_POST_PROCESSOR_PAIRS if self.aggregation == "mixed" else 0.0
        if rate < 0:
            raise EngineError(f"post-processors per pod must be 0 (unbounded) or more, got {rate:g}")
        return max(1, round(rate * pods)) if rate > 0 else 0


def run_workloads(workloads: list[PodWorkload], system: PodSystem,
                  options: ScheduleOptions = ScheduleOptions(), first: int | None = None) -> tuple[Schedule, PodRun]:
    """Schedule and replay workloads together (one workload, or several = multi-tenancy; `first`: the
    index of the one taken first, None interleaves them, `scheduler.block_order`)."""
    tiling = tile_workloads(workloads, system.rows, system.cols, partition=options.partition,
                            conventional=options.conventional, aggregation=options.aggregation,
                            row_aligned=options.row_aligned)
    sched = schedule(tiling, system, options.post_processor_units(system.pods), first)
    return sched, simulate(sched)


@dataclass(frozen=True)
class ScaleRow:
    array: str
    pods: int
    peak_tops: float        # at the power budget
    utilization: float
    effective_tops: float
    watts: float            # peak power of the pods
    per_workload: dict[str, float]

    def as_json(self) -> dict:
        return {"array": self.array, "pods": self.pods, "peak_tops": self.peak_tops,
                "utilization": self.utilization, "effective_tops": self.effective_tops, "watts": self.watts}


def scale_table(workloads: list[PodWorkload], technology: Technology, *, interconnect: str = "butterfly-2",
                arrays=SCALE_ARRAYS, watts: float | None = None, monolithic: int | None = 512,
                options: ScheduleOptions = ScheduleOptions(),
                on_step: Callable[[int, int, str], None] | None = None) -> list[ScaleRow]:
    """SOSA Table 2: each square array at the largest power-of-two pod count within the budget; the
    array of size `monolithic` is SOSA's monolithic baseline, one pod (its rule would give 2), left
    out with chained partial sums, which need two banks. `on_step(done, total, what)` is called after
    each (array, workload) schedule."""
    watts = technology.tdp_w if watts is None else watts
    rows = []
    step = _Steps(len(arrays) * len(workloads), on_step)
    for size in arrays:
        if size == monolithic:
            system = build_system(size, size, 1, interconnect, technology)
        else:
            system = pods_at_power(size, size, interconnect, technology, watts)
        if system.pods < 2 and options.aggregation == "chain":
            step.skip(len(workloads), f"{system.shape}: one pod cannot chain partial sums, left out")
            continue  # one pod cannot chain partial sums (scheduler.schedule says why)
        per = {}
        for w in workloads:
            per[w.name] = run_workloads([w], system, options)[1].utilization
            step(f"{system.shape} x {system.pods} pods, {w.name}: utilisation {per[w.name]:.1%}")
        utilization = float(np.mean(list(per.values())))
        peak = system.peak_ops_at(watts) / 1e12
        rows.append(ScaleRow(system.shape, system.pods, peak, utilization, peak * utilization,
                             system.peak_power(), per))
    return rows


class _Steps:
    """Counts the schedules of a table and reports each to `on_step(done, total, what)`."""

    def __init__(self, total: int, on_step: Callable[[int, int, str], None] | None):
        self.done, self.total, self.on_step = 0, total, on_step

    def __call__(self, what: str, count: int = 1) -> None:
        self.done += count
        if self.on_step is not None:
            self.on_step(self.done, self.total, what)

    def skip(self, count: int, what: str) -> None:
        self(what, count)


@dataclass(frozen=True)
class InterconnectRow:
    interconnect: str
    busy_pods: float
    cycles_per_tile_op: float
    mw_per_byte: float
    effective_tops: float
    latency_cycles: int

    def as_json(self) -> dict:
        return {"interconnect": self.interconnect, "busy_pods": self.busy_pods,
                "cycles_per_tile_op": self.cycles_per_tile_op, "mw_per_byte": self.mw_per_byte}


def interconnect_table(workloads: list[PodWorkload], technology: Technology, *, rows: int = 32, cols: int = 32,
                       pods: int = 256, names=INTERCONNECTS,
                       options: ScheduleOptions = ScheduleOptions(),
                       on_step: Callable[[int, int, str], None] | None = None) -> list[InterconnectRow]:
    """SOSA Table 1 for one pod count: busy pods and cycles per tile operation averaged over the
    workloads, and the network's energy per byte as mW per byte/cycle at the clock.
    `on_step(done, total, what)` is called after each (interconnect, workload) schedule."""
    out = []
    step = _Steps(len(names) * len(workloads), on_step)
    for name in names:
        system = build_system(rows, cols, pods, name, technology)
        runs = []
        for w in workloads:
            runs.append(run_workloads([w], system, options)[1])
            step(f"{name}, {w.name}: busy pods {runs[-1].busy_pods_fraction:.1%}")
        mw = system.interconnect.pj_per_byte(technology) * technology.clock_hz / 1e9
        out.append(InterconnectRow(name, float(np.mean([r.busy_pods_fraction for r in runs])),
                                   float(np.mean([r.cycles_per_tile_op for r in runs])), mw,
                                   float(np.mean([r.effective_tops for r in runs])),
                                   system.interconnect.latency_cycles(technology)))
    return out


@dataclass(frozen=True)
class TenancyResult:
    workloads: tuple[str, ...]
    sequential_cycles: int
    joint_cycles: int
    sequential_tops: float
    joint_tops: float
    alone_cycles: tuple[int, ...] = ()
    alone_utilization: tuple[float, ...] = ()
    joint_order: str = ""                 # the schedule kept: "interleaved", "NAME first" or "in turn"
    tried: dict[str, int] | None = None   # cycles of every joint order tried

    @property
    def gain(self) -> float:
        return self.sequential_cycles / self.joint_cycles


def multitenancy(workloads: list[PodWorkload], system: PodSystem,
                 options: ScheduleOptions = ScheduleOptions()) -> TenancyResult:
    """The same networks one after another against scheduled together (same MACs, so the throughput
    ratio is the cycle ratio). Together, the offline scheduler tries each tenant's blocks first (the
    others fill the slots it leaves idle) and the tenants interleaved, and keeps the shortest; a
    greedy list schedule can lose to running them in turn, which is itself a joint schedule, so that
    is kept when it is shorter ("in turn", gain 1): together is never slower."""
    if len(workloads) < 2:
        raise EngineError("multi-tenancy needs at least two networks")
    alone = [run_workloads([w], system, options)[1] for w in workloads]
    sequential = sum(r.cycles for r in alone)
    macs = sum(r.macs for r in alone)
    seconds = sequential / system.technology.clock_hz
    sequential_tops = 2 * macs / seconds / 1e12
    runs = {"interleaved": run_workloads(workloads, system, options)[1]}
    for index, w in enumerate(workloads):
        runs[f"{w.name} first"] = run_workloads(workloads, system, options, first=index)[1]
    tried = {name: run.cycles for name, run in runs.items()}
    best = min(runs, key=lambda name: runs[name].cycles)
    cycles, tops = runs[best].cycles, runs[best].effective_tops
    if cycles > sequential:
        best, cycles, tops = "in turn", sequential, sequential_tops
    return TenancyResult(tuple(w.name for w in workloads), sequential, cycles, sequential_tops, tops,
                         tuple(r.cycles for r in alone), tuple(r.utilization for r in alone), best, tried)


# --- granularity ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class GranularityPoint:
    rows: int
    cols: int
    pods: int
    peak_power_w: float
    peak_tops: float            # at the budget
    utilization: float          # mean over the workloads
    effective_tops: float       # at the budget
    effective_tops_per_watt: float


def granularity_point(rows: int, cols: int, workloads: list[PodWorkload], technology: Technology,
                      interconnect: str, watts: float) -> GranularityPoint | None:
    """One shape of the sweep (a Dask task): None when one pod does not fit the budget."""
    try:
        system = pods_at_power(rows, cols, interconnect, technology, watts)
    except EngineError:
        return None
    utilization = float(np.mean([utilization_bound(w, system) for w in workloads]))
    peak = system.peak_ops_at(watts) / 1e12
    return GranularityPoint(rows, cols, system.pods, system.peak_power(), peak, utilization,
                            peak * utilization, peak * utilization / watts)


def utilization_bound(workload: PodWorkload, system: PodSystem) -> float:
    """Useful MACs over PE-cycles when each GEMM's tile operations (SOSA tiling) are spread evenly
    over the pods and GEMMs run one after the other: dimension mismatch inside the pods, weight
    buffering stalls and too few tile operations for the pods, without interconnect conflicts; and
    never faster than the DRAM stream of its weights and input, nor than its bank writes (`dram.py`).
    In closed form (no tile list: an 8x8 sweep point of VGG16 has ~30 million tile operations)."""
    r, c, L = system.rows, system.cols, system.slice_cycles
    total = 0
    for g in workload.gemms:
        full, last = divmod(g.rows, r)
        per_block = -(-int(system.op_cycles(r)) // L)  # a full block streams r rows
        slices = full * per_block + (-(-int(system.op_cycles(last)) // L) if last else 0)
        ops_slices = slices * -(-g.depth // r) * -(-g.cols // c)
        total += -(-ops_slices // system.pods)
    cycles = max(total * L, workload_dram_cycles(workload, system))
    return workload.macs / (system.pes * cycles)


def sweep_shapes(sizes=None) -> list[tuple[int, int]]:
    """The default grid: 15 x 15 = 225 shapes from 8 to 512 rows/columns (powers of two and the
    points between)."""
    sizes = sizes or (8, 12, 16, 20, 24, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512)
    return [(r, c) for r in sizes for c in sizes]


def granularity_sweep(workloads: list[PodWorkload], technology: Technology, *, shapes=None,
                      interconnect: str = "butterfly-2", watts: float | None = None,
                      scheduler: str | None = None) -> list[GranularityPoint]:
    watts = technology.tdp_w if watts is None else watts
    shapes = shapes or sweep_shapes()
    if scheduler:
        points = _on_dask(scheduler, shapes, workloads, technology, interconnect, watts)
    else:
        points = [granularity_point(r, c, workloads, technology, interconnect, watts) for r, c in shapes]
    return [p for p in points if p is not None]


def _on_dask(address: str, shapes, workloads, technology, interconnect, watts):
    from distributed import Client  # noqa: PLC0415 (only when a cluster is asked for)
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError) as error:
        raise EngineError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    try:
        futures = client.map(granularity_point, [r for r, _ in shapes], [c for _, c in shapes],
                             workloads=workloads, technology=technology, interconnect=interconnect,
                             watts=watts, pure=False)
        return client.gather(futures)
    finally:
        client.close()


def best_point(points: list[GranularityPoint]) -> GranularityPoint:
    return max(points, key=lambda p: p.effective_tops)


def as_dicts(rows) -> list[dict]:
    return [asdict(r) for r in rows]

