"""LU decomposition (resources/kernels/lu.c, AutoSA's LU form): compile time, designs, exact iteration
counts over the pyramid, and latency next to AutoSA's published figures.

    python bench/bench_lu.py [--repeat 3]

For N = 12 / 16 / 20 / 24 it compiles the kernel and lists its designs (target: under 2 s), counts the
band points exactly (isl) against the N^3 box, and evaluates AutoSA's configuration of its paper's
array (`--sa-sizes` space_time[3] = [k,j], array_part[-1,-1,-1], no latency hiding) with our
latency model and our simulator, both converted to microseconds at AutoSA's 250 MHz. AutoSA's
numbers are from RTL simulation (AutoSA Table 8; reference/published-results.md).

The model and the simulator read the current descriptor, which does not yet describe LU's nine
statements (see the last column and the issue note): treat those latencies as what the current
back end makes of LU, not as a reproduction of Table 8.
"""
from __future__ import annotations

import argparse
import statistics
import time

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.errors import EngineError
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import simulate

AUTOSA_US = {12: 3.42, 16: 5.23, 20: 7.68, 24: 10.44}  # AutoSA Table 8, RTL simulation at 250 MHz
AUTOSA_MHZ = 250
AUTOSA_STRING = "{kernel[]->space_time[3];kernel[]->array_part[-1,-1,-1];kernel[]->latency[]}"
TARGET_S = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path = KERNELS / "lu.c"
    device = load_device("u250")
    print(f"{'N':>3} {'compile s':>9} {'designs':>7} {'points':>7} {'N^3':>6} {'AutoSA us':>9} "
          f"{'model us':>9} {'sim us':>8} {'verdict':>7}  compute statements in the descriptor")
    for n in AUTOSA_US:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            space = compile_kernel(path, defines=[f"N={n}"])
            times.append(time.perf_counter() - start)
        compile_s = statistics.median(times)
        points = space.band.point_count(space.model.domains)
        selection = select(space, AUTOSA_STRING)
        model_us = sim_us = "-"
        try:
            model = PerformanceModel(space, selection.design, device)
            report = evaluate_configuration(model, selection.params)
            model_us = f"{report['latency_cycles'] / AUTOSA_MHZ:.2f}"
            descriptor = build_descriptor(space, selection.design, model.architecture)
            result = simulate(descriptor, report["params"])
            sim_us = f"{result.cycles / AUTOSA_MHZ:.2f}"
            compute = ", ".join(space.band.full_statements)
        except EngineError as exc:
            compute = f"error: {exc}"
        verdict = "ok" if compile_s < TARGET_S else "SLOW"
        print(f"{n:3d} {compile_s:9.3f} {len(space.designs):7d} {points:7d} {n ** 3:6d} {AUTOSA_US[n]:9.2f} "
              f"{model_us:>9} {sim_us:>8} {verdict:>7}  {compute} of {len(space.kernel.statements)}")
    print(f"design: {selection.equivalent()} (AutoSA {AUTOSA_STRING})")


if __name__ == "__main__":
    main()
