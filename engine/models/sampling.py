"""Design -> random legal configurations: array-partitioning factors anywhere in 1..N (non-divisors
included), latency-hiding factors among the divisors of their partitioning factor, SIMD factors
among its power-of-two divisors up to the bound. Used by tests, studies and search seeding."""
from __future__ import annotations

import numpy as np

from engine.compiler.design import Design


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def random_configuration(design: Design, rng: np.random.Generator, *, max_t1: dict[str, int] | None = None) -> dict[str, int]:
    values: dict[str, int] = {}
    for p in design.params:
        if p.role == "array_partition":
            upper = min(p.upper, (max_t1 or {}).get(p.loop, p.upper))
            values[p.name] = int(rng.integers(p.lower, upper + 1))
    for p in design.params:
        if p.role in ("latency_hiding", "simd"):
            choices = [d for d in _divisors(values[f"{p.loop}_t1"]) if p.lower <= d <= p.upper
                       and (p.role != "simd" or d & (d - 1) == 0)]
            values[p.name] = int(rng.choice(choices))
    return values
