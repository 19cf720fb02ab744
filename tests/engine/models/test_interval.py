"""Interval programs: every value an expression takes at the integer points of a box lies within the
range computed for the box; exact at points for integer-valued expressions; unknown nodes refused."""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import sympy

from engine.compiler.expressions import smax
from engine.models.interval import IntervalError, interval_program
from engine.models.memory import bram18k

x, y, z = sympy.symbols("x y z")
NAMES = ["x", "y", "z"]
BOXES = 15

EXPRESSIONS = [
    x + 2 * y - 3 * z,
    x * y - z * x,
    (x - 3) * (y - 5),
    x ** 2 - 4 * x * z,
    (x - 4) ** 3,
    1 / x + y / (z + 1),
    (x + y) ** -2,
    sympy.sqrt(x * y),
    sympy.Rational(3, 2) ** x,
    smax(x, y - 3, 2 * z) + smax(0, z - x),
    sympy.Max(x, y) - sympy.Min(y, z),
    sympy.ceiling(1024 / x) * sympy.ceiling(x * y / z),
    sympy.floor(x * y / 7) + sympy.ceiling(sympy.Rational(1, 3) * y * z),
    sympy.ceiling(sympy.Rational(7, 3) * x - y / 5),
    sympy.Mod(x * y, 5) + sympy.Mod(x + z, 3),
    sympy.Abs(x - y) * z,
    sympy.Piecewise((x, x <= y), (y * z, z > 4), (1 / z, True)),
    sympy.Piecewise((x * y, sympy.And(x < 5, sympy.Ne(y, 3))), (z, sympy.Or(sympy.Eq(x, z), y >= 6)), (-x, True)),
    bram18k(32 * x, y * z),
    sympy.exp(x / 8) - sympy.log(y + z),
]


def _values(expr, points):
    """Exactly (sympy rationals): a float reference's own rounding would cross integers in floor/ceiling."""
    f = sympy.lambdify([x, y, z], expr, [{"smax": sympy.Max}, "sympy"])
    return np.array([float(f(*(sympy.Integer(int(v)) for v in p))) for p in points])


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=[str(e)[:40] for e in EXPRESSIONS])
def test_every_point_of_random_boxes_is_within_the_range(expr):
    rng = np.random.default_rng(zlib.crc32(str(expr).encode()))
    program = interval_program([expr], NAMES)
    lo = rng.integers(1, 12, size=(BOXES, 3))
    hi = lo + rng.integers(0, 4, size=(BOXES, 3))
    (rlo, rhi), = program({n: lo[:, k] for k, n in enumerate(NAMES)}, {n: hi[:, k] for k, n in enumerate(NAMES)})
    rlo, rhi = np.broadcast_to(rlo, (BOXES,)), np.broadcast_to(rhi, (BOXES,))
    assert np.all(rlo <= rhi)
    checked = 0
    for b in range(BOXES):
        points = np.array(list(itertools.product(*(range(lo[b, k], hi[b, k] + 1) for k in range(3)))))
        v = _values(expr, points)
        tol = 1e-9 * np.maximum(1, np.abs(v))
        assert np.all(v >= rlo[b] - tol), (expr, lo[b], hi[b], v.min(), rlo[b])
        assert np.all(v <= rhi[b] + tol), (expr, lo[b], hi[b], v.max(), rhi[b])
        checked += len(points)
    assert checked > 100


def test_integer_expressions_are_exact_at_points():
    exprs = [sympy.ceiling(1024 / x) * x, sympy.ceiling(x * y / 16) * sympy.ceiling(sympy.Rational(1, 512) * y * z),
             smax(x * y, z + 3) - sympy.floor(x / 3), sympy.Piecewise((0, x * y <= 32), (x + z, True))]
    program = interval_program(exprs, NAMES)
    rng = np.random.default_rng(1)
    points = rng.integers(1, 200, size=(200, 3))
    values = {n: points[:, k] for k, n in enumerate(NAMES)}
    for expr, (lo, hi) in zip(exprs, program(values, values)):
        exact = _values(expr, points)
        assert np.array_equal(np.broadcast_to(lo, exact.shape), exact)
        assert np.array_equal(np.broadcast_to(hi, exact.shape), exact)


def test_ceiling_of_an_integer_quotient_is_exact_at_the_ends_of_a_box():
    (lo, hi), = interval_program([sympy.ceiling(1024 / x)], ["x"])({"x": np.array([4, 3])}, {"x": np.array([8, 3])})
    assert list(lo) == [128, 342] and list(hi) == [256, 342]


def test_a_denominator_that_can_be_zero_gives_an_unbounded_range():
    (lo, hi), = interval_program([1 / (x - 3)], ["x"])({"x": np.array([1])}, {"x": np.array([5])})
    assert lo[0] == -np.inf and hi[0] == np.inf


def test_unknown_nodes_and_symbols_are_refused():
    with pytest.raises(IntervalError, match="cannot bound a sin node"):
        interval_program([sympy.sin(x) + 1], ["x"])
    with pytest.raises(IntervalError, match="no range given for it"):
        interval_program([x + y], ["x"])
    with pytest.raises(IntervalError, match="symbolic exponent"):
        interval_program([x ** y], ["x", "y"])
