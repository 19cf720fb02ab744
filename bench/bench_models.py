"""Model speed: building descriptors + models for every design, and evaluating populations.

    python bench/bench_models.py [--population 1000000]
    python bench/bench_models.py --against DIR [--rounds 15]    (this tree's speed / DIR's, e.g. a git worktree)

Targets (issue "Hardware construction and performance models"): >= 1,000,000 configurations per
second single-threaded (latency + DSP + BRAM) for an MM design; all 18 MM designs built in < 2 s
and all 30 CNN designs in < 5 s, front end included.

`--against DIR` compares two versions of the code on a busy machine: one worker process per tree
builds the same designs' models once, then the two evaluate the same population in turns, round
after round; the table gives each tree's best time and the ratio (this tree's configurations per
second over DIR's), which the load of the machine affects alike.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # single-threaded, as the target says

import numpy as np  # noqa: E402

from engine.compiler.descriptor import build_descriptor  # noqa: E402
from engine.compiler.design_space import compile_kernel  # noqa: E402
from engine.models.device import load_device  # noqa: E402
from engine.models.evaluate import PerformanceModel  # noqa: E402
from engine.models.sampling import random_configuration  # noqa: E402
from engine.resources import KERNELS  # noqa: E402


def build_all(kernel: str):
    start = time.perf_counter()
    space = compile_kernel(KERNELS / f"{kernel}.c")
    device = load_device()
    models = []
    for design in space.designs:
        model = PerformanceModel(space, design, device)
        build_descriptor(space, design, model.architecture)
        models.append(model)
    return time.perf_counter() - start, space, models


def population(design, n: int, rng) -> dict[str, np.ndarray]:
    base = [random_configuration(design, rng) for _ in range(256)]
    picks = rng.integers(0, len(base), n)
    return {k: np.array([c[k] for c in base])[picks] for k in base[0]}


RATIO_DESIGNS = (("mm", 0), ("mm", 13), ("mm", -1), ("cnn", 0), ("cnn", -1))


def worker(population_size: int) -> None:
    """--worker: build RATIO_DESIGNS' models, then time one evaluation per line read from stdin."""
    rng = np.random.default_rng(0)
    models, configs = [], []
    for kernel, k in RATIO_DESIGNS:
        space = compile_kernel(KERNELS / f"{kernel}.c")
        model = PerformanceModel(space, space.designs[k], load_device())
        configs.append(_population(model, population_size, rng))
        model.evaluate_fast({n: v[:1000] for n, v in configs[-1].items()})  # warm up
        models.append(model)
    print("ready", flush=True)
    for line in sys.stdin:
        k = int(line)
        start = time.perf_counter()
        models[k].evaluate_fast(configs[k])
        print(f"{time.perf_counter() - start:.6f}", flush=True)


def _population(model, n: int, rng) -> dict[str, np.ndarray]:
    return population(model.design, n, rng)


def against(other: Path, population_size: int, rounds: int) -> None:
    trees = {"this": Path(__file__).resolve().parents[1], "other": other.resolve()}
    procs = {}
    for name, tree in trees.items():
        env = {**os.environ, "PYTHONPATH": str(tree)}
        procs[name] = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker",
                                        "--population", str(population_size)], cwd=tree, env=env, text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for p in procs.values():
        assert p.stdout.readline().strip() == "ready"
    best = {(name, k): float("inf") for name in procs for k in range(len(RATIO_DESIGNS))}
    for r in range(rounds):
        for k in range(len(RATIO_DESIGNS)):
            for name in (("this", "other") if r % 2 == 0 else ("other", "this")):
                procs[name].stdin.write(f"{k}\n")
                procs[name].stdin.flush()
                best[name, k] = min(best[name, k], float(procs[name].stdout.readline()))
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print(f"{'kernel':7} {'design':24} {'this configs/s':>15} {'other configs/s':>16} {'ratio':>6}")
    for k, (kernel, index) in enumerate(RATIO_DESIGNS):
        space = compile_kernel(KERNELS / f"{kernel}.c")
        this, that = population_size / best["this", k], population_size / best["other", k]
        print(f"{kernel:7} {space.designs[index].id:24} {this:15,.0f} {that:16,.0f} {this / that:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=1_000_000)
    parser.add_argument("--against", type=Path, metavar="DIR", help="compare with the code in DIR (a worktree)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.population)
    if args.against:
        return against(args.against, args.population, args.rounds)
    rng = np.random.default_rng(0)
    print(f"{'kernel':7} {'designs':>7} {'build s':>8} {'target':>7}  {'design':22} {'configs/s':>12}")
    for kernel, target in (("mm", 2.0), ("cnn", 5.0)):
        seconds, space, models = build_all(kernel)
        for model in (models[0], models[len(models) // 2], models[-1]):
            configs = population(model.design, args.population, rng)
            model.evaluate_fast({k: v[:1000] for k, v in configs.items()})  # warm up
            start = time.perf_counter()
            model.evaluate_fast(configs)
            rate = args.population / (time.perf_counter() - start)
            verdict = "ok" if seconds < target else "SLOW"
            print(f"{kernel:7} {len(models):7d} {seconds:8.2f} {target:6.1f}s  {model.design.id:22} {rate:12,.0f}"
                  f"  build {verdict}, eval {'ok' if kernel != 'mm' or rate >= 1e6 else 'SLOW'}")


if __name__ == "__main__":
    main()
