"""Sympy expressions -> interval programs: for a batch of boxes (an integer range per symbol, as numpy
arrays of lower and upper ends) the range each expression can take over each box, in a few numpy
operations per expression node. Used by the certifier (engine/search/certify.py) to bound a model's
latency from below and its resources from below over whole boxes of configurations.

Every node is bounded from the bounds of its arguments (interval arithmetic), never by sampling:
- `+`, `*`, constant and integer powers, `smax` / `Max` / `Min` / `smin`, `Abs`, `exp`, `log` and positive
  rational powers of non-negative bases: by their monotonicity on each argument;
- `ceiling`, `floor`, `Mod`: of the ends. A ceiling of a quotient of integer-valued expressions
  (`ceiling(1024/i_t1)`, `ceiling(i_t1*k_t1/A_pack)`) is computed exactly with integer division;
  of anything else, with a slack of 1e-9 relative outwards, so that the rounding of float
  arithmetic cannot move an end across an integer;
- relationals are three-valued per box (surely true, surely false, either); a `Piecewise` takes the
  union of the branches that can be taken, in order.
Integer-valued expressions (sums and products of symbols, integers, ceilings) below 2**53 are exact
in floats; elsewhere the ends carry float rounding of about 1e-15 relative, which callers absorb.

A node type it does not know raises IntervalError at compile time: an unknown node is never guessed.
Quotients whose denominator range holds 0 give an unbounded range (-inf, inf), which stays sound.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import sympy

from engine.errors import EngineError

SLACK = 1e-9  # relative slack of non-exact ends before ceiling / floor / comparisons


class IntervalError(EngineError):
    """An expression holds a node that cannot be bounded soundly."""


Pair = tuple[np.ndarray, np.ndarray]  # (lo, hi), or for a condition (possibly true, possibly false)


def _slack(x: np.ndarray) -> np.ndarray:
    return SLACK * np.maximum(1.0, np.abs(x))


def _mul(a: Pair, b: Pair) -> Pair:
    (alo, ahi), (blo, bhi) = a, b
    p1, p2, p3, p4 = alo * blo, alo * bhi, ahi * blo, ahi * bhi  # (float warnings are off in __call__)
    # fmin / fmax skip the NaN of 0 * inf (an unbounded factor times an exact zero end) ...
    lo, hi = np.fmin(np.fmin(p1, p2), np.fmin(p3, p4)), np.fmax(np.fmax(p1, p2), np.fmax(p3, p4))
    if np.isnan(lo).any() or np.isnan(hi).any():  # ... unless every product is one: [0, 0] x unbounded
        lo, hi = np.where(np.isnan(lo), 0.0, lo), np.where(np.isnan(hi), 0.0, hi)
    return lo, hi


def _scale(a: Pair, c: float) -> Pair:
    lo, hi = a[0] * c, a[1] * c
    return (lo, hi) if c >= 0 else (hi, lo)


def _reciprocal(a: Pair) -> Pair:
    lo, hi = a
    positive, negative = lo > 0, hi < 0
    rlo = np.where(positive | negative, 1.0 / np.where(hi == 0, 1.0, hi), -np.inf)
    rhi = np.where(positive | negative, 1.0 / np.where(lo == 0, 1.0, lo), np.inf)
    rlo = np.where((lo == 0) & (hi > 0), 1.0 / np.where(hi == 0, 1.0, hi), rlo)  # [0, h]: 1/x in [1/h, inf)
    return rlo, rhi


def _integer_power(a: Pair, n: int) -> Pair:
    lo, hi = a
    if n % 2:
        return lo ** n, hi ** n
    small = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    return small ** n, np.maximum(np.abs(lo), np.abs(hi)) ** n


def _ceil_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ceil(a / b) for integer-valued floats, b > 0, exactly (floor division of floats is exact)."""
    return -np.floor_divide(-a, b)


