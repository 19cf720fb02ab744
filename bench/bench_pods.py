"""Multi-pod speed (scheduling + cycle replay of a network, the granularity sweep) and SOSA's two
headline tables on its own benchmarks: Table 2 (array size vs effective TOP/s at 400 W) and the
multi-tenancy gain of section 6.1 (ResNet-152 + BERT-medium at batch 1).

    python bench/bench_pods.py [--networks resnet50 bert_base vgg16] [--scheduler tcp://HOST:PORT]
                               [--skip-sweep] [--skip-tables] [--arrays 512,256,128,64,32,16]
                               [--aggregation mixed|post-processor|chain] [--post-processors F]

Targets (issue 16): ResNet50 on 256 pods of 32x32 (Butterfly-2) scheduled and simulated in < 30 s;
the granularity sweep (>= 200 shapes, 3 networks) in < 5 minutes (on a Dask cluster when
--scheduler is given). The first schedule also pays numba's compilation of the scheduler's inner
loop (cached on disk afterwards); it is timed apart and printed as 'warm-up'. The aggregation is
SOSA's per-partial-sum choice ('mixed') unless --aggregation says otherwise. The tables take minutes
to tens of minutes on this shared machine (ten networks; 16x16 on 512 pods is the slowest row, with
BERT-large's 5 M tile operations: choose rows with --arrays); docs/pods.md has our figures.
"""
from __future__ import annotations

import argparse
import time

from engine.pods.scheduler import schedule
from engine.pods.simulate import simulate
from engine.pods.studies import (SOSA_MULTITENANCY, SOSA_TABLE2, ScheduleOptions, granularity_sweep, multitenancy,
                                 scale_table, sweep_shapes)
from engine.pods.zoo import SOSA_BENCHMARKS, SOSA_TENANTS
from engine.pods.system import build_system
from engine.pods.technology import load_technology
from engine.pods.tiling import AGGREGATIONS, tile_workloads
from engine.pods.workload import PodWorkload, Gemm, load_pod_workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=["resnet50", "bert_base", "vgg16"])
    parser.add_argument("--scheduler", help="Dask scheduler address for the sweep")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--skip-tables", action="store_true", help="skip Table 2 and the multi-tenancy table")
    parser.add_argument("--arrays", default="512,256,128,64,32,16", help="Table 2's square array sizes")
    parser.add_argument("--aggregation", default="mixed", choices=AGGREGATIONS)
    parser.add_argument("--post-processors", type=float, default=None,
                        help="post-processor tile aggregations per slice, per pod (0: unbounded; default SOSA's "
                             "pairs, 0.5, with mixed aggregation)")
    args = parser.parse_args()
    options = ScheduleOptions(aggregation=args.aggregation, post_processors_per_pod=args.post_processors)
    technology = load_technology()
    system = build_system(32, 32, 256, "butterfly-2", technology)

    started = time.perf_counter()
    schedule(tile_workloads(PodWorkload("warm", (Gemm("g", 64, 64, 64),)), 32, 32), system)
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - started:.2f} s")

    print(f"{'network':<10} {'tile ops':>9} {'tiling s':>8} {'schedule s':>10} {'simulate s':>10} {'total s':>8} "
          f"{'util':>6} {'eff TOP/s':>9}  target < 30 s")
    workloads = []
    for name in args.networks:
        t0 = time.perf_counter()
        workload = load_pod_workload(name)
        workloads.append(workload)
        tiling = tile_workloads(workload, 32, 32, aggregation=options.aggregation)
        t1 = time.perf_counter()
        sched = schedule(tiling, system, options.post_processor_units(system.pods))
        t2 = time.perf_counter()
        run = simulate(sched)
        t3 = time.perf_counter()
        print(f"{name:<10} {tiling.ops:>9} {t1 - t0:>8.2f} {t2 - t1:>10.2f} {t3 - t2:>10.2f} {t3 - t0:>8.2f} "
              f"{run.utilization:>6.1%} {run.effective_tops:>9.1f}")

    if not args.skip_sweep:
        sweep(workloads, technology, args.scheduler)
    if not args.skip_tables:
        tables(technology, [int(a) for a in args.arrays.split(",")], options, system)


def tables(technology, arrays, options, system) -> None:
    units = options.post_processor_units(system.pods)
    how = f"{options.aggregation}" + (f", {units / system.pods:g} post-processor sums/slice/pod" if units else "")
    t0 = time.perf_counter()
    rows = scale_table([load_pod_workload(n) for n in SOSA_BENCHMARKS], technology, arrays=arrays, options=options)
    print(f"\nSOSA Table 2 on its ten benchmarks ({how}; 400 W, Butterfly-2), {time.perf_counter() - t0:.0f} s; "
          "SOSA's figures in brackets")
    print(f"{'array':<8} {'pods':>10} {'peak TOP/s':>16} {'utilisation':>16} {'effective TOP/s':>18}")
    for r in rows:
        pods, peak, util, eff = SOSA_TABLE2.get(r.array, (0, 0, 0, 0))
        print(f"{r.array:<8} {r.pods:>4} [{pods:>3}] {r.peak_tops:>7.0f} [{peak:>6.0f}] {r.utilization:>7.1%} "
              f"[{util:>6.1%}] {r.effective_tops:>8.1f} [{eff:>7.1f}]")
    best = max(rows, key=lambda r: r.effective_tops)
    print(f"peak: {best.array} (SOSA: 32x32)")
    t0 = time.perf_counter()
    result = multitenancy([load_pod_workload(n) for n in SOSA_TENANTS], system, options)
    print(f"\nMulti-tenancy, {' + '.join(SOSA_TENANTS)} at batch 1 on 256 pods of 32x32 ({how}), "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"{'schedule':<24} {'cycles':>9} {'utilisation':>12}")
    for name, cycles, util in zip(result.workloads, result.alone_cycles, result.alone_utilization):
        print(f"{name + ' alone':<24} {cycles:>9} {util:>12.1%}")
    print(f"{'one after another':<24} {result.sequential_cycles:>9}")
    print(f"{'together (' + result.joint_order + ')':<24} {result.joint_cycles:>9}")
    print(f"gain {result.gain:.2f}x (SOSA {SOSA_MULTITENANCY}x)")


def sweep(workloads, technology, scheduler) -> None:
    shapes = sweep_shapes()
    t0 = time.perf_counter()
    points = granularity_sweep(workloads, technology, shapes=shapes, scheduler=scheduler)
    elapsed = time.perf_counter() - t0
    best = max(points, key=lambda p: p.effective_tops)
    where = f"Dask {scheduler}" if scheduler else "this process"
    print(f"granularity sweep: {len(shapes)} shapes ({len(points)} within 400 W) x {len(workloads)} networks "
          f"in {elapsed:.1f} s on {where} (target < 300 s); best {best.rows}x{best.cols} x {best.pods} pods, "
          f"{best.effective_tops:.0f} TOP/s")


if __name__ == "__main__":
    main()
