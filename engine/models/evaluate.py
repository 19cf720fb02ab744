"""Symbolic model -> numbers. `PerformanceModel(space, design, device).evaluate(params)` takes a dict
of parameter values (scalars, or numpy arrays for a population) and returns numpy arrays for
latency (with prologue / main / epilogue and each module's term), resources, traffic, throughput
and whether the configuration fits the device. Data-packing factors not given are inferred.
"""
from __future__ import annotations

import math

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import sympy

from engine.compiler.architecture.build import build_architecture, pass_architectures
from engine.compiler.architecture.symbols import symbol
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.models.device import RESOURCE_NAMES, Device
from engine.models.packing_inference import PackingInference, lambdify
from engine.models.passes import with_passes
from engine.models.dram import DEFAULT_LAYOUT
from engine.models.symbolic import SymbolicModel, build_symbolic_model, stored_layouts


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
        self.symbolic: SymbolicModel = with_passes(
            build_symbolic_model(self.architecture, sizes, dram, layouts=stored_layouts(design)), design,
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
        self._fast = lambdify(args, fast)
        self._packing = PackingInference(design, self.architecture)

    def _arguments(self, params: dict) -> list:
        return self._packing.arguments(params)

    def packing_blocks(self, params: dict) -> dict[str, np.ndarray]:
        """What each packing factor must divide, at these tuning parameters: the extent of the block
        it packs (and at the DRAM level the steps where boxes start: their greatest common divisor)."""
        return self._packing.blocks(params)

    def inferred_packing(self, params: dict) -> dict[str, np.ndarray]:
        return self._packing.inferred(params)

    def compile_objective(self, expr: sympy.Expr):
        """A vectorised function of a parameter dict for another expression of this model."""
        function = lambdify(self._args, [expr])
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
            self._full = lambdify(self._args, self._full_exprs)
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
