"""Long searches that may improve bench/best_known.json (nothing else writes it).

    python bench/update_best_known.py [--seconds 30] [--methods hybrid evolution annealing] [--seeds 2]

For each of the 18 MM designs at 1024^3 on the U250 (fp32, 0.7 cap, 300 MHz), runs each method
with each seed and keeps the best latency any run found, with its parameters and how it was found.
An entry whose model fingerprint no longer matches the code is replaced, not compared.
"""
from __future__ import annotations

import argparse
import datetime
import json

from search_common import BEST_KNOWN, PROBLEM, fingerprint, load_best_known, problem, run_method, search_space


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--methods", nargs="+", default=["hybrid", "evolution", "annealing"])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=0, help="so that later passes try new seeds")
    parser.add_argument("--designs", nargs="*")
    args = parser.parse_args()
    space, device = problem()
    table = load_best_known()
    table["_doc"] = ("Best latency any method found for each MM 1024^3 design on the U250 (fp32, 70% usable, "
                     "300 MHz), with its parameters and how it was found. Written only by "
                     "bench/update_best_known.py; `model` is the fingerprint of the model it was found with.")
    table["problem"] = PROBLEM
    print(f"{'design':14} {'old GOP/s':>10} {'new GOP/s':>10}  found by")
    for design in args.designs or [d.id for d in space.designs]:
        search = search_space(space, device, design)
        stamp = fingerprint(search)
        entry = table["designs"].get(design)
        if entry and entry.get("model") != stamp:
            entry = None  # found with another model: not comparable
        old = entry["throughput_gops"] if entry else None
        for method in args.methods:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                result = run_method(search, method, seconds=args.seconds, seed=seed)
                if result.best and (entry is None or result.best.latency_cycles < entry["latency_cycles"]):
                    entry = {"latency_cycles": result.best.latency_cycles, "throughput_gops": result.best.throughput_gops,
                             "dsp": result.best.dsp, "bram18k": result.best.bram18k, "params": result.best.params,
                             "found_by": f"{method}, seed {seed}, {args.seconds:g} s",
                             "date": datetime.date.today().isoformat(), "model": stamp}
        table["designs"][design] = entry
        print(f"{design:14} {old if old else float('nan'):10.1f} {entry['throughput_gops']:10.1f}  {entry['found_by']}",
              flush=True)
        BEST_KNOWN.write_text(json.dumps(table, indent=2) + "\n")


if __name__ == "__main__":
    main()
