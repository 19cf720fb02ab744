"""A design's architecture (its packing factors) + tuning values -> the data-packing factors the
model, the simulator and the export use (the one rule, `infer_packing`), without building the
latency model: PerformanceModel evaluates through it, and a check that needs only the hardware's
structure and its packing (compiler/architecture/ast_check.py's tests) uses it alone."""
from __future__ import annotations

from functools import reduce

import numpy as np
import sympy

from engine.compiler.architecture.modules import Architecture
from engine.compiler.architecture.symbols import symbol
from engine.compiler.design import Design

_NUMERIC = [{"smax": lambda *args: reduce(np.maximum, args),
             "smin": lambda *args: reduce(np.minimum, args)}, "numpy"]


def lambdify(args, exprs, *, cse: bool = True):
    """sympy expressions -> one numpy function of `args` (smax / smin as element-wise max / min)."""
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


class PackingInference:
    """The packing factors of `architecture` as functions of the design's tunable parameters."""

    def __init__(self, design: Design, architecture: Architecture):
        self.tunable = [p.name for p in design.params if p.tunable]
        self.packing = list(architecture.packing)
        self._exprs = packing_expressions(self.packing)
        self._extents = lambdify([symbol(n) for n in self.tunable],  # small expressions: CSE costs more than it saves
                                 [e for exprs in self._exprs for e in exprs], cse=False)

    @classmethod
    def compiled(cls, tunable: list[str], packing: list, extents) -> "PackingInference":
        """From `extents`, a function already compiled from `packing_expressions(packing)` (flattened)
        of the tunable values (a model shared by designs of one structure binds its sizes in it)."""
        inference = cls.__new__(cls)
        inference.tunable, inference.packing = list(tunable), list(packing)
        inference._exprs, inference._extents = packing_expressions(inference.packing), extents
        return inference

    def _per_factor(self, params: dict):
        values = [np.asarray(params[n], dtype=np.float64) for n in self.tunable]
        extents = self._extents(*values) if self.packing else []
        at = 0
        for p, exprs in zip(self.packing, self._exprs):
            yield p, extents[at:at + len(exprs)], np.shape(values[0])
            at += len(exprs)

    def arguments(self, params: dict) -> list:
        """The tunable values, then every packing factor (given in `params`, or inferred), as float arrays."""
        values = [np.asarray(params[n], dtype=np.float64) for n in self.tunable]
        packs = []
        for p, mine, shape in self._per_factor(params):
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

    def inferred(self, params: dict) -> dict[str, np.ndarray]:
        """Packing factor name -> its value (integers)."""
        args = self.arguments(params)
        return {p.name: args[len(self.tunable) + k].astype(np.int64) for k, p in enumerate(self.packing)}

    def blocks(self, params: dict) -> dict[str, np.ndarray]:
        """What each packing factor must divide, at these tuning parameters: the extent of the block
        it packs (and at the DRAM level the steps where boxes start: their greatest common divisor)."""
        blocks = {}
        for p, mine, _ in self._per_factor(params):
            block = np.rint(np.asarray(mine[0], dtype=np.float64)).astype(np.int64)
            for step in mine[3:]:
                block = np.gcd(block, np.rint(np.asarray(step, dtype=np.float64)).astype(np.int64))
            blocks[p.name] = block
        return blocks
