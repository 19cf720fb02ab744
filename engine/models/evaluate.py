"""Symbolic model -> numbers. `PerformanceModel(space, design, device).evaluate(params)` takes a dict
of parameter values (scalars, or numpy arrays for a population) and returns numpy arrays for
latency (with prologue / main / epilogue and each module's term), resources, traffic, throughput
and whether the configuration fits the device. Data-packing factors not given are inferred.
"""
from __future__ import annotations

import math

from dataclasses import dataclass
from functools import reduce
from typing import NamedTuple

import numpy as np
import sympy

from engine.compiler.architecture.build import build_architecture, pass_architectures
from engine.compiler.architecture.symbols import symbol
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.models.device import RESOURCE_NAMES, Device
from engine.models.passes import with_passes
from engine.models.dram import DEFAULT_LAYOUT
from engine.models.symbolic import SymbolicModel, build_symbolic_model


_NUMERIC = [{"smax": lambda *args: reduce(np.maximum, args),
             "smin": lambda *args: reduce(np.minimum, args)}, "numpy"]


def _compile(args, exprs, *, cse: bool = True):
    return sympy.lambdify(args, exprs, _NUMERIC, cse=cse)


def infer_packing(extent: np.ndarray, upper: int, rate: np.ndarray | None = None,
                  minimum: np.ndarray | None = None, steps: list[np.ndarray] = ()) -> np.ndarray:
    """Elements per word: the largest power of two <= upper dividing the extent (and, at the DRAM
    level, every step where a box starts); for a buffered level, no wider than the next power of two
    of the rate it must load at, but (a buffer feeding the PEs) no narrower than the SIMD lanes it
    feeds per cycle."""
    x = np.rint(extent).astype(np.int64)
    widest = np.minimum(x & -x, upper)
    for step in steps:
        s = np.rint(step).astype(np.int64)
        widest = np.minimum(widest, np.where(s > 0, s & -s, upper))
    pack = widest
    if rate is not None:
        needed = np.exp2(np.ceil(np.log2(np.maximum(rate, 1.0)))).astype(np.int64)
        pack = np.minimum(pack, needed)
    if minimum is not None:
        pack = np.maximum(pack, np.minimum(np.rint(minimum).astype(np.int64), widest))
    return pack


def packing_expressions(packing) -> list[list]:
    """Per packing factor, what `infer_packing` reads: extent, rate, minimum (0 when absent), then
    its steps (the one list the models, bound or built, compile)."""
    return [[p.innermost, p.rate if p.rate is not None else 0, p.minimum if p.minimum is not None else 0, *p.steps]
            for p in packing]


class FastEvaluation(NamedTuple):
    latency: np.ndarray
    dsp: np.ndarray
    bram: np.ndarray
    fits: np.ndarray


@dataclass
class Evaluation:
    values: dict[str, np.ndarray]

    def __getitem__(self, key: str) -> np.ndarray:
        return self.values[key]


