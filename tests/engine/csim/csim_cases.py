"""Designs exported and simulated by the C-simulation tests: every MM and CNN design and designs of
the tensor kernels, with random legal configurations that include non-divisor partitioning factors,
spread over float, int16 and int8. Built and run two at a time, once per test session. The default
suite C-simulates a stratified subset (`default_cases`: every kernel, space loop set, array shape and
permutation class, SIMD variant, element type and size set); `pytest -m slow` every case."""
from __future__ import annotations

import concurrent.futures
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from design_strata import cover, design_strata

from engine.compiler.architecture.build import build_architecture
from engine.compiler.design_space import compile_kernel
from engine.export import export_project
from engine.csim import CsimResult, run_csim
from engine.models.sampling import random_configuration
from engine.resources import KERNELS

DTYPES = ("float", "int16_t", "int8_t")


@dataclass(frozen=True)
class Case:
    kernel: str
    design: str
    defines: tuple[tuple[str, int], ...]
    max_t1: int
    seed: int
    params: tuple[tuple[str, int], ...] = ()  # a given configuration instead of a random one

    @property
    def id(self) -> str:
        sizes = "x".join(str(v) for k, v in self.defines if k != "DATA_T")
        dtype = dict(self.defines).get("DATA_T", "float")
        return f"{self.kernel}-{self.design}-{sizes}-{dtype}-seed{self.seed}"


@functools.cache
def _space(kernel: str, defines):
    return compile_kernel(KERNELS / f"{kernel}.c", defines={k: str(v) for k, v in defines})


def configuration(case: Case) -> dict[str, int]:
    """A random legal configuration; a partitioning factor that does not divide its loop is drawn
    on purpose whenever the draw allows one."""
    if case.params:
        return dict(case.params)
    space = _space(case.kernel, case.defines)
    design = space.design(case.design)
    sizes = dict(space.design(case.design).to_json()["problem_size"])
    for attempt in range(20):
        rng = np.random.default_rng(case.seed * 100 + attempt)
        values = random_configuration(design, rng, max_t1={l: case.max_t1 for l in sizes})
        if any(sizes[p.loop] % values[p.name] for p in design.params if p.role == "array_partition"):
            break
    return values


@functools.cache
def mm_cases() -> tuple[Case, ...]:
    designs = [d.id for d in _space("mm", (("I", 4), ("J", 4), ("K", 4))).designs]
    sizes = [(("I", 64), ("J", 64), ("K", 64)), (("I", 60), ("J", 50), ("K", 70))]
    return tuple(Case("mm", d, sizes[n % 2] + (("DATA_T", DTYPES[n % 3]),), 12, n) for n, d in enumerate(designs))


@functools.cache
def cnn_cases() -> tuple[Case, ...]:
    designs = [d.id for d in _space("cnn", (("O", 4), ("I", 4), ("H", 4), ("W", 4), ("P", 3), ("Q", 3))).designs]
    sizes = [(("O", 8), ("I", 9), ("H", 10), ("W", 12)), (("O", 16), ("I", 8), ("H", 13), ("W", 9)),
             (("O", 11), ("I", 14), ("H", 8), ("W", 16))]
    return tuple(Case("cnn", d, sizes[n % 3] + (("P", 3), ("Q", 3), ("DATA_T", DTYPES[(n + 1) % 3])), 6, n)
                 for n, d in enumerate(designs))


@functools.cache
def tensor_cases() -> tuple[Case, ...]:
    """Per tensor kernel: a design whose partial sums flow from PE to PE, and one that reloads them."""
    cases = []
    for n, (kernel, sizes) in enumerate([("mttkrp", (("I", 6), ("J", 5), ("K", 7), ("L", 6))),
                                         ("ttm", (("I", 6), ("J", 7), ("K", 5), ("L", 9))),
                                         ("ttmc", (("I", 5), ("J", 4), ("K", 6), ("L", 5), ("M", 4)))]):
        space = _space(kernel, sizes)
        chosen = []
        for wanted in ("exterior", "reload"):
            for design in space.designs:
                acc = next(g for g in build_architecture(space, design).groups if g.kind != "in")
                if design.id not in chosen and (acc.exterior_loop if wanted == "exterior" else str(acc.reloads) != "0"):
                    chosen.append(design.id)
                    break
        cases += [Case(kernel, d, sizes + (("DATA_T", DTYPES[(n + k) % 3]),), 5, 7 + k) for k, d in enumerate(chosen)]
    return tuple(cases)


