"""A design id -> what it stands for among a kernel's designs (its space loops, its array's dimensions
with its permutation class, its SIMD variant), and a list of cases -> the fewest that stand for all
of them (a greedy cover). Tests that check every design of a kernel run such a cover by default and
every design under `pytest -m slow`."""
from __future__ import annotations


def design_strata(kernel: str, design_id: str) -> set[tuple]:
    space, _, rest = design_id.partition("__")
    permutation, _, simd = rest.partition("__")
    return {("kernel", kernel), ("space", kernel, space), ("simd", kernel, simd),
            ("array", kernel, space.count("-") + 1, permutation)}


def cover(cases, strata, prefer=()) -> tuple:
    """The fewest of `cases` (greedy: most new strata first, then a `prefer`red case, then the
    earliest) whose strata cover every case's, in the given order."""
    cases, prefer = list(cases), list(prefer)
    marks = [strata(c) for c in cases]
    left, chosen = set().union(*marks), set()
    while left:
        best = max(range(len(cases)), key=lambda n: (len(marks[n] & left), cases[n] in prefer, -n))
        chosen.add(best)
        left -= marks[best]
    return tuple(c for n, c in enumerate(cases) if n in chosen)
