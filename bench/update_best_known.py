"""Long searches that may improve bench/best_known.json (nothing else writes it).

    python bench/update_best_known.py [--seconds 30] [--methods hybrid evolution annealing] [--seeds 2] [--rescore]
    python bench/update_best_known.py --rescore --methods          (re-score stale entries only)
    python bench/update_best_known.py --methods --certify 60       (prove each entry: bound and gap)

For each of the 27 MM designs at 1024^3 on the U250 (fp32, 0.7 cap, 300 MHz), runs each method
with each seed and keeps the best latency any run found, with its parameters and how it was found.
An entry whose model fingerprint no longer matches the code is replaced, not compared; with
--rescore its parameters are first evaluated again under the current model and kept as the entry to
beat (its `found_by` says so), so a model change does not throw away what earlier searches found.
With --certify S, each entry is then certified (engine/search/certify.py, S seconds, 1% target): it
gets `lower_bound_cycles` (no configuration of the design is faster), `gap` (latency / bound - 1)
and `proven` (gap within 1%); a better configuration found by the proof replaces the entry.
"""
from __future__ import annotations

import argparse
import datetime
import json

from search_common import BEST_KNOWN, PROBLEM, fingerprint, load_best_known, problem, run_method, search_space

from engine.search.certify import certify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--methods", nargs="*", default=["hybrid", "evolution", "annealing"])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=0, help="so that later passes try new seeds")
    parser.add_argument("--designs", nargs="*")
    parser.add_argument("--rescore", action="store_true",
                        help="re-evaluate stale entries' parameters under the current model instead of dropping them")
    parser.add_argument("--certify", type=float, metavar="SECONDS",
                        help="then prove each entry within 1%% of its design's optimum, SECONDS each")
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
        old = entry["throughput_gops"] if entry else None
        if entry and entry.get("model") != stamp:
            entry = rescored(search, entry, stamp) if args.rescore else None  # another model: not comparable
        for method in args.methods:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                result = run_method(search, method, seconds=args.seconds, seed=seed)
                if result.best and (entry is None or result.best.latency_cycles < entry["latency_cycles"]):
                    entry = {"latency_cycles": result.best.latency_cycles, "throughput_gops": result.best.throughput_gops,
                             "dsp": result.best.dsp, "bram18k": result.best.bram18k, "params": result.best.params,
                             "found_by": f"{method}, seed {seed}, {args.seconds:g} s",
                             "date": datetime.date.today().isoformat(), "model": stamp}
        if entry is None:
            table["designs"].pop(design, None)
            print(f"{design:14} {old if old else float('nan'):10.1f} {'-':>10}  (stale entry does not fit; no run)")
            continue
        if args.certify:
            entry = certified(search, entry, stamp, args.certify)
        table["designs"][design] = entry
        print(f"{design:14} {old if old else float('nan'):10.1f} {entry['throughput_gops']:10.1f}  {entry['found_by']}",
              flush=True)
        BEST_KNOWN.write_text(json.dumps(table, indent=2) + "\n")


def certified(search, entry: dict, stamp: str, seconds: float) -> dict:
    """The entry with the certifier's proven bound and gap (and its better configuration, if it found one)."""
    params = {k: v for k, v in entry["params"].items() if k in search.model.tunable}
    c = certify(search, params, gap=0.01, seconds=seconds)
    if c.improved and c.params is not None:
        ev = search.model.evaluate(c.params)
        entry = {"latency_cycles": c.latency_cycles, "throughput_gops": float(ev["throughput_gops"]),
                 "dsp": float(ev["DSP"]), "bram18k": float(ev["BRAM18K"]), "params": c.params,
                 "found_by": f"certify, {seconds:g} s", "date": datetime.date.today().isoformat(), "model": stamp}
    return entry | {"lower_bound_cycles": c.lower_bound_cycles, "gap": c.gap, "proven": c.proven,
                    "certified_by": f"certify, {seconds:g} s, {c.boxes_explored} boxes"}


def rescored(search, entry: dict, stamp: str) -> dict | None:
    """A stale entry's parameters under the current model, or None if they no longer fit."""
    params = {k: v for k, v in entry["params"].items() if k in search.model.tunable}
    ev = search.model.evaluate(params)
    if not bool(ev["fits"]):  # the tuner's feasibility: every resource within the budget
        return None
    return {"latency_cycles": float(ev["latency_cycles"]), "throughput_gops": float(ev["throughput_gops"]),
            "dsp": float(ev["DSP"]), "bram18k": float(ev["BRAM18K"]), "params": entry["params"],
            "found_by": f"{entry['found_by'].split(' (re-scored')[0]} (re-scored under model {stamp})",
            "date": datetime.date.today().isoformat(), "model": stamp}


if __name__ == "__main__":
    main()
