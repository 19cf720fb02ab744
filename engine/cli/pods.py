"""`systolic pods granularity|interconnect|scale|schedule|tenancy`: SOSA's multi-pod studies on network
files, each a table (or `--json`), and a PNG where the paper has a figure."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from engine.errors import EngineError
from engine.network.runner import check_scheduler
from engine.pods.plots import check_image_path, gantt, heat_map, scale_chart
from engine.pods.studies import (SOSA_MULTITENANCY, SOSA_TABLE1, SOSA_TABLE2, ScheduleOptions, as_dicts,
                                 best_point, granularity_sweep, interconnect_table, multitenancy,
                                 run_workloads, scale_table)
from engine.pods.system import build_system
from engine.pods.technology import INTERCONNECTS, load_technology
from engine.pods.tiling import AGGREGATIONS
from engine.pods.workload import load_pod_workload
from engine.pods.zoo import SOSA_BENCHMARKS, SOSA_TENANTS
from engine.validation import bounded_int, nonnegative_number, positive_int, positive_number

MAX_PODS = 65536

HELP = "multi-pod accelerators (SOSA): granularity, interconnect, scale, schedule, tenancy"
DEFAULT_NETWORKS = ["resnet50", "bert_base"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="study", required=True)
    gran = sub.add_parser("granularity", help="sweep r x c at iso-power: heat map PNG and the best shape")
    inter = sub.add_parser("interconnect", help="SOSA Table 1 for a pod count")
    scale = sub.add_parser("scale", help="SOSA Table 2: array size vs effective TOP/s at the budget")
    sched = sub.add_parser("schedule", help="schedule and simulate networks: Gantt PNG and figures")
    tenancy = sub.add_parser("tenancy", help="networks scheduled together vs one after another")
    for p in (gran, inter, scale, sched, tenancy):
        p.add_argument("--technology", type=Path, help="technology JSON (default resources/pods/sosa_28nm.json)")
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        p.add_argument("--batch", type=positive_int, default=1,
                       help="inputs per network (default 1; refused, with the estimate, when the schedule would "
                            "not fit in memory)")
    for p in (gran, inter, scale):
        p.add_argument("--network", action="append", metavar="FILE",
                       help=f"network file or bundled name, repeatable (default {' '.join(DEFAULT_NETWORKS)})")
        p.add_argument("--sosa-benchmarks", action="store_true",
                       help=f"SOSA's ten benchmarks (section 5): {' '.join(SOSA_BENCHMARKS)}")
    tenancy.add_argument("--network", action="append", metavar="FILE",
                         help=f"network file or bundled name, repeatable (default SOSA's pair, section 6.1: "
                              f"{' '.join(SOSA_TENANTS)})")
    sched.add_argument("networks", nargs="+", metavar="NETWORK", help="network files (several: multi-tenancy)")
    for p in (inter, sched, tenancy):
        p.add_argument("--pods", type=bounded_int(MAX_PODS, "pods"), default=256,
                       help=f"pod count, 1..{MAX_PODS} (default 256)")
        p.add_argument("--array", default="32x32", help="array shape RxC (default 32x32)")
    for p in (gran, scale, sched, tenancy):
        p.add_argument("--interconnect", default="butterfly-2", choices=INTERCONNECTS)
    for p in (gran, scale):
        p.add_argument("--tdp", type=positive_number, help="power budget in W (default the technology's, 400)")
    for p in (inter, scale, sched, tenancy):
        p.add_argument("--aggregation", default="mixed", choices=AGGREGATIONS,
                       help="how partial sums over the reduction are summed: mixed (default; SOSA 4.2: each "
                            "chained through the pods or given to the post-processor), all on the "
                            "post-processor, or all chained")
        p.add_argument("--layer-barrier", action="store_true",
                       help="a layer waits for the whole of its producers (default: the rows it reads)")
        p.add_argument("--conventional", action="store_true", help="conventional tiling (X rows not partitioned)")
        p.add_argument("--post-processors", type=nonnegative_number, default=None, metavar="F",
                       help="post-processor tile aggregations per slice, per pod (0: unbounded; default "
                            "SOSA's pairs, 0.5, with mixed aggregation, unbounded with post-processor)")
    gran.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the shapes on this Dask cluster")
    scale.add_argument("--arrays", default="512,256,128,64,32,16",
                       help="square array sizes (default 512,256,128,64,32,16)")
    scale.add_argument("--monolithic", type=bounded_int(65536, "monolithic array size", minimum=0), default=512,
                       metavar="SIZE",
                       help="the array size built as one pod, SOSA's monolithic baseline (default 512; 0: none)")
    gran.add_argument("--sizes", help="comma-separated row/column sizes (default 15 sizes, 8..512)")
    for p, default in ((gran, "granularity.png"), (sched, "schedule.png"), (scale, "scale.png")):
        p.add_argument("--png", type=Path, default=Path(default), help=f"where to write the plot (default {default})")


def run(args: argparse.Namespace) -> int:
    technology = load_technology(args.technology)
    if getattr(args, "png", None) is not None:  # checked before any work
        check_image_path(args.png)
    if getattr(args, "scheduler", None):
        check_scheduler(args.scheduler)  # a dead scheduler: one line before any work
    started = time.perf_counter()
    result = {"granularity": _granularity, "interconnect": _interconnect, "scale": _scale,
              "schedule": _schedule, "tenancy": _tenancy}[args.study](args, technology)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(f"({time.perf_counter() - started:.1f} s)")
    return 0


class _Progress:
    """A line on stderr per step of a long study: `pods scale: 3/24 64x64 x 128 pods, resnet50: ... (12.3 s)`."""

    def __init__(self, name: str):
        self.name, self.started = name, time.perf_counter()

    def __call__(self, done: int, total: int, what: str) -> None:
        print(f"{self.name}: {done}/{total} {what} ({time.perf_counter() - self.started:.1f} s)", file=sys.stderr,
              flush=True)


def _workloads(names, batch, args=None, default=DEFAULT_NETWORKS):
    if args is not None and getattr(args, "sosa_benchmarks", False):
        if names:
            raise EngineError("--sosa-benchmarks names the networks: give it or --network, not both")
        names = SOSA_BENCHMARKS
    return [load_pod_workload(name, batch=batch) for name in (names or default)]


def _options(args) -> ScheduleOptions:
    return ScheduleOptions(conventional=args.conventional, aggregation=args.aggregation,
                           row_aligned=not args.layer_barrier, post_processors_per_pod=args.post_processors)


def _sizes(text: str, option: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        raise EngineError(f"{option} {text!r}: expected comma-separated whole numbers") from None
    if any(s < 1 or s > 65536 for s in sizes) or len(sizes) > 256:
        raise EngineError(f"{option}: sizes are 1..65536, at most 256 of them")
    return sizes


def _shape(text: str) -> tuple[int, int]:
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and 0 < int(p) <= 65536 for p in parts):
        raise EngineError(f"--array {text!r}: expected ROWSxCOLS with sizes 1..65536, e.g. 32x32")
    return int(parts[0]), int(parts[1])


def _system(args, technology):
    rows, cols = _shape(args.array)
    system = build_system(rows, cols, args.pods, args.interconnect, technology)
    if system.peak_power() > technology.tdp_w:
        raise EngineError(f"{args.pods} pods of {rows}x{cols} need {system.peak_power():.0f} W at peak, over the "
                          f"technology's {technology.tdp_w:g} W budget: fewer pods or a smaller array")
    return system


def _granularity(args, technology):
    workloads = _workloads(args.network, args.batch, args)
    shapes = None
    if args.sizes:
        sizes = _sizes(args.sizes, "--sizes")
        shapes = [(r, c) for r in sizes for c in sizes]
    points = granularity_sweep(workloads, technology, shapes=shapes, interconnect=args.interconnect,
                               watts=args.tdp, scheduler=args.scheduler)
    if not points:
        raise EngineError("no array shape fits the power budget")
    best = best_point(points)
    heat_map(points, args.png, title=f"{', '.join(w.name for w in workloads)} at {args.tdp or technology.tdp_w:g} W")
    if args.json:
        return {"best": as_dicts([best])[0], "points": as_dicts(points), "png": str(args.png)}
    print(f"{len(points)} shapes, {', '.join(w.name for w in workloads)}, {args.interconnect}, "
          f"{args.tdp or technology.tdp_w:g} W (utilisation bound: tile ops spread evenly, layers in turn)")
    top = sorted(points, key=lambda p: -p.effective_tops)[:10]
    print(f"{'array':>9} {'pods':>5} {'peak W':>7} {'peak TOP/s':>10} {'util':>6} {'eff TOP/s':>9} {'TOP/s/W':>7}")
    for p in top:
        print(f"{p.rows:>4}x{p.cols:<4} {p.pods:>5} {p.peak_power_w:>7.1f} {p.peak_tops:>10.0f} "
              f"{p.utilization:>6.1%} {p.effective_tops:>9.1f} {p.effective_tops_per_watt:>7.3f}")
    print(f"best: {best.rows}x{best.cols} ({best.pods} pods); SOSA Fig. 5c: 20x32 (32x32 chosen); heat map {args.png}")
    return None


def _interconnect(args, technology):
    rows, cols = _shape(args.array)
    table = interconnect_table(_workloads(args.network, args.batch, args), technology, rows=rows, cols=cols,
                               pods=args.pods, options=_options(args), on_step=_Progress("pods interconnect"))
    if args.json:
        return [r.as_json() for r in table]
    print(f"{args.pods} pods of {rows}x{cols}; SOSA Table 1 (256 pods of 32x32, its benchmarks) in brackets")
    print(f"{'interconnect':<12} {'busy pods':>16} {'cycles/tile op':>18} {'mW/byte':>14} {'latency':>7} {'eff TOP/s':>9}")
    for r in table:
        busy, cycles, mw = SOSA_TABLE1[r.interconnect]
        print(f"{r.interconnect:<12} {r.busy_pods:>7.2%} [{busy:>6.2%}] {r.cycles_per_tile_op:>8.2f} [{cycles:>6.2f}] "
              f"{r.mw_per_byte:>6.2f} [{mw:>4.2f}] {r.latency_cycles:>7} {r.effective_tops:>9.1f}")
    print("Cycles per tile op: max(rows, r) + the array's fill and drain (U = V = 16: 2 cycles at 32x32), or the "
          "round trip when longer; SOSA's ~20 is below r = 32, which no operation of r rows can be (docs/pods.md).")
    return None


def _scale(args, technology):
    arrays = _sizes(args.arrays, "--arrays")
    rows = scale_table(_workloads(args.network, args.batch, args), technology, interconnect=args.interconnect,
                       arrays=arrays, watts=args.tdp, monolithic=args.monolithic, options=_options(args),
                       on_step=_Progress("pods scale"))
    scale_chart(rows, args.png, title=f"effective TOP/s at {args.tdp or technology.tdp_w:g} W", paper=SOSA_TABLE2)
    if args.json:
        return [r.as_json() for r in rows]
    print(f"{args.interconnect}, {args.tdp or technology.tdp_w:g} W; SOSA Table 2 in brackets; chart {args.png}")
    print(f"{'array':<8} {'pods':>10} {'peak W':>7} {'peak TOP/s':>16} {'util':>15} {'eff TOP/s':>16}  per network")
    for r in rows:
        pods, peak, util, eff = SOSA_TABLE2.get(r.array, (0, 0, 0, 0))
        per = " ".join(f"{name}={u:.1%}" for name, u in r.per_workload.items())
        print(f"{r.array:<8} {r.pods:>4} [{pods:>3}] {r.watts:>7.1f} {r.peak_tops:>6.0f} [{peak:>6.0f}] "
              f"{r.utilization:>5.1%} [{util:>5.1%}] {r.effective_tops:>6.1f} [{eff:>6.1f}]  {per}")
    print("Peak power and TOP/s follow SOSA's figures (0.4 pJ/MAC, 2.7 pJ/byte, r + 5c SRAM bytes a cycle).")
    rate = f", post-processor {args.post_processors:g} aggregations a slice per pod" if args.post_processors else ""
    print(f"Utilisation depends on the aggregation ({args.aggregation}{rate}): mixed (SOSA 4.2) chains a partial "
          "sum where that keeps its operation at its earliest slice and gives it to the post-processor (0.5 sums "
          "a slice per pod by default) where a unit is idle; all on an unbounded post-processor keeps more pods "
          "busy, all chained serialises the reductions. Stored weights and the input stream from DRAM once an "
          f"inference at {technology.dram_gb_per_s:g} GB/s (the technology's dram_gb_per_s): at batch 1 a "
          "transformer runs at its pace; each tile it brings takes its single-ported bank for a slice, which "
          "costs the arrays with few banks most. docs/pods.md compares each with SOSA on its ten benchmarks "
          "(--sosa-benchmarks).")
    return None


def _schedule(args, technology):
    system = _system(args, technology)
    workloads = _workloads(args.networks, args.batch)
    sched, result = run_workloads(workloads, system, _options(args))
    gantt(sched, args.png, title=f"{' + '.join(w.name for w in workloads)} on {system.pods} x {system.shape}, "
                                 f"{system.interconnect.name}")
    summary = result.summary()
    summary["png"] = str(args.png)
    if args.json:
        return summary
    print(f"{' + '.join(summary['workloads'])}: {summary['tile_ops']} tile ops on {system.pods} pods of "
          f"{system.shape}, {system.interconnect.name}")
    print(f"  {summary['slices']} slices of {summary['slice_cycles']} cycles = {summary['cycles']} cycles "
          f"({summary['seconds'] * 1e6:.1f} us)")
    print(f"  busy pods {summary['busy_pods']:.1%}, utilisation {summary['utilization']:.1%}, "
          f"cycles per tile op {summary['cycles_per_tile_op']:.1f}")
    print(f"  DRAM {summary['dram_bytes'] / 1e6:.1f} MB of weights and input, streamed in "
          f"{summary['dram_cycles']:,.0f} cycles ({summary['dram_cycles'] / max(summary['cycles'], 1):.0%} of the run)")
    print(f"  effective {summary['effective_tops']:.1f} TOP/s of {summary['peak_tops']:.1f} peak; "
          f"{summary['watts']:.1f} W average, {summary['effective_tops_per_watt']:.3f} TOP/s/W")
    energy = summary["energy_j"]
    total = sum(energy.values())
    print("  energy " + ", ".join(f"{k} {v * 1e3:.3f} mJ ({v / total:.0%})" for k, v in energy.items()))
    print(f"  Gantt chart {args.png}")
    return None


def _tenancy(args, technology):
    system = _system(args, technology)
    result = multitenancy(_workloads(args.network, args.batch, default=list(SOSA_TENANTS)), system, _options(args))
    if args.json:
        return {"workloads": list(result.workloads), "sequential_cycles": result.sequential_cycles,
                "joint_cycles": result.joint_cycles, "sequential_tops": result.sequential_tops,
                "joint_tops": result.joint_tops, "gain": result.gain, "alone_cycles": list(result.alone_cycles),
                "alone_utilization": list(result.alone_utilization), "joint_order": result.joint_order,
                "tried": result.tried}
    print(f"{' + '.join(result.workloads)} on {system.pods} x {system.shape}, {system.interconnect.name}, "
          f"{args.aggregation}" + (f", post-processors {args.post_processors:g}/pod" if args.post_processors else ""))
    for name, cycles, util in zip(result.workloads, result.alone_cycles, result.alone_utilization):
        print(f"  {name} alone: {cycles} cycles, utilisation {util:.1%}")
    print(f"  one after another: {result.sequential_cycles} cycles, {result.sequential_tops:.1f} TOP/s")
    tried = ", ".join(f"{name} {cycles}" for name, cycles in (result.tried or {}).items())
    print(f"  together:          {result.joint_cycles} cycles, {result.joint_tops:.1f} TOP/s "
          f"(kept: {result.joint_order}; tried: {tried})")
    print(f"  gain {result.gain:.2f}x (SOSA: {SOSA_MULTITENANCY}x for ResNet-152 + BERT-medium, batch 1); a second "
          "network only fills the slots the first leaves idle, so the gain is small when one network already "
          "keeps the pods busy. TOP/s here are the pods' own (not scaled to the power budget).")
    return None
