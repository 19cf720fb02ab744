"""A design's tuning parameter + the other parameters' values -> the values it may take: within its
bounds, dividing what it must divide, a multiple of what must divide it, a power of two when it
must be one (the constraints of engine.models.constraints, read from the design). The spin boxes
step through these."""
from __future__ import annotations

from math import gcd, isqrt, lcm

from engine.compiler.design import Design


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def legal_values(design: Design, name: str, values: dict[str, int]) -> list[int]:
    params = {p.name: p for p in design.params if p.tunable}
    p = params[name]
    must_divide = [values[c.other] for c in p.constraints if c.kind == "divides" and c.other in values]
    power_of_two = any(c.kind == "power_of_two" for c in p.constraints)
    multiple_of = [values[q.name] for q in params.values() if q.name != name and q.name in values
                   for c in q.constraints if c.kind == "divides" and c.other == name]
    common = 0
    for other in must_divide:
        common = gcd(common, other)
    # what must divide others is a divisor of their gcd: O(sqrt) candidates instead of the whole range
    step = lcm(*[m for m in multiple_of if m > 0]) if any(m > 0 for m in multiple_of) else 1
    if common > 0:
        candidates = _divisors(common)
    elif power_of_two:
        candidates = [1 << k for k in range(p.upper.bit_length())]
    else:  # a multiple of what must divide it
        candidates = range(step, p.upper + 1, step)
    out = []
    for v in candidates:
        if not max(1, p.lower) <= v <= p.upper:
            continue
        if power_of_two and v & (v - 1):
            continue
        if any(other % v for other in must_divide) or any(m and v % m for m in multiple_of):
            continue
        out.append(v)
    return out


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
