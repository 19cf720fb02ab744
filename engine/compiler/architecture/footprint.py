"""Array reference + loop ranges -> the number of elements it touches (its footprint), symbolically.

A subscript sum(c_l * l) + c over loops with ranges R_l spans 1 + sum(|c_l| * (R_l - 1)) values;
the footprint is the product over subscripts. This is exact for the box-shaped tiles of
rectangular domains with subscripts such as `k`, `h + p` or `2*i + 1`; the isl AST check
(ast_counts.py) verifies it on concrete configurations.
"""
from __future__ import annotations

import sympy

from engine.compiler.ir import Access


def subscript_extents(access: Access, ranges: dict[str, sympy.Expr]) -> list[sympy.Expr]:
    extents = []
    for index in access.index:
        extent = sympy.Integer(1)
        for loop, coeff in index.terms:
            extent += abs(coeff) * (ranges[loop] - 1)
        extents.append(extent)
    return extents


def footprint(access: Access, ranges: dict[str, sympy.Expr]) -> sympy.Expr:
    return sympy.Mul(*subscript_extents(access, ranges))


def innermost_extent(access: Access, ranges: dict[str, sympy.Expr], layout: tuple[int, ...] | None) -> sympy.Expr:
    """Extent along the array dimension stored last (after the SIMD layout change, if any)."""
    extents = subscript_extents(access, ranges)
    if not extents:
        return sympy.Integer(1)
    last = layout[-1] if layout else len(extents) - 1
    return extents[last]
