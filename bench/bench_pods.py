"""Multi-pod speed: scheduling + cycle replay of a network, and the granularity sweep.

    python bench/bench_pods.py [--networks resnet50 bert_base vgg16] [--scheduler tcp://HOST:PORT]
                               [--skip-sweep]

Targets (issue 16): ResNet50 on 256 pods of 32x32 (Butterfly-2) scheduled and simulated in < 30 s;
the granularity sweep (>= 200 shapes, 3 networks) in < 5 minutes (on a Dask cluster when
--scheduler is given). The first schedule also pays numba's compilation of the scheduler's inner
loop (cached on disk afterwards); it is timed apart and printed as 'warm-up'.
"""
from __future__ import annotations

import argparse
import time

from engine.pods.scheduler import schedule
from engine.pods.simulate import simulate
from engine.pods.studies import granularity_sweep, sweep_shapes
from engine.pods.system import build_system
from engine.pods.technology import load_technology
from engine.pods.tiling import tile_workloads
from engine.pods.workload import PodWorkload, Gemm, load_pod_workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=["resnet50", "bert_base", "vgg16"])
    parser.add_argument("--scheduler", help="Dask scheduler address for the sweep")
    parser.add_argument("--skip-sweep", action="store_true")
    args = parser.parse_args()
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
        tiling = tile_workloads(workload, 32, 32)
        t1 = time.perf_counter()
        sched = schedule(tiling, system)
        t2 = time.perf_counter()
        run = simulate(sched)
        t3 = time.perf_counter()
        print(f"{name:<10} {tiling.ops:>9} {t1 - t0:>8.2f} {t2 - t1:>10.2f} {t3 - t2:>10.2f} {t3 - t0:>8.2f} "
              f"{run.utilization:>6.1%} {run.effective_tops:>9.1f}")

    if args.skip_sweep:
        return
    shapes = sweep_shapes()
    t0 = time.perf_counter()
    points = granularity_sweep(workloads, technology, shapes=shapes, scheduler=args.scheduler)
    elapsed = time.perf_counter() - t0
    best = max(points, key=lambda p: p.effective_tops)
    where = f"Dask {args.scheduler}" if args.scheduler else "this process"
    print(f"granularity sweep: {len(shapes)} shapes ({len(points)} within 400 W) x {len(workloads)} networks "
          f"in {elapsed:.1f} s on {where} (target < 300 s); best {best.rows}x{best.cols} x {best.pods} pods, "
          f"{best.effective_tops:.0f} TOP/s")


if __name__ == "__main__":
    main()
