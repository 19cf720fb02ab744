"""Designs whose PEs carry a recurrence from PE to PE: model, cycle simulator and timed C simulation.

    python bench/bench_recurrence.py [--trisolve 8,12] [--lu 8,12,16] [--only TEXT]

A PE that runs several statements passes values of the scop's local arrays to its neighbours
(descriptor `local_arrays[].channels`); where a value it sends depends on one it received, the PEs
finish one after the other (engine/models/recurrence.py). For every design of the triangular solve
(tests/kernel_snippets.py TRISOLVE: x[i] divided on the diagonal, passed down the column, the
partial sums passed along the row) and of LU (resources/kernels/lu.c) at the given sizes, with one
tile per loop (what such designs take), it exports the project, runs its timed C simulation (the
referee: engine/csim/timed.py), the simulator and the model, and prints the cycles, model/csim and
sim/csim, and `late`: the cycles the recurrence makes the PE that finishes last later than an
undisturbed one (0: no local array crosses a space loop or the last PE drains nothing extra), and
a summary line: how many are within 5%.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kernel_snippets import TRISOLVE  # noqa: E402

from engine.compiler.descriptor import build_descriptor  # noqa: E402
from engine.compiler.design_space import compile_kernel  # noqa: E402
from engine.csim.timed import run_timed_csim  # noqa: E402
from engine.errors import EngineError  # noqa: E402
from engine.export import export_project  # noqa: E402
from engine.models.device import load_device  # noqa: E402
from engine.models.evaluate import PerformanceModel  # noqa: E402
from engine.models.report import evaluate_configuration  # noqa: E402
from engine.resources import KERNELS  # noqa: E402
from engine.sim.simulate import simulate  # noqa: E402

try:
    from engine.models.recurrence import recurrence_lag  # noqa: E402
except ImportError:  # the code before the recurrence model (to print the "before" table)
    recurrence_lag = None


def whole(design) -> dict:
    """One tile per loop, no latency hiding or SIMD: what a several-statement design takes."""
    return {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trisolve", default="8,12", help="sizes N of the triangular solve")
    parser.add_argument("--lu", default="8,12,16", help="sizes N of LU")
    parser.add_argument("--only", default="", help="only designs whose id contains this text")
    args = parser.parse_args()
    device = load_device("u250")
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "trisolve.c"
        source.write_text(TRISOLVE)
        cases = [("trisolve", source, int(n)) for n in args.trisolve.split(",") if n]
        cases += [("lu", KERNELS / "lu.c", int(n)) for n in args.lu.split(",") if n]
        print(f"{'kernel':>8} {'N':>3} {'design':>12} {'model':>7} {'sim':>7} {'csim':>7} {'model/csim':>10} "
              f"{'sim/csim':>8} {'late':>5} {'csim s':>6}")
        within = total = 0
        for kernel, path, n in cases:
            space = compile_kernel(path, defines=[f"N={n}"])
            for design in space.designs:
                if args.only not in design.id:
                    continue
                params = whole(design)
                model = PerformanceModel(space, design, device)
                report = evaluate_configuration(model, params)
                predicted = report["latency_cycles"]
                simulated = simulate(build_descriptor(space, design, model.architecture), report["params"]).cycles
                late = "-"
                if recurrence_lag is not None:
                    late = str(recurrence_lag(model.architecture, dict(zip(design.band_loops, design.problem_size)), 2))
                try:
                    start = time.perf_counter()
                    project = export_project(space, design, params, Path(folder) / f"{kernel}_{n}_{design.id}",
                                             floorplan="none")
                    timed = run_timed_csim(project)
                    seconds = time.perf_counter() - start
                except EngineError as exc:
                    print(f"{kernel:>8} {n:3d} {design.id:>12} {predicted:7.0f} {simulated:7d}  not exported: {exc}")
                    continue
                if not timed.passed:
                    print(f"{kernel:>8} {n:3d} {design.id:>12} {predicted:7.0f} {simulated:7d}  csim FAIL")
                    continue
                total += 1
                within += abs(predicted - timed.cycles) <= 0.05 * timed.cycles
                print(f"{kernel:>8} {n:3d} {design.id:>12} {predicted:7.0f} {simulated:7d} {timed.cycles:7d} "
                      f"{(predicted - timed.cycles) / timed.cycles:+10.1%} "
                      f"{(simulated - timed.cycles) / timed.cycles:+8.1%} {late:>5} {seconds:6.1f}", flush=True)
        print(f"model within 5% of the timed C simulation: {within}/{total}")


if __name__ == "__main__":
    main()
