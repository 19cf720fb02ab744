"""Timed C simulation on the full-size slices of issue 13: wall time of its stages and its cycles beside
the model's latency.

    python bench/bench_timed_csim.py [--only NAME ...] [--keep DIR]

Target (issue 13): a full-size slice (about 10^8 MACs) timed in under 2 minutes, the g++ build cached
per export; (issue 27) the full MM 1024^3 mm_large timed in under 5 minutes and 2 GB (`--only MM 1024`:
not in the default set, it takes minutes). Each workload is exported (over budget allowed: a slice of a device-filling design),
timed once with a cold build cache and once more reusing the build; one line per workload: MACs,
build / run / replay seconds of the cold run, total cold and cached seconds, pipelined iterations
replayed, trace records, the timed cycles, the model's latency and their ratio, the peak memory of
the programs run so far (g++ and the traced run: RUSAGE_CHILDREN), the slowest process.
Wall times depend on the machine's load: compare them only within one run.
"""
from __future__ import annotations

import argparse
import math
import resource
import tempfile
import time
from pathlib import Path

from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.export import export_project
from engine.resources import KERNELS

WORKLOADS = {
    "MM 64^3 tutorial": ("mm.c", {"I": 64, "J": 64, "K": 64}, "i-j__i-j.k",
                         {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 8, "j_t2": 8, "k_t2": 2}),
    "MM 520x512x1024 slice": ("mm.c", {"I": 520, "J": 512, "K": 1024}, "i-j__i-j.k",
                              {"i_t1": 260, "j_t1": 256, "k_t1": 512, "i_t2": 20, "j_t2": 16, "k_t2": 8}),
    "MM 1024^3 mm_large": ("mm.c", {"I": 1024, "J": 1024, "K": 1024}, "i-j__i-j.k",
                           {"i_t1": 260, "j_t1": 256, "k_t1": 512, "i_t2": 20, "j_t2": 16, "k_t2": 8}),
    "CNN 16x14 PEs SIMD 8": ("cnn.c", {"O": 128, "I": 64, "H": 28, "W": 28, "P": 3, "Q": 3}, "o-h__o-h-w.i-p-q",
                             {"o_t1": 64, "h_t1": 28, "w_t1": 28, "i_t1": 64, "p_t1": 3, "q_t1": 3,
                              "o_t2": 4, "h_t2": 2, "w_t2": 4, "i_t2": 8}),
}


OPT_IN = {"MM 1024^3 mm_large"}  # run only when named by --only


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="workloads whose name starts with one of these (e.g. MM CNN)")
    parser.add_argument("--keep", type=Path, help="export into DIR (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-timed-") as scratch:
        root = args.keep or Path(scratch)
        print(f"{'workload':24} {'MACs':>12} {'build s':>8} {'run s':>7} {'replay s':>8} {'cold s':>7} "
              f"{'cached s':>8} {'iterations':>12} {'records':>8} {'cycles':>11} {'model':>9} {'ratio':>6} {'peak MB':>8}"
              f"  slowest")
        for name, (kernel, sizes, design_id, params) in WORKLOADS.items():
            if (args.only and not any(name.startswith(o) for o in args.only)) or (
                    not args.only and name in OPT_IN):
                continue
            space = compile_kernel(KERNELS / kernel, defines={k: str(v) for k, v in sizes.items()})
            project = export_project(space, space.design(design_id), params,
                                     root / name.replace(" ", "_").replace("^", ""), force=True,
                                     allow_over_budget=True, floorplan="none")
            cache = Path(scratch) / "cache" / name.replace(" ", "_")
            start = time.perf_counter()
            result = run_timed_csim(project, cache=cache)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            again = run_timed_csim(project, cache=cache)
            cached = time.perf_counter() - start
            assert again.cached and again.cycles == result.cycles
            s = result.seconds
            ratio = result.cycles / result.model_latency if result.model_latency else math.nan
            print(f"{name:24} {math.prod(sizes.values()):>12,} {s['build']:>8.1f} {s['run']:>7.1f} "
                  f"{s['replay']:>8.1f} {cold:>7.1f} {cached:>8.1f} {result.iterations:>12,} {result.records:>8,} "
                  f"{result.cycles:>11,} {result.model_latency or 0:>9,.0f} {ratio:>6.2f} "
                  f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:>8,.0f}  {result.slowest}"
                  f"{'' if result.passed else '  values ' + result.csim}", flush=True)


if __name__ == "__main__":
    main()