@functools.cache
def space_simd_cases() -> tuple[Case, ...]:
    """SIMD on a space loop with 4 and 8 lanes (random draws mostly give 1 or 2), non-divisor
    partitioning factors on the other loops, every data type."""
    def given(kernel, design, defines, seed, **params):
        return Case(kernel, design, tuple(defines.items()), 0, seed, tuple(params.items()))
    return (
        given("mm", "k__i-j.k__simd-k", {"I": 60, "J": 50, "K": 64, "DATA_T": "float"}, 100,
              i_t1=16, j_t1=12, k_t1=32, i_t2=4, j_t2=3, k_t2=8),
        given("mm", "i-k__i-k.j__simd-k", {"I": 64, "J": 64, "K": 70, "DATA_T": "int16_t"}, 101,
              i_t1=12, j_t1=16, k_t1=16, i_t2=3, j_t2=4, k_t2=4),
        given("mm", "j-k__j-k.i__simd-k", {"I": 50, "J": 64, "K": 64, "DATA_T": "int8_t"}, 102,
              i_t1=10, j_t1=16, k_t1=32, i_t2=5, j_t2=4, k_t2=8),
        given("cnn", "i__o-h-w.i-p-q__simd-i", {"O": 8, "I": 16, "H": 10, "W": 12, "P": 3, "Q": 3, "DATA_T": "float"},
              103, o_t1=4, h_t1=5, w_t1=6, i_t1=16, p_t1=3, q_t1=3, o_t2=2, h_t2=5, w_t2=3, i_t2=4),
        given("cnn", "h-i__o-i-p-q.h-w__simd-i", {"O": 8, "I": 16, "H": 10, "W": 8, "P": 3, "Q": 3,
                                                  "DATA_T": "int16_t"},
              104, o_t1=4, h_t1=4, w_t1=8, i_t1=16, p_t1=3, q_t1=3, o_t2=2, h_t2=2, w_t2=4, i_t2=8),
    )


@functools.cache
def design_cases() -> tuple[Case, ...]:
    """Every case test_csim_designs simulates (`pytest -m slow`), and its default subset."""
    return (*mm_cases(), *cnn_cases(), *tensor_cases(), *space_simd_cases())


def strata(case: Case) -> set[tuple]:
    """What a case stands for: its design's strata (design_strata.py), element type, and its sizes
    (or SIMD lanes for a given configuration)."""
    dtype = dict(case.defines).get("DATA_T", "float")
    out = design_strata(case.kernel, case.design) | {("type", case.kernel, dtype)}
    if case.params:
        simd = case.design.partition("__simd-")[2]
        out.add(("lanes", case.kernel, dict(case.params)[simd + "_t2"]))
    else:
        out.add(("sizes", case.kernel, tuple(v for k, v in case.defines if k != "DATA_T")))
    return out


def default_cases(cases, prefer=()) -> tuple[Case, ...]:
    """The fewest cases whose strata cover every case's (design_strata.cover); `prefer`: cases to
    take first when they cover as much (those another module simulates anyway)."""
    return cover(cases, strata, prefer)


def params(cases, default) -> list:
    """pytest parameters of `cases`, those outside `default` marked slow (`default` stands for them:
    same strata, test_csim_designs.test_the_default_cases_cover_every_stratum)."""
    return [pytest.param(c, id=c.id, marks=() if c in default else pytest.mark.slow) for c in cases]


def export_case(case: Case, root: Path) -> Path:
    space = _space(case.kernel, case.defines)
    return export_project(space, space.design(case.design), configuration(case), root / case.id.replace(".", "_"),
                          allow_over_budget=True, floorplan="none")


def _simulate(case: Case, root: Path) -> CsimResult | Exception:
    try:
        return run_csim(export_case(case, root))
    except Exception as exc:  # noqa: BLE001 - reported by the test of this case
        return exc


def _simulate_group(cases: list[Case], root: Path) -> list[CsimResult | Exception]:
    return [_simulate(case, root) for case in cases]


def simulate_all(cases: list[Case], root: Path) -> dict[str, CsimResult | Exception]:
    """Two worker processes: exporting is Python work, simulating is g++'s. The cases of one kernel
    and sizes go to the same worker (largest groups first), which compiles that kernel once."""
    groups: dict[tuple, list[Case]] = {}
    for case in cases:
        groups.setdefault((case.kernel, case.defines), []).append(case)
    ordered = sorted(groups.values(), key=len, reverse=True)
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        done = pool.map(_simulate_group, ordered, [root] * len(ordered))
        return {c.id: result for group, results in zip(ordered, done) for c, result in zip(group, results)}
