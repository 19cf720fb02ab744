"""`systolic network` on Dask: the same network run with 1 worker and with 2, in one run.

    python bench/bench_network.py [--network vgg16] [--seconds 0.5] [--designs all|time-simd|output] [--workers 1 2]

Each row is a fresh LocalCluster (single-threaded worker processes), a fresh run database and an
empty model cache (no row reuses another's models): the
cluster's start-up and each worker's one-off preparation (imports, the envelope's designs) are timed
apart from the searches; the searches' wall time gives the speed-up against the first row (target:
>= 1.7x with 2 workers on a 2-core machine). The single-array phase is left out (K tasks, not the
pairs). `--designs output` keeps the designs with the output-on-chip ordering (10 for cnn.c);
`time-simd` keeps the 30 designs whose SIMD loop is a time loop, the set the issue's performance
case was written for (VGG16 x 30 designs at 1 s per pair under 4 minutes); `all` adds the 12 that
vectorise a space loop (issue 14), 42 in all.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from engine.network.designs import network_designs
from engine.network.runner import Cluster, SingleArrayOptions, execute, job_of, pair_tasks
from engine.network.store import NetworkStore
from engine.network.task import prepare_worker
from engine.network.workload import load_network
from engine.resources import KERNELS
from engine.studies.networks import output_ordering_designs


def measure(workers: int, network, designs: list[str], seconds: float, folder: Path) -> dict:
    os.environ["SYSTOLIC_STUDIO_CACHE"] = str(folder / f"models-{workers}")  # each row builds its own models
    t0 = time.perf_counter()
    with Cluster(workers=workers) as cluster, NetworkStore(folder / f"runs-{workers}.sqlite") as store:
        started = time.perf_counter() - t0
        run_id = store.create(kernel_path=str(KERNELS / "cnn.c"), kernel_text=(KERNELS / "cnn.c").read_text(),
                              defines=[], network=network.name,
                              workload=[{"name": l.name, "tags": [], "sizes": l.sizes} for l in network.layers],
                              device="u250", method="hybrid", seconds=seconds, samples=None, seed=0,
                              options={"designs": designs})
        run = store.load(run_id)
        t1 = time.perf_counter()
        cluster.client.run(prepare_worker, job_of(run))
        prepared = time.perf_counter() - t1
        t2 = time.perf_counter()
        answers, status = execute(run, store, cluster, single=SingleArrayOptions(designs=0))
        searched = time.perf_counter() - t2
        pairs = len(store.pairs(run_id))
    unique = len({(t.sizes, t.design) for t in pair_tasks(run)})
    return {"workers": workers, "start": started, "prepare": prepared, "search": searched, "pairs": pairs,
            "searches": unique, "status": status, "best": answers.designs[0].id if answers.designs else "-",
            "share": answers.designs[0].geomean_share if answers.designs else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="vgg16")
    parser.add_argument("--seconds", type=float, default=0.5, help="budget per pair")
    parser.add_argument("--designs", choices=("all", "time-simd", "output"), default="output")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    network = load_network(args.network)
    space = network_designs(KERNELS / "cnn.c", network).space
    designs = ([d.id for d in space.designs] if args.designs == "all"
               else [d.id for d in space.designs if "__simd-" not in d.id] if args.designs == "time-simd"
               else output_ordering_designs(space))
    print(f"{network.name}: {len(network.layers)} layers x {len(designs)} designs, hybrid {args.seconds:g} s per pair")
    print(f"{'workers':>7} {'start s':>8} {'prepare s':>10} {'search s':>9} {'pairs':>6} {'searches':>9} "
          f"{'speed-up':>9}  best dataflow (geo. mean share)")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for workers in args.workers:
            r = measure(workers, network, designs, args.seconds, Path(folder))
            rows.append(r)
            speed = rows[0]["search"] / r["search"]
            print(f"{r['workers']:>7} {r['start']:8.1f} {r['prepare']:10.1f} {r['search']:9.1f} {r['pairs']:>6} "
                  f"{r['searches']:>9} {speed:8.2f}x  {r['best']} ({100 * r['share']:.0f}%) {r['status']}", flush=True)


if __name__ == "__main__":  # the local cluster's worker processes re-import this file
    main()
