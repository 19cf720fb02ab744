"""Descriptor expression text -> sympy and numbers: the language of every quantity in the design
descriptor (sympy text over the tuning parameters, e.g. "i_t1/i_t2", "ceiling(1024/k_t1)",
"smax(a, b)"), with max and min kept unevaluated as `smax` / `smin`.

Only sympy below it: the architecture passes build expressions with `smax` / `smin`, and the
descriptor's readers (models, simulator, exporter, app) evaluate them, without importing the
compiler passes.
"""
from __future__ import annotations

from functools import lru_cache

import sympy

# max() kept unevaluated: sympy.Max compares its arguments symbolically, which costs far more than
# the model is worth; lambdify maps smax to numpy.maximum (engine/models/evaluate.py).
smax = sympy.Function("smax")


class smin(sympy.Function):
    """min() likewise kept unevaluated (lambdify: numpy.minimum), except of numbers."""

    @classmethod
    def eval(cls, *args):
        if all(a.is_Number for a in args):
            return min(args)
        return None


@lru_cache(maxsize=4096)
def expression(text: str) -> sympy.Expr:
    """A descriptor expression as sympy."""
    return sympy.sympify(text, locals={"smax": smax, "smin": smin})


def evaluate(text: str, values: dict[str, int]) -> float:
    """A descriptor expression at concrete parameter values (packing factors included)."""
    return _evaluate(text, tuple((n, values[n]) for n in _symbols(text) if n in values))


@lru_cache(maxsize=4096)
def _symbols(text: str) -> tuple[str, ...]:
    return tuple(sorted(str(s) for s in expression(text).free_symbols))


@lru_cache(maxsize=65536)
def _evaluate(text: str, values: tuple) -> float:
    # cached on the values of the expression's own symbols: the simulator and the exporter ask
    # for the same few expressions once per module instance
    result = expression(text).subs({sympy.Symbol(k): v for k, v in values}).replace(
        smax, lambda *args: sympy.Max(*args)).replace(smin, lambda *args: sympy.Min(*args))
    return float(result)
