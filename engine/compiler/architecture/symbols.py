"""The tuning parameters as sympy symbols, and the derived quantities every architecture pass uses.

Symbols are named exactly like the design's parameters (`i_t1`, `k_t2`, `A_pack_l3`), so a model
can be evaluated from a `{name: value}` dict. Problem sizes are numbers, or (inside
`symbolic_sizes()`) symbols `__size_LOOP`, so that one model serves every size (engine/network:
the layers of a network share each design's model).
"""
from __future__ import annotations

import contextlib
import contextvars
from functools import lru_cache

import sympy

from engine.compiler.design import Design


@lru_cache(maxsize=None)
def symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name)  # no assumptions: they cost more to maintain than they simplify


_SYMBOLIC_SIZES = contextvars.ContextVar("symbolic_sizes", default=False)


def size_symbol(loop: str) -> sympy.Symbol:
    return symbol(f"__size_{loop}")


def sizes_are_symbolic() -> bool:
    """Inside `symbolic_sizes()`: the model serves every size, so no count may depend on this one."""
    return _SYMBOLIC_SIZES.get()


@contextlib.contextmanager
def symbolic_sizes():
    """Within: architectures are built with each loop's extent as `size_symbol(loop)`."""
    token = _SYMBOLIC_SIZES.set(True)
    try:
        yield
    finally:
        _SYMBOLIC_SIZES.reset(token)


class DesignSymbols:
    """T1, T2, tile counts and PE-level ranges of one design, as sympy expressions."""

    def __init__(self, design: Design, pass_loops: tuple[str, ...] = ()):
        """`pass_loops`: the view of one pass (engine/compiler/architecture/passes.py), in which the
        tile loops run as sequential passes have one tile."""
        self.design = design
        self.pass_loops = frozenset(pass_loops)
        self.sizes = dict(zip(design.band_loops, design.problem_size))
        self.hiding = set(design.latency_hiding_loops)
        self.simd_loop = design.simd_loop
        self.split = set(design.split_space_loops)  # space loops with l_t1/l_t2 PEs

    def t1(self, loop: str) -> sympy.Expr:
        return symbol(f"{loop}_t1")

    def t2(self, loop: str) -> sympy.Expr:
        """Second-level factor: latency hiding or SIMD; 1 for loops that have neither."""
        if loop in self.hiding or loop == self.simd_loop:
            return symbol(f"{loop}_t2")
        return sympy.Integer(1)

    @property
    def simd(self) -> sympy.Expr:
        return self.t2(self.simd_loop) if self.simd_loop else sympy.Integer(1)

    def tiles(self, loop: str) -> sympy.Expr:
        """Number of array-partitioning tiles along a loop (the problem is zero-padded to a multiple);
        1 for a pass loop in the view of one pass."""
        if loop in self.pass_loops:
            return sympy.Integer(1)
        size = size_symbol(loop) if _SYMBOLIC_SIZES.get() else sympy.Integer(self.sizes[loop])
        return sympy.ceiling(size / self.t1(loop))

    def pes(self, loop: str) -> sympy.Expr:
        """PEs along a space loop."""
        return self.t1(loop) / self.t2(loop) if loop in self.split else self.t1(loop)

    @property
    def pe_grid(self) -> tuple[sympy.Expr, ...]:
        return tuple(self.pes(loop) for loop in self.design.space_loops)

    @property
    def pe_count(self) -> sympy.Expr:
        return sympy.Mul(*self.pe_grid)

    @property
    def tile_count(self) -> sympy.Expr:
        return sympy.Mul(*(self.tiles(loop) for loop in self.design.band_loops))

    def pe_range(self, loop: str) -> sympy.Expr:
        """How many values of `loop` one PE sees inside one tile."""
        if loop in self.design.space_loops:
            return self.t2(loop) if loop in self.split else sympy.Integer(1)
        return self.t1(loop)

    @property
    def pe_iterations_per_tile(self) -> sympy.Expr:
        """Pipelined iterations of one PE per tile (the SIMD loop is unrolled)."""
        return sympy.Mul(*(self.pe_range(loop) for loop in self.design.band_loops)) / self.simd
