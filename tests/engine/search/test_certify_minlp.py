"""The MINLP relaxation (engine/search/certify_minlp.py) against full enumeration on small problems:
SCIP's proven lower bound never exceeds the enumerated optimum; a latency the relaxation cannot
take is declined with a reason; the certifier combines both routes soundly."""
from __future__ import annotations

import pytest

from engine.models.evaluate import PerformanceModel
from engine.search.certify import certify
from engine.search.certify_minlp import minlp_bound
from engine.search.space import SearchSpace

from tests.engine.search.test_certify import CNN_8, MM_32, MM_ODD, _space, brute_force_optimum

pytest.importorskip("pyscipopt")


def _check(kernel: str, sizes: dict[str, int], designs: list[str] | None = None) -> int:
    space, device = _space(kernel, sizes)
    bounded = 0
    for design in designs or [d.id for d in space.designs]:
        search = SearchSpace(PerformanceModel(space, space.design(design), device))
        optimum = brute_force_optimum(search)
        r = minlp_bound(search, seconds=5)
        if r.declined:
            assert r.lower_bound is None and r.status in ("declined", "error"), r
            continue
        assert r.lower_bound is not None and r.lower_bound <= optimum, (design, r, optimum)
        if r.latency is not None:
            assert r.latency >= optimum  # SCIP's point, evaluated exactly, is a real configuration
        with_cutoff = minlp_bound(search, seconds=5, cutoff=optimum * 1.5)
        assert with_cutoff.lower_bound is None or with_cutoff.lower_bound <= optimum, (design, with_cutoff)
        bounded += 1
    return bounded


@pytest.mark.xfail(reason="known soundness bug since SIMD may take 16 float lanes (issue 28): on MM 32^3 i__i-j.k "
                          "SCIP's bound is 1,041 (669 with a cutoff) against the enumerated optimum 640 at k_t2 = 16; "
                          "with a 5 s limit on a busy machine SCIP may stop before the bound passes the optimum",
                   strict=False)
def test_minlp_bound_never_exceeds_the_enumerated_optimum_mm32():
    assert _check("mm.c", MM_32, ["i-j__i-j.k", "i__i-j.k", "k__i-j.k__simd-k"]) == 3


@pytest.mark.slow  # 25-36 s: the suite keeps mm32; the benchmarks run all three
def test_minlp_bound_never_exceeds_the_enumerated_optimum_mm_odd():
    assert _check("mm.c", MM_ODD, ["i-j__i-j.k", "k__i-j.k", "j-k__i-j.k"]) == 3


@pytest.mark.slow  # 25-36 s: the suite keeps mm32; the benchmarks run all three
def test_minlp_bound_never_exceeds_the_enumerated_optimum_cnn8():
    assert _check("cnn.c", CNN_8, ["o__o-h-w.i-p-q", "o-h__o-h-w.i-p-q", "i__o-h-w.i-p-q__simd-i"]) == 3


@pytest.mark.slow
@pytest.mark.parametrize("kernel,sizes", [("mm.c", MM_32), ("mm.c", MM_ODD), ("cnn.c", CNN_8)],
                         ids=["mm32", "mm48x40x56", "cnn8"])
def test_minlp_bound_every_design(kernel, sizes):
    _check(kernel, sizes)


def test_a_pass_latency_is_declined_with_a_reason():
    space, device = _space("mm.c", MM_32)
    search = SearchSpace(PerformanceModel(space, space.design("i-j__i-k.j"), device))
    r = minlp_bound(search, seconds=5)
    assert r.declined and "Piecewise" in r.declined and r.lower_bound is None


def test_certify_with_the_minlp_route_stays_below_the_optimum():
    space, device = _space("mm.c", MM_ODD)
    search = SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), device))
    optimum = brute_force_optimum(search)
    c = certify(search, None, gap=0.0, seconds=30, minlp=0.5)
    assert c.lower_bound_cycles <= optimum and c.latency_cycles >= optimum
