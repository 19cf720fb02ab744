"""Front-end speed: parse + dependence analysis + enumeration of all designs, per bundled kernel.

    python bench/bench_frontend.py [--repeat 5]

Prints a table (median wall time of the whole pipeline and of its stages) and the issue's targets:
CNN under 3 s, MM under 1 s, LU under 2 s (bench_lu.py measures LU at AutoSA's sizes).
"""
from __future__ import annotations

import argparse
import statistics
import time

from engine.compiler.band import find_band
from engine.compiler.dependences import analyze_dependences
from engine.compiler.design_space import explore_designs
from engine.compiler.frontend import parse_kernel
from engine.compiler.polyhedral import build_model
from engine.resources import bundled_kernels, kernel_presets, preset_defines

TARGETS = {"mm": 1.0, "cnn": 3.0, "lu": 2.0}


def _time(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def measure(path, defines):
    t_parse, kernel = _time(lambda: parse_kernel(path, defines=defines))
    t_model, model = _time(lambda: build_model(kernel))
    t_deps, deps = _time(lambda: analyze_dependences(model))
    t_band, _ = _time(lambda: find_band(model, deps))
    t_all, space = _time(lambda: explore_designs(kernel))
    return {"parse": t_parse, "model": t_model, "deps": t_deps, "band": t_band,
            "total": t_parse + t_all, "designs": len(space.designs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'kernel':8} {'preset':7} {'designs':>7} {'parse s':>8} {'deps s':>8} {'total s':>8} "
          f"{'target s':>8}  verdict")
    for name, path in bundled_kernels().items():
        for preset in ("small", "paper"):
            if kernel_presets(path) and preset not in kernel_presets(path):
                continue
            defines = preset_defines(path, preset) if kernel_presets(path) else []  # lu.c: its own N
            if not kernel_presets(path) and preset != "small":
                continue
            runs = [measure(path, defines) for _ in range(args.repeat)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            target = TARGETS.get(name)
            verdict = "-" if target is None else ("ok" if med["total"] < target else "SLOW")
            print(f"{name:8} {preset if kernel_presets(path) else 'file':7} {runs[0]['designs']:7d} {med['parse']:8.3f} {med['deps']:8.3f} "
                  f"{med['total']:8.3f} {target if target else '-':>8}  {verdict}")


if __name__ == "__main__":
    main()
