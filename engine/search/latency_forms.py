"""A design's symbolic latency (sympy) -> equal or smaller forms whose interval evaluation over a box
gives a tighter valid lower bound (engine/search/box_bounds.py evaluates them; the largest bound of
all the forms is kept).

- `_push` / `_distribute`: a factor >= 0 moved into the one max or min it multiplies
  (c * max(a, b) = max(c a, c b) for c >= 0), so that a tile count outside meets the tile size inside;
- `_fractional`: each ceiling that is not a tile count written as its argument plus a fraction in
  [0, 1] (ceiling(u) - u always is one), tile counts distributed into the maxima, expanded: a pass
  design's count x ceiling(h*o*w/pack) drain becomes the padded extents over the packing factor,
  where interval arithmetic took each factor at its own end;
- `_mixture`: a sum of terms weighted by tile counts bounded by its smallest term times the weights;
- `_cap` / `_pair` / `_monomial` / `_submonomials` / `_split_product`: the product of box variables
  a resource is a monomial of (PEs x SIMD lanes in DSP), capped by every resource's budget.
"""

from __future__ import annotations

import numpy as np
import sympy

from engine.compiler.architecture.symbols import symbol
from engine.compiler.expressions import smin
from engine.models.interval import interval_program

_KEEP = sympy.Function("__keep")  # an expression kept whole by sympy.expand (removed before bounding)


def _count_difference(t: sympy.Expr, counts: set) -> bool:
    """t is a sum of numbers and products of tile counts with a negative term (a count product - 1)."""
    if not t.is_Add or not any(a.could_extract_minus_sign() for a in t.args):
        return False
    return all(a.is_Number or all((f.base if f.is_Pow else f) in counts for f in sympy.Mul.make_args(a)
                                  if not f.is_Number) for a in t.args)


def _mixture(t: sympy.Expr, counts: set, bounds: dict) -> sympy.Expr | None:
    """For a sum a_1 X_1 + ... + a_k X_k whose weights a_i are products of tile counts and count
    differences, all >= 0 over the parameters' bounds, at least one a count difference and no two
    alike: min_i((a_1 + ... + a_k) X_i), a lower bound of the sum (a_i X_i >= a_i min X with a_i >= 0);
    else None."""
    if not t.is_Add or len(t.args) < 2:
        return None
    weights, rests = [], []
    for a in t.args:
        w = [f for f in sympy.Mul.make_args(a) if f in counts or (f.is_Pow and f.base in counts and f.exp > 0)
             or f.func == _KEEP]
        rest = sympy.Mul(*[f for f in sympy.Mul.make_args(a) if f not in w])
        if rest.is_Number:  # a constant term is no mixture
            return None
        weights.append(sympy.Mul(*w))
        rests.append(rest)
    if len(set(weights)) < len(weights) or not any(w.has(_KEEP) for w in weights):
        return None
    total = _unkeep(sympy.Add(*weights))
    names = sorted({s.name for w in weights for s in _unkeep(w).free_symbols})
    try:
        ranges = interval_program([_unkeep(w) for w in weights], names)(
            {n: np.array(float(bounds[symbol(n)][0])) for n in names},
            {n: np.array(float(bounds[symbol(n)][1])) for n in names})
    except Exception:  # noqa: BLE001 (a weight the interval program does not take: no mixture)
        return None
    if any(float(np.min(lo)) < 0 for lo, _ in ranges):
        return None
    return smin(*(total * r for r in rests))


def _push(e: sympy.Expr, counts: set, *, expand: bool = False, rounds: int = 8) -> sympy.Expr:
    """Factors that are >= 0 (numbers > 0, parameters, tile counts, kept count differences) moved into
    the one max or min they multiply: c * max(a, b) = max(c a, c b) for c >= 0, so that a tile count
    outside meets the tile size inside; to a fixed point. With `expand`, each product moved in is
    expanded and so is the result's every round (negative powers of parameters count as factors >= 0
    then too)."""
    def extreme(f):
        return getattr(f.func, "__name__", "") in ("smax", "smin")

    def nonnegative(f):
        base = f.base if f.is_Pow and f.exp.is_Integer and (expand or f.exp > 0) else f
        return (base.is_Number and base > 0) or base.is_Symbol or base in counts or base.func == _KEEP

    def pushable(t):
        if not t.is_Mul:
            return False
        inner = [f for f in t.args if extreme(f)]
        return len(inner) == 1 and all(nonnegative(f) for f in t.args if not extreme(f))

    def pushed(t):
        inner = next(f for f in t.args if extreme(f))
        outside = sympy.Mul(*(f for f in t.args if f is not inner))
        return inner.func(*((sympy.expand_mul(outside * a) if expand else outside * a) for a in inner.args))

    for _ in range(rounds):
        new = e.replace(pushable, pushed)
        if new == e:
            break
        e = new
    return e


def _fractional(e: sympy.Expr, counts: set, fractions: dict) -> sympy.Expr | None:
    """e with each ceiling(u) that is not a tile count written u + f, f a fraction symbol in [0, 1]
    (one per distinct u, recorded in `fractions`), expanded; None when e holds no such ceiling.
    ceiling(u) - u is in [0, 1) for every real u, so the form equals e wherever f takes that value."""
    def replaced(t):
        u = t.args[0]
        if u not in fractions:
            fractions[u] = symbol(f"__fraction_{len(fractions)}")
        return u + fractions[u]

    found = e.replace(lambda t: isinstance(t, sympy.ceiling) and t not in counts, replaced)
    if found == e:
        return None
    return _distribute(found, counts)