class IntervalProgram:
    """`IntervalProgram(exprs, names)(lo, hi)` -> [(lo, hi)] per expression, for boxes given as
    {name: array} of inclusive ends (all arrays of one shape, or scalars)."""

    def __init__(self, exprs: Sequence[sympy.Expr], names: Sequence[str],
                 *, integer_names: Sequence[str] | None = None, nonnegative: Sequence[str] = ()):
        self.names = list(names)
        self._integer = set(self.names if integer_names is None else integer_names)
        self._nonnegative_names = set(nonnegative)  # promised >= 0: products of such terms take a fast path
        self._sign: dict[sympy.Basic, bool] = {}
        self._ops: list[tuple[Callable, tuple[int, ...]]] = []
        self._slots: dict[sympy.Basic, int] = {}
        self._integral: dict[int, bool] = {}
        self._symbols = {sympy.Symbol(n): k for k, n in enumerate(self.names)}
        for k, n in enumerate(self.names):
            self._integral[k] = n in self._integer
        self.outputs = [self._compile(sympy.sympify(e)) for e in exprs]

    def __call__(self, lo: dict[str, np.ndarray], hi: dict[str, np.ndarray]) -> list[Pair]:
        values: list = [(np.asarray(lo[n], dtype=np.float64), np.asarray(hi[n], dtype=np.float64))
                        for n in self.names]
        for n, (low, _) in zip(self.names, values):
            if n in self._nonnegative_names and np.any(low < 0):
                raise IntervalError(f"{n} was promised non-negative but its range reaches {low.min()}")
        with np.errstate(all="ignore"):  # 0 * inf, 1 / 0 and the like are handled where they arise
            for function, args in self._ops:
                values.append(function(*(values[a] for a in args)))
        return [values[k] for k in self.outputs]

    # --- compilation -------------------------------------------------------------------------------

    def _emit(self, function: Callable, args: tuple[int, ...], integral: bool) -> int:
        self._ops.append((function, args))
        slot = len(self.names) + len(self._ops) - 1
        self._integral[slot] = integral
        return slot

    def _constant(self, value: float, integral: bool) -> int:
        c = np.float64(value)
        return self._emit(lambda: (c, c), (), integral)

    def _compile(self, e: sympy.Basic) -> int:
        if e in self._slots:
            return self._slots[e]
        slot = self._node(e)
        self._slots[e] = slot
        return slot

    def _node(self, e: sympy.Basic) -> int:
        if e.is_Symbol:
            if e not in self._symbols:
                raise IntervalError(f"cannot bound {e}: no range given for it (known: {', '.join(self.names)})")
            return self._symbols[e]
        if e.is_Number:
            if not e.is_finite:
                raise IntervalError(f"cannot bound the constant {e}")
            return self._constant(float(e), bool(e.is_Integer))
        if e is sympy.true or e is sympy.false:
            t = bool(e)
            return self._emit(lambda: (np.bool_(t), np.bool_(not t)), (), False)
        if e.is_Add:
            args = tuple(self._compile(a) for a in e.args)
            return self._emit(lambda *xs: (sum(x[0] for x in xs), sum(x[1] for x in xs)), args,
                              all(self._integral[a] for a in args))
        if e.is_Mul:
            return self._product(e)
        if e.is_Pow:
            return self._power(e)
        name = type(e).__name__ if not isinstance(e, sympy.core.function.AppliedUndef) else e.func.__name__
        if name in ("smax", "Max", "Min", "smin"):
            args = tuple(self._compile(a) for a in e.args)
            pick = np.minimum if name in ("Min", "smin") else np.maximum

            def extreme(*xs, pick=pick):
                lo, hi = xs[0]
                for x in xs[1:]:
                    lo, hi = pick(lo, x[0]), pick(hi, x[1])
                return lo, hi
            return self._emit(extreme, args, all(self._integral[a] for a in args))
        if isinstance(e, (sympy.ceiling, sympy.floor)):
            return self._rounding(e)
        if isinstance(e, sympy.Mod):
            return self._mod(e)
        if isinstance(e, sympy.Abs):
            a = self._compile(e.args[0])

            def absolute(x):
                lo, hi = x
                return (np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi))),
                        np.maximum(np.abs(lo), np.abs(hi)))
            return self._emit(absolute, (a,), self._integral[a])
        if isinstance(e, sympy.exp):
            a = self._compile(e.args[0])
            return self._emit(lambda x: (np.exp(x[0]), np.exp(x[1])), (a,), False)
        if isinstance(e, sympy.log) and len(e.args) == 1:
            a = self._compile(e.args[0])

            def logarithm(x):
                return (np.where(x[0] > 0, np.log(np.maximum(x[0], 0)), -np.inf),
                        np.where(x[1] > 0, np.log(np.maximum(x[1], 0)), -np.inf))
            return self._emit(logarithm, (a,), False)
        if isinstance(e, sympy.Piecewise):
            return self._piecewise(e)
        if isinstance(e, sympy.core.relational.Relational):
            return self._relation(e)
        if isinstance(e, (sympy.And, sympy.Or, sympy.Not)):
            args = tuple(self._compile(a) for a in e.args)
            if isinstance(e, sympy.Not):
                return self._emit(lambda x: (x[1], x[0]), args, False)
            if isinstance(e, sympy.And):
                return self._emit(lambda *xs: (np.logical_and.reduce([x[0] for x in xs]),
                                               np.logical_or.reduce([x[1] for x in xs])), args, False)
            return self._emit(lambda *xs: (np.logical_or.reduce([x[0] for x in xs]),
                                           np.logical_and.reduce([x[1] for x in xs])), args, False)
        raise IntervalError(f"cannot bound a {name} node ({e}): no interval rule for it; "
                            "known: + * ** smax Max Min smin ceiling floor Mod Abs exp log Piecewise relationals")

    def _nonnegative(self, e: sympy.Basic) -> bool:
        """Whether e >= 0 wherever the promised inputs are (structurally, not by sympy assumptions)."""
        if e not in self._sign:
            if e.is_Number:
                sign = bool(e >= 0)
            elif e.is_Symbol:
                sign = e.name in self._nonnegative_names
            elif e.is_Add or e.is_Mul or isinstance(e, (sympy.ceiling, sympy.floor, sympy.Min)) or (
                    getattr(e.func, "__name__", "") == "smin"):
                sign = all(self._nonnegative(a) for a in e.args)
            elif e.is_Pow:
                sign = self._nonnegative(e.args[0]) or (e.args[1].is_Integer and int(e.args[1]) % 2 == 0)
            elif (isinstance(e, (sympy.Max, sympy.Abs, sympy.exp, sympy.Mod))
                  or getattr(e.func, "__name__", "") == "smax"):
                sign = isinstance(e, (sympy.Abs, sympy.exp, sympy.Mod)) or any(self._nonnegative(a) for a in e.args)
            elif isinstance(e, sympy.Piecewise):
                sign = all(self._nonnegative(expr) for expr, _ in e.args)
            else:
                sign = False
            self._sign[e] = sign
        return self._sign[e]

    def _product(self, e: sympy.Mul) -> int:
        coefficient, factors = e.as_coeff_mul()
        args = tuple(self._compile(f) for f in factors)
        c = float(coefficient)
        integral = bool(coefficient.is_Integer) and all(self._integral[a] for a in args)
        if c >= 0 and all(self._nonnegative(f) for f in factors):
            def nonnegative_product(*xs):
                lo, hi = xs[0]
                for x in xs[1:]:
                    lo, hi = lo * x[0], hi * x[1]
                # 0 * inf (a factor unbounded above times an exact zero): 0 below, unbounded above
                return np.fmax(lo * c, 0.0), np.fmin(hi * c, np.inf)
            return self._emit(nonnegative_product, args, integral)

        def product(*xs):
            out = xs[0]
            for x in xs[1:]:
                out = _mul(out, x)
            return _scale(out, c) if c != 1.0 else out
        return self._emit(product, args, integral)

    def _power(self, e: sympy.Pow) -> int:
        base, exponent = e.args
        if exponent.is_Integer:
            n = int(exponent)
            a = self._compile(base)
            if n >= 0:
                return self._emit(lambda x: _integer_power(x, n), (a,), self._integral[a])
            return self._emit(lambda x: _reciprocal(_integer_power(x, -n)), (a,), False)
        if exponent.is_Number and exponent.is_real:
            p = float(exponent)
            a = self._compile(base)

            def real_power(x):
                if np.any(x[0] < 0):
                    raise IntervalError(f"cannot bound {e}: its base can be negative")
                lo, hi = x[0] ** p, x[1] ** p
                return (lo, hi) if p > 0 else (hi, lo)
            return self._emit(real_power, (a,), False)
        if base.is_Number and base.is_positive:
            b = float(base)
            a = self._compile(exponent)
            return self._emit(lambda x: (b ** x[0], b ** x[1]) if b >= 1 else (b ** x[1], b ** x[0]), (a,), False)
        raise IntervalError(f"cannot bound {e}: a power with a symbolic exponent and a non-constant base")

    def _quotient(self, e: sympy.Expr) -> tuple[int, int] | None:
        """(numerator, denominator) slots when e is a quotient of integer-valued expressions."""
        numerator, denominator = sympy.fraction(e)
        if denominator == 1:
            return None
        n, d = self._compile(numerator), self._compile(denominator)
        return (n, d) if self._integral[n] and self._integral[d] else None

    def _rounding(self, e: sympy.Expr) -> int:
        up = isinstance(e, sympy.ceiling)
        f = np.ceil if up else np.floor

        def rounded(x, integral):
            if integral:
                return f(x[0]), f(x[1])
            return f(x[0] - _slack(x[0])), f(x[1] + _slack(x[1]))
        inner = e.args[0]
        quotient = self._quotient(inner) if inner.is_Mul else None
        if quotient is not None:
            def exact(n, d):
                if np.all(n[0] >= 0) and np.all(d[0] > 0):  # increasing in n, decreasing in d
                    if up:
                        return _ceil_div(n[0], d[1]), _ceil_div(n[1], d[0])
                    return np.floor_divide(n[0], d[1]), np.floor_divide(n[1], d[0])
                return rounded(_mul(n, _reciprocal(d)), False)
            return self._emit(exact, quotient, True)
        a = self._compile(inner)
        integral = self._integral[a]
        return self._emit(lambda x: rounded(x, integral), (a,), True)

    def _mod(self, e: sympy.Mod) -> int:
        a, m = (self._compile(x) for x in e.args)
        if not e.args[1].is_Number or not e.args[1].is_positive:
            raise IntervalError(f"cannot bound {e}: Mod by a non-constant or non-positive modulus")
        modulus = float(e.args[1])
        integral = self._integral[a] and e.args[1].is_Integer

        def mod(x, _m):
            lo, hi = x
            if not integral:
                lo, hi = lo - _slack(lo), hi + _slack(hi)
            q = np.floor(lo / modulus)
            same = np.floor(hi / modulus) == q
            top = modulus - 1 if integral else modulus
            return np.where(same, lo - q * modulus, 0.0), np.where(same, hi - q * modulus, top)
        return self._emit(mod, (a, m), integral)

    def _piecewise(self, e: sympy.Piecewise) -> int:
        slots = []
        for expr, cond in e.args:
            slots += [self._compile(expr), self._compile(cond)]
        integral = all(self._integral[s] for s in slots[::2])

        def piecewise(*xs):
            lo = hi = None
            reachable = True  # every earlier condition can be false
            for k in range(0, len(xs), 2):
                (vlo, vhi), (maybe_true, maybe_false) = xs[k], xs[k + 1]
                taken = reachable & maybe_true
                vlo, vhi = np.broadcast_arrays(vlo, vhi)
                blo, bhi = np.where(taken, vlo, np.inf), np.where(taken, vhi, -np.inf)
                lo = blo if lo is None else np.minimum(lo, blo)
                hi = bhi if hi is None else np.maximum(hi, bhi)
                reachable = reachable & maybe_false
            # no branch applies (sympy: undefined): unbounded
            return np.where(reachable, -np.inf, lo), np.where(reachable, np.inf, hi)
        return self._emit(piecewise, tuple(slots), integral)

    def _relation(self, e) -> int:
        a, b = self._compile(e.lhs), self._compile(e.rhs)
        exact = self._integral[a] and self._integral[b]
        op = e.rel_op

        def relation(x, y):
            (alo, ahi), (blo, bhi) = x, y
            if not exact:
                alo, ahi, blo, bhi = alo - _slack(alo), ahi + _slack(ahi), blo - _slack(blo), bhi + _slack(bhi)
            if op in ("<=", "<"):
                strict = op == "<"
                maybe_true = alo < bhi if strict else alo <= bhi
                maybe_false = ahi >= blo if strict else ahi > blo
            elif op in (">=", ">"):
                strict = op == ">"
                maybe_true = ahi > blo if strict else ahi >= blo
                maybe_false = alo <= bhi if strict else alo < bhi
            else:
                overlap = (alo <= bhi) & (blo <= ahi)
                points_equal = (alo == ahi) & (blo == bhi) & (alo == blo) & exact
                maybe_true, maybe_false = (overlap, ~points_equal) if op == "==" else (~points_equal, overlap)
            return maybe_true, maybe_false
        return self._emit(relation, (a, b), False)


def interval_program(exprs: Sequence[sympy.Expr], names: Sequence[str], *,
                     nonnegative: Sequence[str] = ()) -> IntervalProgram:
    """Compile expressions over integer-valued symbols `names` into one interval program; symbols in
    `nonnegative` are promised never below 0 (checked on each call), which speeds up products."""
    return IntervalProgram(exprs, names, nonnegative=nonnegative)
