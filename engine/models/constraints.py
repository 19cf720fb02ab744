"""Tuning-parameter values -> every constraint they break, by name (for users), or as a mask over a
whole population (for the tuner). Any values are safe to pass (0, negative, non-integer): they come
back as violations, never as an exception."""
from __future__ import annotations

import numpy as np

from engine.compiler.design import Design
from engine.errors import DesignError


def violations(design: Design, values: dict[str, int]) -> list[str]:
    """All broken bounds and constraints of one configuration, one readable line each."""
    problems = []
    tunable = [p for p in design.params if p.tunable]
    unknown = sorted(set(values) - {p.name for p in design.params})
    problems += [f"{name} is not a parameter of {design.id}" for name in unknown]
    for p in tunable:
        if p.name not in values:
            problems.append(f"{p.name} is missing (bounds {p.lower}..{p.upper})")
            continue
        v = values[p.name]
        if not _is_integer(v):
            problems.append(f"{p.name}={v!r} is not an integer (bounds {p.lower}..{p.upper})")
            continue
        if not p.lower <= v <= p.upper:
            problems.append(f"{p.name}={v} is outside its bounds {p.lower}..{p.upper}")
        for c in p.constraints:
            if c.kind == "divides" and _is_integer(values.get(c.other)):
                if v <= 0:  # nothing divides by 0, and a negative factor is outside the bounds above
                    problems.append(f"{p.name}={v} must divide {c.other}={values[c.other]} (a positive factor)")
                elif values[c.other] % v != 0:
                    problems.append(f"{p.name}={v} must divide {c.other}={values[c.other]}")
            if c.kind == "power_of_two" and (v <= 0 or v & (v - 1)):
                problems.append(f"{p.name}={v} must be a power of two")
    return problems


def _is_integer(v) -> bool:
    """An int (numpy's included), not a bool, a float or a string a caller passed by mistake."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def check(design: Design, values: dict[str, int]) -> None:
    problems = violations(design, values)
    if problems:
        raise DesignError(f"{design.id}: " + "; ".join(problems))


def feasible_mask(design: Design, values: dict[str, np.ndarray]) -> np.ndarray:
    """True where a configuration of the population meets every bound and constraint."""
    n = len(next(iter(values.values())))
    ok = np.ones(n, dtype=bool)
    for p in design.params:
        if not p.tunable:
            continue
        v = np.asarray(values[p.name])
        positive = v > 0
        ok &= (v >= p.lower) & (v <= p.upper) & positive
        safe = np.where(positive, v, 1)  # no division by 0 (those rows are already infeasible)
        for c in p.constraints:
            if c.kind == "divides":
                ok &= np.asarray(values[c.other]) % safe == 0
            elif c.kind == "power_of_two":
                ok &= (safe & (safe - 1)) == 0
    return ok