def _distribute(e: sympy.Expr, counts: set, rounds: int = 6) -> sympy.Expr:
    """e expanded, with every product of non-negative factors and one max or min moved inside it,
    expanded again, to a fixed point: a tile count that multiplies a sum holding a max reaches the
    max's arguments and meets their tile sizes there."""
    return _push(sympy.expand_mul(e), counts, expand=True, rounds=rounds)


def _unkeep(e: sympy.Expr) -> sympy.Expr:
    return e.replace(lambda t: t.func == _KEEP, lambda t: t.args[0])


def _cap(term: sympy.Expr, product: sympy.Expr, capped: sympy.Symbol) -> sympy.Expr:
    """A product term dividing by `product` (or a power of it) rewritten over the capped symbol."""
    powers = term.as_powers_dict()
    factors = product.as_powers_dict()
    k = min((-powers.get(v, 0)) // e for v, e in factors.items())
    if k <= 0:
        return term
    for v, e in factors.items():
        powers[v] = powers.get(v, 0) + k * e
    powers[capped] = -k
    return sympy.Mul(*(b ** e for b, e in powers.items()))


def _pair(term: sympy.Expr, pairs: list[tuple[sympy.Expr, sympy.Expr, sympy.Symbol]]) -> sympy.Expr:
    """A product term with each m^a * ceiling(N/m)^b written p^min(a, b) * (what is left)."""
    coefficient, factors = term.as_coeff_mul()
    powers: dict = {}
    for f in factors:
        base, e = f.as_base_exp()
        powers[base] = powers.get(base, 0) + e
    changed = False
    for m, count, padded in pairs:
        a, b = sympy.sympify(powers.get(m, 0)), sympy.sympify(powers.get(count, 0))
        k = min(int(a), int(b)) if a.is_Integer and b.is_Integer else 0
        if k > 0:
            powers[m], powers[count], powers[padded] = a - k, b - k, powers.get(padded, 0) + k
            changed = True
    if not changed:
        return term
    return coefficient * sympy.Mul(*(base ** e for base, e in powers.items()))


def _linear_in(expr: sympy.Expr, x: sympy.Symbol) -> bool:
    """expr is a polynomial of degree at most 1 in x (x nowhere inside a function or a power)."""
    if not expr.is_polynomial(x):
        return False
    return all(sympy.degree(term, x) <= 1 for term in sympy.Add.make_args(sympy.expand(expr, deep=False))
               if term.is_polynomial(x))


def _submonomials(rest: sympy.Expr, powers: list[tuple[int, int]], names: list[str]):
    """The terms of `rest` that are c * prod v^f over box variables with c > 0, written c * product *
    prod v^(f - e) (e: the variable's exponent in the product, 0 if it has none), as [(c, [(column,
    f - e)])], and the sum of the other terms. Over a box such a term is at least c * product times
    each v^(f - e) at its lower end (f > e) or upper end (f < e): a per-PE term beside a per-lane one
    and a per-lane term beside a per-PE product both cap the product."""
    exponent = dict(powers)
    parts, others = [], []
    for term in sympy.Add.make_args(sympy.expand(rest, deep=False)):
        coefficient, factors = term.as_coeff_mul()
        found: dict[int, int] = {}
        ok = coefficient > 0
        for f in factors if ok else ():
            base, e = f.as_base_exp()
            k = names.index(base.name) if base.is_Symbol and base.name in names else None
            if k is None or not e.is_Integer:
                ok = False
                break
            found[k] = found.get(k, 0) + int(e)
        if ok:
            keys = set(found) | set(exponent)
            parts.append((float(coefficient), [(k, found.get(k, 0) - exponent.get(k, 0)) for k in sorted(keys)
                                               if found.get(k, 0) != exponent.get(k, 0)]))
        else:
            others.append(term)
    return parts, sympy.Add(*others)


def _split_product(expr: sympy.Expr, product: sympy.Expr) -> tuple[float, sympy.Expr]:
    """expr written c * product + rest with c a constant (0 when no term is a constant times it)."""
    coefficient, rest = 0.0, []
    for term in sympy.Add.make_args(sympy.expand(expr, deep=False)):
        ratio = term / product
        if ratio.is_Number:
            coefficient += float(ratio)
        else:
            rest.append(term)
    return coefficient, sympy.Add(*rest)



def _monomial(expr: sympy.Expr, names: list[str], budget: float) -> tuple[float, list[tuple[int, int]]] | None:
    """A resource written c * prod v^e over box variables, as (budget / c, [(column, e)]), else None."""
    coefficient, factors = sympy.sympify(expr).as_coeff_mul()
    powers = []
    for f in factors:
        base, e = f.as_base_exp()
        if not (base.is_Symbol and base.name in names and e.is_Integer):
            return None
        powers.append((names.index(base.name), int(e)))
    if coefficient <= 0 or not powers:
        return None
    return budget / float(coefficient), powers
