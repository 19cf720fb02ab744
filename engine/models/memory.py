"""Buffer shape -> BRAM18K / URAM blocks, symbolically (a sympy Piecewise, so it vectorises).

A BRAM18K holds 18 Kbit as 512 x 36, 1K x 18, 2K x 9, 4K x 4, 8K x 2 or 16K x 1 (width x depth);
a buffer of `width` bits and `depth` words uses ceil(width / port width) columns of
ceil(depth / 16K) blocks, the port width being the widest one for that depth. Buffers of at most
REGISTER_BITS (1024, engine/compiler/architecture/modules.py) bits are implemented in registers /
LUTRAM by HLS and use no block RAM. A URAM is 4K x 72.
"""
from __future__ import annotations

import sympy

from engine.compiler.architecture.modules import REGISTER_BITS

_PORTS = ((512, 36), (1024, 18), (2048, 9), (4096, 4), (8192, 2), (16384, 1))


def bram18k(width: sympy.Expr, depth: sympy.Expr) -> sympy.Expr:
    per_depth = [(sympy.Integer(w), sympy.Le(depth, d)) for d, w in _PORTS] + [(sympy.Integer(1), True)]
    port_width = sympy.Piecewise(*per_depth)
    blocks = sympy.ceiling(width / port_width) * sympy.ceiling(depth / 16384)
    return sympy.Piecewise((0, sympy.Le(width * depth, REGISTER_BITS)), (blocks, True))


def uram(width: sympy.Expr, depth: sympy.Expr) -> sympy.Expr:
    return sympy.ceiling(width / 72) * sympy.ceiling(depth / 4096)
