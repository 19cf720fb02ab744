"""A design + the layers of a network -> one PerformanceModel per design, shared by every layer.

A network's layers differ only in their loop sizes, and a design's model depends on a size only
through its tile counts, ceil(N / t1) (engine/compiler/architecture/symbols.py). So the model is
built once with each loop's extent a symbol (`__size_LOOP`), its functions compiled once with the
sizes as extra arguments, and bound to a layer by fixing those arguments (`bind`): no sympy work
per (layer, design) pair, where building a model at a layer's sizes took 0.2-2.5 s of a 1 s pair
budget. A bound model is a PerformanceModel of the layer's own design (its tuning bounds), whose
symbolic model and architecture have the layer's sizes substituted (the MP seed and the reports
read them); `tests/engine/network/test_shared_model.py` checks it evaluates exactly like the model
built at the layer's sizes.

The structure of a layer's design must be the shared model's: the same latency-hiding and SIMD
loops and tuning parameters (a layer with P = Q = 1 drops latency hiding on them), and the same
loops of a single iteration (the polyhedral analysis sees no reduction along them, so the I/O
groups differ). `structure_key` says which designs can share; the caller keeps one per key.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import sympy

from engine.compiler.architecture.symbols import size_symbol, symbol, symbolic_sizes
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.models.device import RESOURCE_NAMES, Device
from engine.models.evaluate import PerformanceModel
from engine.models.packing_inference import PackingInference, lambdify, packing_expressions


def structure_key(design: Design) -> tuple:
    """Designs with equal keys differ only in sizes (and tuning bounds): one shared model serves them."""
    return (design.id, design.band_loops, design.space_loops, design.permutation.order,
            tuple(design.latency_hiding_loops), design.simd_loop,
            tuple((p.name, p.tunable) for p in design.params),
            tuple(n == 1 for n in design.problem_size))  # a loop of one iteration carries no dependence


class SharedModel:
    """The design's model with symbolic sizes, compiled once."""

    def __init__(self, space: DesignSpace, design: Design, device: Device):
        with symbolic_sizes():
            generic = PerformanceModel.__new__(PerformanceModel)
            generic.design, generic.device = design, device
            from engine.compiler.architecture.build import build_architecture, pass_architectures  # noqa: PLC0415
            from engine.models.passes import with_passes  # noqa: PLC0415
            from engine.models.symbolic import build_symbolic_model, stored_layouts  # noqa: PLC0415
            generic.architecture = build_architecture(space, design)
            # built as PerformanceModel builds it: a design that runs passes gets their latency
            generic.pass_architectures = pass_architectures(space, design, generic.architecture)
            dram = device.dram_ports()
            generic.layout = dram.layout
            generic.symbolic = with_passes(build_symbolic_model(generic.architecture, {}, dram,
                                                                  layouts=stored_layouts(design)), design,
                                           generic.pass_architectures, {}, dram)
        self.model = generic
        self.key = structure_key(design)
        self.sizes = [size_symbol(loop) for loop in design.band_loops]
        s = generic.symbolic
        self.tunable = [p.name for p in design.params if p.tunable]
        self.packing = list(generic.architecture.packing)
        self.args = [symbol(n) for n in self.tunable] + [symbol(p.name) for p in self.packing]
        fast = [s.latency, *[s.resources[r] for r in RESOURCE_NAMES]]
        self.fast = lambdify(self.args + self.sizes, fast)
        self.extent_exprs = packing_expressions(self.packing)
        self.extents = lambdify([symbol(n) for n in self.tunable] + self.sizes,
                                [e for exprs in self.extent_exprs for e in exprs], cse=False)

    def bind(self, design: Design) -> PerformanceModel:
        """The model of `design` (same structure, its own sizes and bounds). Its compiled functions are
        the shared ones with the sizes fixed; its architecture and symbolic model (the MP seed and the
        reports read them, the search does not) get the sizes substituted when first read."""
        if structure_key(design) != self.key:
            raise ValueError(f"{design.id}: not the structure of the shared model")
        values = dict(zip(design.band_loops, design.problem_size))
        subs = {size_symbol(loop): sympy.Integer(values[loop]) for loop in design.band_loops}
        sizes = tuple(float(values[loop]) for loop in design.band_loops)
        model = BoundModel.__new__(BoundModel)
        model.__dict__.update({k: v for k, v in self.model.__dict__.items() if k not in ("architecture", "symbolic", "pass_architectures")})
        model.design = design
        model.shared, model.subs = self, subs
        model.macs = int(np.prod([values[l] for l in design.band_loops], dtype=object))
        # a layer's operations: the kernel's operations per band point (compute.operations) at its sizes
        model.operations = round(self.model.architecture.compute["operations"]["per_iteration"] * model.macs)
        model._architecture = model._symbolic = None
        s = self.model.symbolic
        model.tunable, model.packing = list(self.tunable), list(self.packing)
        model.module_names, model.bram_arrays = list(s.module_terms), list(s.bram_by_array)
        model.offchip_arrays = list(s.offchip_elements)
        model._args = list(self.args)
        model._full_exprs = None  # substituted and compiled on first use (reports, not the search)
        model._full = None
        model._fast = _Fixed(self.fast, sizes)
        model._packing = PackingInference.compiled(self.tunable, self.packing, _Fixed(self.extents, sizes))
        return model


class BoundModel(PerformanceModel):
    """A SharedModel bound to one design's sizes (made by SharedModel.bind, never constructed)."""

    @property
    def architecture(self):
        if self._architecture is None:
            self._architecture = substitute(self.shared.model.architecture, self.subs)
        return self._architecture

    @property
    def pass_architectures(self):
        return {k: substitute(v, self.subs) for k, v in self.shared.model.pass_architectures.items()}

    @property
    def symbolic(self):
        if self._symbolic is None:
            self._symbolic = dataclasses.replace(substitute(self.shared.model.symbolic, self.subs, skip="architecture"),
                                                 architecture=self.architecture, macs=self.macs,
                                                 operations=self.operations)
        return self._symbolic

    def evaluate(self, params: dict):
        if self._full is None:
            s = self.symbolic
            self._full_exprs = ([s.latency, s.prologue, s.main, s.epilogue, *[s.resources[r] for r in RESOURCE_NAMES],
                                 s.offchip_bytes, s.fifo_bytes] + [s.module_terms[m] for m in self.module_names]
                                + [s.bram_by_array[a] for a in self.bram_arrays]
                                + [s.offchip_elements[a] for a in self.offchip_arrays])
        return super().evaluate(params)


class _Fixed:
    """A compiled function with its trailing (size) arguments fixed (picklable, unlike a lambda)."""

    def __init__(self, function, tail: tuple[float, ...]):
        self.function, self.tail = function, tail

    def __call__(self, *args):
        return self.function(*args, *self.tail)


def substitute(value, subs: dict, skip: str | None = None):
    """`value` with every sympy expression in it (dataclass fields, tuples, lists, dicts) xreplaced
    (a dataclass field named `skip` is left as it is)."""
    if isinstance(value, sympy.Basic):
        return value.xreplace(subs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: substitute(getattr(value, f.name), subs) for f in dataclasses.fields(value)
                   if f.init and f.name != skip}
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(substitute(v, subs) for v in value)
    if isinstance(value, list):
        return [substitute(v, subs) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, subs) for k, v in value.items()}
    return value
