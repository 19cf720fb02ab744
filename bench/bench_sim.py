"""Simulator speed: wall time and simulated cycles per second on the model-validation workloads.

    python bench/bench_sim.py [--configs 3] [--seed 0]

Targets (issue 7): an MM 64x64x64 design simulates in < 10 s and a CNN [16,16,16,16,3,3] design in
< 30 s. Prints one line per simulated configuration (design, parameters, cycles, pipelined
iterations, wall seconds (building the network and running it), simulated cycles / s) and a
summary per workload; random legal configurations as the model-accuracy study draws them.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim import simulate
from engine.studies.model_accuracy import configurations

WORKLOADS = {"MM 64^3": ("mm.c", ["I=64", "J=64", "K=64"], ["i-j__i-j.k", "i__i-j.k", "k__i-k.j", "j-k__j-k.i"]),
             "CNN 16^4x3x3": ("cnn.c", ["I=16", "O=16", "H=16", "W=16", "P=3", "Q=3"],
                              ["o-h__o-h-w.i-p-q", "o__o-h-w.i-p-q", "h-w__h-w-i-p-q.o", "o-i__o-i-p-q.h-w"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=3, help="random configurations per design")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    device = load_device()
    print(f"{'workload':14} {'design':20} {'cycles':>10} {'iterations':>11} {'wall s':>7} "
          f"{'cycles/s':>10}  params")
    for workload, (kernel, defines, designs) in WORKLOADS.items():
        space = compile_kernel(KERNELS / kernel, defines=defines)
        walls, rates = [], []
        for design_id in designs:
            design = space.design(design_id)
            model = PerformanceModel(space, design, device)
            descriptor = build_descriptor(space, design, model.architecture)
            for params in configurations(design, args.configs, np.random.default_rng(args.seed)):
                values = evaluate_configuration(model, params)["params"]
                start = time.perf_counter()
                result = simulate(descriptor, values)
                wall = time.perf_counter() - start
                walls.append(wall)
                rates.append(result.cycles / wall)
                shown = " ".join(f"{k}={v}" for k, v in params.items())
                print(f"{workload:14} {design_id:20} {result.cycles:>10,} {result.iterations:>11,} "
                      f"{wall:>7.2f} {result.cycles / wall:>10,.0f}  {shown}", flush=True)
        print(f"{workload:14} {'summary':20} max wall {max(walls):.2f} s, median {np.median(walls):.2f} s; "
              f"median {np.median(rates):,.0f} simulated cycles/s over {len(walls)} configurations", flush=True)


if __name__ == "__main__":
    main()
