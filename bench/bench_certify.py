"""How far the certifier proves each design's best: a table per problem of the start, the incumbent at
the end, the proven lower bound, the gap, the boxes explored and pruned and the time.

    python bench/bench_certify.py [--seconds 60] [--gap 0.01] [--designs ID ...]            # MM 1024^3, U250
    python bench/bench_certify.py --cnn [--gap 0.05] [--search-seconds 5] [--designs ...]   # CNN, VGG16 CONV2

MM starts from bench/best_known.json (its parameters re-evaluated under the current model; a design
without an entry starts from a hybrid search of --search-seconds). CNN starts from a hybrid search of
--search-seconds per design. "proven" means the gap is within the target; otherwise the gap is how far
the proof got in the time.
"""
from __future__ import annotations

import argparse
import time

from search_common import load_best_known, problem, run_method, search_space

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.resources import KERNELS, preset_defines
from engine.search.certify import certify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="time per design for the proof")
    parser.add_argument("--gap", type=float, help="target gap (default 0.01 for MM, 0.05 for CNN)")
    parser.add_argument("--cnn", action="store_true", help="CNN on VGG16's CONV2 sizes instead of MM 1024^3")
    parser.add_argument("--search-seconds", type=float, default=5.0, help="search for a start this long")
    parser.add_argument("--designs", nargs="*")
    args = parser.parse_args()
    if args.cnn:
        kernel = KERNELS / "cnn.c"
        space = compile_kernel(kernel, defines=preset_defines(kernel, "vgg16_conv2"))
        device, known, gap = load_device("u250"), {}, 0.05 if args.gap is None else args.gap
        title = "CNN VGG16 CONV2 (O=64 I=64 H=W=224 P=Q=3), U250 70%, fp32"
    else:
        space, device = problem()
        known, gap = load_best_known()["designs"], 0.01 if args.gap is None else args.gap
        title = "MM 1024^3, U250 70%, fp32"
    print(f"{title}; target gap {100 * gap:g}%, {args.seconds:g} s per design")
    header = (f"{'design':20} {'start':>11} {'incumbent':>11} {'bound':>11} {'gap':>8} {'proven':>6} "
              f"{'explored':>10} {'pruned':>10} {'s':>6}  start from")
    print(header)
    print("-" * len(header))
    proven = 0
    designs = args.designs or [d.id for d in space.designs]
    for design in designs:
        search = search_space(space, device, design)
        entry = known.get(design)
        if entry and set(search.names) <= set(entry["params"]):
            start, origin = {n: entry["params"][n] for n in search.names}, "best_known.json"
        else:
            best = run_method(search, "hybrid", seconds=args.search_seconds, seed=0).best
            start, origin = (best.params if best else None), f"hybrid {args.search_seconds:g} s"
        start_latency = float(search.evaluate([start]).fitness[0]) if start else float("inf")
        began = time.perf_counter()
        c = certify(search, start, gap=gap, seconds=args.seconds)
        elapsed = time.perf_counter() - began
        proven += c.proven
        if not c.fits:
            print(f"{design:20} no configuration fits (proven): {c.notes[0]}")
            continue
        incumbent = f"{c.latency_cycles:11,.0f}" if c.latency_cycles is not None else f"{'-':>11}"
        gap_text = f"{100 * c.gap:7.2f}%" if c.gap is not None else f"{'-':>8}"
        print(f"{design:20} {start_latency:11,.0f} {incumbent} {c.lower_bound_cycles:11,.0f} {gap_text} "
              f"{'yes' if c.proven else 'no':>6} {c.boxes_explored:10,} {c.boxes_pruned:10,} {elapsed:6.1f}  {origin}",
              flush=True)
    print(f"{proven} of {len(designs)} designs proven within {100 * gap:g}%")


if __name__ == "__main__":
    main()
