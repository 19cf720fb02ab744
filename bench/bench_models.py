"""Model speed: building descriptors + models for every design, and evaluating populations.

    python bench/bench_models.py [--population 1000000]

Targets (issue "Hardware construction and performance models"): >= 1,000,000 configurations per
second single-threaded (latency + DSP + BRAM) for an MM design; all 18 MM designs built in < 2 s
and all 30 CNN designs in < 5 s, front end included.
"""
from __future__ import annotations

import argparse
import os
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=1_000_000)
    args = parser.parse_args()
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
