"""A design's tuning parameter + the other parameters' values -> the values it may take: within its
bounds, dividing what it must divide, a multiple of what must divide it, a power of two when it
must be one (the constraints of engine.models.constraints, read from the design). The spin boxes
step through these (by bisection: the values may be a range of 10^9 integers, never listed)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # islpy and sympy: not imported before the window paints
    from engine.compiler.design import Design



def legal_values(design: Design, name: str, values: dict[str, int]) -> Sequence[int]:
    """The legal values in ascending order, as a list, or a range when they are every multiple of a
    step (an unconstrained t1 of an extent of 10^9 is range(1, 10^9 + 1), not a list of 10^9 ints):
    divisors come from the gcd of what the value must divide (O(sqrt)), powers of two are listed."""
    params = {p.name: p for p in design.params if p.tunable}
    p = params[name]
    must_divide = [values[c.other] for c in p.constraints if c.kind == "divides" and c.other in values]
    power_of_two = any(c.kind == "power_of_two" for c in p.constraints)
    multiple_of = [values[q.name] for q in params.values() if q.name != name and q.name in values
                   for c in q.constraints if c.kind == "divides" and c.other == name]
    lower, upper = max(1, p.lower), p.upper
    step = math.lcm(*[m for m in multiple_of if m > 0]) if any(m > 0 for m in multiple_of) else 1
    if must_divide:
        g = math.gcd(*must_divide)
        if g == 0:  # every value divides 0
            candidates: Sequence[int] = _multiples(lower, upper, step)
        else:
            candidates = _divisors(abs(g))
    elif power_of_two:
        candidates = [1 << b for b in range(max(upper, 1).bit_length())]
    else:
        return _multiples(lower, upper, step)
    if power_of_two and isinstance(candidates, range):
        candidates = [1 << b for b in range(max(upper, 1).bit_length())]
    return [v for v in candidates if lower <= v <= upper and v % step == 0 and not (power_of_two and v & (v - 1))]


def _multiples(lower: int, upper: int, step: int) -> range:
    return range(-(-lower // step) * step, upper + 1, step)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def describe_rules(design: Design, name: str) -> str:
    """The parameter's bounds and constraints in a few words, e.g. '1..1024, divides i_t1'."""
    params = {p.name: p for p in design.params if p.tunable}
    p = params[name]
    rules = [f"{p.lower}..{p.upper}"]
    rules += [f"divides {c.other}" for c in p.constraints if c.kind == "divides"]
    rules += ["power of two" for c in p.constraints if c.kind == "power_of_two"]
    rules += [f"multiple of {q.name}" for q in params.values() for c in q.constraints
              if c.kind == "divides" and c.other == name]
    return ", ".join(rules)
