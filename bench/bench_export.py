"""Export + C simulation speed: a design at a configuration -> a project directory (compile the kernel,
build the model, validate, generate every file) -> `run_csim` (g++ build of kernel + harness, run,
compare with the loop nest).

    python bench/bench_export.py [--seed N] [--keep DIR]

Target (issue "Export"): export plus C simulation of an MM 64x64x64 design in under 30 s on this
machine; the figure for a CNN 16^4 3x3 design is reported, without a target. Configurations are
drawn at random (array-partitioning factors up to 16, non-divisors included) among those that fit.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.compiler.design_space import compile_kernel
from engine.export.project import export_project
from engine.csim import run_csim
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.sampling import random_configuration
from engine.resources import KERNELS

MM_SIZES = ["I=64", "J=64", "K=64"]
CNN_SIZES = ["O=16", "I=16", "H=16", "W=16", "P=3", "Q=3"]
CASES = [  # (kernel, sizes, design, target seconds or None)
    ("mm", MM_SIZES, "i-j__i-j.k", 30.0),
    ("mm", MM_SIZES, "i__i-j.k", 30.0),
    ("mm", MM_SIZES, "k__i-j.k", 30.0),
    ("mm", MM_SIZES, "i-k__i-j.k", 30.0),
    ("cnn", CNN_SIZES, "o-h__o-h-w.i-p-q", None),
    ("cnn", CNN_SIZES, "h-w__o-i-p-q.h-w", None),
]


def fitting_configuration(space, design, rng) -> dict[str, int]:
    model = PerformanceModel(space, design, load_device())
    for _ in range(200):
        values = random_configuration(design, rng, max_t1={loop: 16 for loop in design.band_loops})
        if bool(model.evaluate(values)["fits"]):
            return values
    raise SystemExit(f"no fitting configuration of {design.id} found in 200 draws")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the projects here instead of a temporary folder")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-export-") as scratch:
        root = args.keep or Path(scratch)
        print(f"{'kernel':6} {'design':20} {'export s':>9} {'csim s':>7} {'total s':>8} {'target':>7}  "
              f"{'result':6} parameters")
        for kernel, sizes, design_id, target in CASES:
            start = time.perf_counter()
            space = compile_kernel(KERNELS / f"{kernel}.c", defines=sizes)
            design = space.design(design_id)
            values = fitting_configuration(space, design, rng)
            out = export_project(space, design, values, root / f"{kernel}-{design.id}", force=True)
            exported = time.perf_counter()
            result = run_csim(out, seed=args.seed)
            done = time.perf_counter()
            total = done - start
            verdict = "PASS" if result.passed else "FAIL"
            goal = f"{target:6.0f}s" if target else "     -"
            slow = "  SLOW" if target and total > target else ""
            params = " ".join(f"{k}={v}" for k, v in values.items())
            print(f"{kernel:6} {design.id:20} {exported - start:9.2f} {done - exported:7.2f} {total:8.2f} {goal:>7}  "
                  f"{verdict:6} {params}{slow}")


if __name__ == "__main__":
    main()