class PerformanceModel:
    def __init__(self, space: DesignSpace, design: Design, device: Device, *, double_buffering: bool = True,
                 layout: str = DEFAULT_LAYOUT):
        """`layout`: how the export lays the arrays out in DRAM (engine/models/dram.py LAYOUTS), which
        decides the AXI bursts the DRAM-facing modules are charged for."""
        self.design, self.device, self.layout = design, device, layout
        self.array_elements = {name: math.prod(int(n) for n in a.shape) for name, a in space.kernel.arrays.items()}
        dram = device.dram_ports(layout)
        self.architecture = build_architecture(space, design, double_buffering=double_buffering)
        self.pass_architectures = pass_architectures(space, design, self.architecture)
        sizes = dict(zip(design.band_loops, design.problem_size))
        self.symbolic: SymbolicModel = with_passes(build_symbolic_model(self.architecture, sizes, dram), design,
                                                   self.pass_architectures, sizes, dram)
        self.tunable = [p.name for p in design.params if p.tunable]
        self.packing = list(self.architecture.packing)
        args = [symbol(n) for n in self.tunable] + [symbol(p.name) for p in self.packing]
        s = self.symbolic
        self.module_names = list(s.module_terms)
        self.bram_arrays = list(s.bram_by_array)
        self.offchip_arrays = list(s.offchip_elements)
        # the tuner's inner loop: latency, DSP and BRAM18K for its scores, every resource for `fits`
        fast = [s.latency, *[s.resources[r] for r in RESOURCE_NAMES]]
        full = ([s.latency, s.prologue, s.main, s.epilogue, *[s.resources[r] for r in RESOURCE_NAMES],
                 s.offchip_bytes, s.fifo_bytes] + [s.module_terms[m] for m in self.module_names]
                + [s.bram_by_array[a] for a in self.bram_arrays] + [s.offchip_elements[a] for a in self.offchip_arrays])
        self._args, self._full_exprs, self._full = args, full, None  # the full model compiles on first use
        self._fast = _compile(args, fast)
        self._extent_exprs = packing_expressions(self.packing)
        self._extents = _compile([symbol(n) for n in self.tunable],  # small expressions: CSE costs more than it saves
                                 [e for exprs in self._extent_exprs for e in exprs], cse=False)

    def _arguments(self, params: dict) -> list:
        values = [np.asarray(params[n], dtype=np.float64) for n in self.tunable]
        extents = self._extents(*values) if self.packing else []
        shape = np.shape(values[0])
        packs = []
        at = 0
        for p, exprs in zip(self.packing, self._extent_exprs):
            mine, at = extents[at:at + len(exprs)], at + len(exprs)
            given = params.get(p.name)
            if given is not None:
                packs.append(np.asarray(given, dtype=np.float64))
                continue
            extent = np.broadcast_to(mine[0], shape)
            rate = np.broadcast_to(mine[1], shape) if p.rate is not None else None
            minimum = np.broadcast_to(mine[2], shape) if p.minimum is not None else None
            steps = [np.broadcast_to(x, shape) for x in mine[3:]]
            packs.append(infer_packing(extent, p.upper, rate, minimum, steps).astype(np.float64))
        return values + packs

    def packing_blocks(self, params: dict) -> dict[str, np.ndarray]:
        """What each packing factor must divide, at these tuning parameters: the extent of the block
        it packs (and at the DRAM level the steps where boxes start: their greatest common divisor)."""
        values = [np.asarray(params[n], dtype=np.float64) for n in self.tunable]
        extents = self._extents(*values) if self.packing else []
        blocks, at = {}, 0
        for p, exprs in zip(self.packing, self._extent_exprs):
            mine, at = extents[at:at + len(exprs)], at + len(exprs)
            block = np.rint(np.asarray(mine[0], dtype=np.float64)).astype(np.int64)
            for step in mine[3:]:
                block = np.gcd(block, np.rint(np.asarray(step, dtype=np.float64)).astype(np.int64))
            blocks[p.name] = block
        return blocks

    def inferred_packing(self, params: dict) -> dict[str, np.ndarray]:
        args = self._arguments(params)
        return {p.name: args[len(self.tunable) + k].astype(np.int64) for k, p in enumerate(self.packing)}

    def compile_objective(self, expr: sympy.Expr):
        """A vectorised function of a parameter dict for another expression of this model."""
        function = _compile(self._args, [expr])
        return lambda params: np.rint(np.asarray(function(*self._arguments(params))[0], dtype=np.float64))

    def evaluate_fast(self, params: dict) -> "FastEvaluation":
        """(latency, DSP, BRAM18K, fits): the tuner's inner loop. Counts are whole numbers; the
        generated code multiplies by reciprocals, so results are rounded."""
        latency, resources = self.evaluate_resources(params)
        return FastEvaluation(latency, resources["DSP"], resources["BRAM18K"], self.fits(resources))

    def evaluate_resources(self, params: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(latency, {resource: count}) for every resource `fits` checks, rounded as in evaluate_fast."""
        latency, *used = (np.rint(np.asarray(v, dtype=np.float64)) for v in self._fast(*self._arguments(params)))
        return latency, {r: np.broadcast_to(v, np.shape(latency)) for r, v in zip(RESOURCE_NAMES, used)}

    def fits(self, resources: dict[str, np.ndarray]) -> np.ndarray:
        """Every resource within the device budget: the one feasibility test of the search, the
        reports, the explorer and export."""
        fits = np.ones(np.shape(resources["DSP"]), dtype=bool)
        for r in RESOURCE_NAMES:
            fits &= resources[r] <= self.device.budget(r)
        return fits

    def evaluate(self, params: dict) -> Evaluation:
        args = self._arguments(params)
        shape = np.shape(args[0])
        if self._full is None:
            self._full = _compile(self._args, self._full_exprs)
        out = [np.broadcast_to(np.rint(np.asarray(v, dtype=np.float64)), shape) for v in self._full(*args)]
        names = (["latency_cycles", "prologue", "main", "epilogue", *RESOURCE_NAMES, "offchip_bytes", "fifo_bytes"]
                 + [f"module:{m}" for m in self.module_names] + [f"bram:{a}" for a in self.bram_arrays]
                 + [f"offchip:{a}" for a in self.offchip_arrays])
        values = dict(zip(names, out))
        seconds = values["latency_cycles"] / (self.device.clock_mhz * 1e6)
        values["throughput_gops"] = self.symbolic.operations / seconds / 1e9
        values["fits"] = self.fits(values)
        return Evaluation(values)

    def over_budget(self, evaluation: Evaluation, index=()) -> list[str]:
        """Which resources a configuration overuses, and by how much."""
        lines = []
        for r in RESOURCE_NAMES:
            used = float(np.asarray(evaluation[r])[index])
            budget = self.device.budget(r)
            if used > budget:
                lines.append(f"{r} {used:.0f} > {budget:.0f} ({self.device.usable_ratio:.0%} of "
                             f"{self.device.resources[r]}) by {used - budget:.0f}")
        return lines
