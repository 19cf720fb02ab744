"""LU decomposition (resources/kernels/lu.c, AutoSA's LU form): compile time, designs, exact iteration
counts over the pyramid, and latency next to AutoSA's published figures.

    python bench/bench_lu.py [--repeat 3] [--timed 12,16] [--kernel PATH]

`--kernel` takes another form of LU, e.g. AutoSA's own autosa_tests/lu/kernel.c as written (2-D
local arrays rewritten at every step, expanded by engine/compiler/expansion.py); N is set for each size as in lu.c.
The `PEs` column is the model's PE count (PEs where the iteration domain has points: AutoSA's
triangle N (N + 1) / 2 along k and j) beside the grid's N^2.

For N = 12 / 16 / 20 / 24 it compiles the kernel and lists its designs (target: under 2 s), counts the
band points exactly (isl) against the N^3 box, and evaluates AutoSA's configuration of its paper's
array (`--sa-sizes` space_time[3] = [k,j], array_part[-1,-1,-1], no latency hiding) with our
latency model and our simulator, both converted to microseconds at AutoSA's 250 MHz. AutoSA's
numbers are from RTL simulation (AutoSA Table 8; reference/published-results.md).

At the sizes given with `--timed` (default 12 and 16) the design is also exported and its timed C
simulation (engine/csim/timed.py, the referee of model and simulator) is printed beside them, with
the model's prologue / main / epilogue: where the cycles go; a last table puts model, simulator
and timed C simulation side by side for every design at those sizes. The array along k and j drains each
U and L element once, from the PE that writes it last (descriptor io_groups[].last_writer); V leaves
each PE 27 cycles into its iteration (the division of the iteration before, then the
multiply-subtract: engine/compiler/architecture/pe.py pipelined_ready). docs/export.md, "LU beside
AutoSA's RTL figures", attributes the rest of the gap.

The compile time is also printed as a ratio to compiling and listing MM (resources/kernels/mm.c,
its small preset) measured in the same run, since the machine is shared: `vs MM` below 1 means LU
compiles faster than the 1 s MM target's kernel. The model counts all of LU's statements (the
PE's operators, its pipeline depth through the same-iteration chain of statements) and keeps the
scop's local arrays on chip (PE registers and PE-to-PE FIFOs, descriptor `local_arrays`); DRAM
sees A, L and U only.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.csim import run_timed_csim
from engine.errors import EngineError
from engine.export.project import export_project
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS, preset_defines
from engine.sim import simulate

AUTOSA_US = {12: 3.42, 16: 5.23, 20: 7.68, 24: 10.44}  # AutoSA Table 8, RTL simulation at 250 MHz
AUTOSA_MHZ = 250
AUTOSA_STRING = "{kernel[]->space_time[3];kernel[]->array_part[-1,-1,-1];kernel[]->latency[]}"
TARGET_S = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timed", default="12,16", help="sizes at which to export and run the timed C simulation")
    parser.add_argument("--kernel", type=Path, default=KERNELS / "lu.c", help="the LU kernel (a C file whose N the bench sets)")
    args = parser.parse_args()
    timed_sizes = {int(n) for n in args.timed.split(",") if n}
    path = args.kernel
    device = load_device("u250")
    mm_times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        compile_kernel(KERNELS / "mm.c", defines=preset_defines(KERNELS / "mm.c", "small"))
        mm_times.append(time.perf_counter() - start)
    mm_s = statistics.median(mm_times)
    print(f"MM compile + list: {mm_s:.3f} s (median of {args.repeat})")
    print(f"{'N':>3} {'compile s':>9} {'vs MM':>6} {'designs':>7} {'points':>7} {'N^3':>6} {'AutoSA us':>9} "
          f"{'PEs':>9} {'model us':>9} {'sim us':>8} {'timed us':>8} {'sim/model':>9} {'model/timed':>11} "
          f"{'pro/main/epi cycles':>19} {'verdict':>7}  statements the PE runs")
    for n in AUTOSA_US:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            space = compile_kernel(path, defines=[f"N={n}"])
            times.append(time.perf_counter() - start)
        compile_s = statistics.median(times)
        points = space.band.point_count(space.model.domains)
        selection = select(space, AUTOSA_STRING)
        model_us = sim_us = ratio = timed_us = timed_ratio = split = pes = "-"
        try:
            model = PerformanceModel(space, selection.design, device)
            report = evaluate_configuration(model, selection.params)
            model_us = f"{report['latency_cycles'] / AUTOSA_MHZ:.2f}"
            pes = f"{report['pes']['count']}/{n * n}"
            split = f"{report['prologue']:.0f}/{report['main']:.0f}/{report['epilogue']:.0f}"
            descriptor = build_descriptor(space, selection.design, model.architecture)
            result = simulate(descriptor, report["params"])
            sim_us = f"{result.cycles / AUTOSA_MHZ:.2f}"
            ratio = f"{result.cycles / report['latency_cycles']:.3f}"
            if n in timed_sizes:
                with tempfile.TemporaryDirectory() as folder:
                    # (AutoSA's configuration is over the U250's budget at N = 24: timed all the same)
                    export_project(space, selection.design, selection.params, Path(folder) / "lu",
                                   allow_over_budget=True, floorplan="none")
                    timed = run_timed_csim(Path(folder) / "lu")
                timed_us = f"{timed.cycles / AUTOSA_MHZ:.2f}" if timed.passed else "FAIL"
                timed_ratio = f"{report['latency_cycles'] / timed.cycles:.3f}"
            compute = ", ".join(space.band.compute_statements)
        except EngineError as exc:
            compute = f"error: {exc}"
        verdict = "ok" if compile_s < TARGET_S else "SLOW"
        print(f"{n:3d} {compile_s:9.3f} {compile_s / mm_s:6.2f} {len(space.designs):7d} {points:7d} {n ** 3:6d} "
              f"{AUTOSA_US[n]:9.2f} {pes:>9} {model_us:>9} {sim_us:>8} {timed_us:>8} {ratio:>9} {timed_ratio:>11} "
              f"{split:>19} {verdict:>7}  "
              f"{compute} of {len(space.kernel.statements)}")
    print(f"design: {selection.equivalent()} (AutoSA {AUTOSA_STRING})")
    print()
    print("every design at one tile per loop, model us at 250 MHz (all six are exported and C-simulated by "
          "tests/engine/export/test_guarded_band_export.py)")
    names = [d.id for d in space.designs]
    print(f"{'N':>3} {'AutoSA us':>9} " + " ".join(f"{n:>14}" for n in names))
    for n in AUTOSA_US:
        space = compile_kernel(path, defines=[f"N={n}"])
        cells = []
        for design in space.designs:
            model = PerformanceModel(space, design, device)
            params = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
            report = evaluate_configuration(model, params)
            cells.append(f"{report['latency_cycles'] / AUTOSA_MHZ:14.2f}")
        print(f"{n:3d} {AUTOSA_US[n]:9.2f} " + " ".join(cells))

    print()
    print("every design at one tile per loop, cycles: model / simulator / timed C simulation of the export")
    print(f"{'N':>3} {'design':>12} {'model':>7} {'sim':>7} {'timed':>7} {'model/timed':>11} {'sim/timed':>9}")
    for n in sorted(timed_sizes):
        space = compile_kernel(path, defines=[f"N={n}"])
        for design in space.designs:
            model = PerformanceModel(space, design, device)
            params = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
            report = evaluate_configuration(model, params)
            simulated = simulate(build_descriptor(space, design, model.architecture), report["params"]).cycles
            with tempfile.TemporaryDirectory() as folder:
                export_project(space, design, params, Path(folder) / "lu", allow_over_budget=True, floorplan="none")
                timed = run_timed_csim(Path(folder) / "lu")
            cycles = report["latency_cycles"]
            print(f"{n:3d} {design.id:>12} {cycles:7.0f} {simulated:7d} {timed.cycles if timed.passed else 'FAIL':>7} "
                  f"{cycles / timed.cycles:11.3f} {simulated / timed.cycles:9.3f}")


if __name__ == "__main__":
    main()
