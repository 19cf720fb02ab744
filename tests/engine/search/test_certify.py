"""The certifier against full enumeration on small problems (the bound never exceeds the true optimum;
with a zero gap the proof finds the optimum itself), box bounds against every configuration of random
boxes, and the proof that nothing fits."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from certify_spaces import box_bounds, search_space
from certify_spaces import space_and_device as _space  # built once a session, shared with the other certify tests

from engine.models.constraints import feasible_mask
from engine.models.evaluate import PerformanceModel
from engine.models.sampling import random_configuration
from engine.search.certify import RESOURCES, BoxBounds, _enumerate, certify
from engine.search.exhaustive import _params, loop_choices
from engine.search.space import SearchSpace

__all__ = ["_space"]  # imported by test_certify_minlp


def brute_force_optimum(search: SearchSpace) -> float:
    """The least latency of every legal configuration that fits (inf if none), by enumeration."""
    choices = [np.array(loop_choices(g)) for g in search.loops]
    grids = np.meshgrid(*[np.arange(len(c)) for c in choices], indexing="ij")
    columns = {}
    for g, c, index in zip(search.loops, choices, grids):
        for j, name in enumerate(_params(g)):
            columns[name] = c[index.ravel(), j]
    return float(search.evaluate(columns).fitness.min())


def _check_against_brute_force(search: SearchSpace, seconds: float = 60.0, *, with_gap: bool = True):
    optimum = brute_force_optimum(search)
    c = certify(search, None, gap=0.0, seconds=seconds)
    assert c.proven, c
    assert c.lower_bound_cycles <= optimum
    assert c.latency_cycles == optimum  # the proof found the optimum on its own
    if not with_gap:
        return
    tight = certify(search, c.params, gap=0.05, seconds=seconds)
    assert tight.lower_bound_cycles <= optimum and tight.gap <= 0.05 + 1e-12 and tight.proven


MM_32 = {"I": 32, "J": 32, "K": 32}
MM_ODD = {"I": 48, "J": 40, "K": 56}
CNN_8 = {"O": 8, "H": 8, "W": 8, "I": 8, "P": 3, "Q": 3}


def test_bound_never_exceeds_the_enumerated_optimum_mm_small():
    """One design per array shape (1D along i, j, k; 2D i-j, i-k, j-k); all 18 under -m slow."""
    for design in ("i__j-k.i", "j__i-j.k", "k__i-k.j", "i-j__i-k.j", "i-k__j-k.i", "j-k__i-j.k"):
        _check_against_brute_force(search_space("mm.c", {"I": 12, "J": 10, "K": 14}, design, ratio=0.01),
                                   with_gap=False)


def test_bound_never_exceeds_the_enumerated_optimum_mm32():
    _check_against_brute_force(search_space("mm.c", MM_32, "j-k__i-k.j"))


@pytest.mark.slow
@pytest.mark.parametrize("kernel,sizes", [("mm.c", {"I": 12, "J": 10, "K": 14}), ("mm.c", MM_32), ("mm.c", MM_ODD),
                                          ("cnn.c", CNN_8)], ids=["mm12x10x14", "mm32", "mm48x40x56", "cnn8"])
def test_bound_never_exceeds_the_enumerated_optimum_every_design(kernel, sizes):
    space, device = _space(kernel, sizes)
    for design in space.designs:
        _check_against_brute_force(SearchSpace(PerformanceModel(space, design, device)))


def _rows(bounds: BoxBounds, columns: dict[str, np.ndarray]) -> np.ndarray:
    """Configurations as box-variable rows: the parameters, then the quotients t1 / t2."""
    return np.stack([columns[n] for n in bounds.params]
                    + [columns[bounds.params[m]] // columns[bounds.params[d]] for d, m, _ in bounds.quotients], axis=1)


def _random_boxes(search: SearchSpace, bounds: BoxBounds, rng, count: int, width: int):
    """Boxes around random legal configurations, each side up to `width` wide (quotients included)."""
    configs = [random_configuration(search.design, rng) for _ in range(count)]
    centre = _rows(bounds, {n: np.array([c[n] for c in configs]) for n in search.names})
    n = centre.shape[1]
    lo = np.maximum(bounds.lower, centre - rng.integers(0, width, size=(count, n)))
    hi = np.minimum(bounds.upper, centre + rng.integers(0, width, size=(count, n)))
    return lo, hi


@pytest.mark.parametrize("kernel,sizes,design,drops", [
    ("mm.c", MM_ODD, "i-j__i-j.k", True), ("mm.c", MM_ODD, "i__j-k.i", True),
    ("mm.c", MM_ODD, "i-j__i-k.j", True),  # passes: a Piecewise latency
    ("cnn.c", CNN_8, "o-h__o-i-p-q.h-w", True),
    # passes (the mixture form) and a per-PE LUT term beside the per-lane one (the sub-monomial cap)
    ("cnn.c", CNN_8, "o-i__o-i-p-q.h-w", False), ("cnn.c", CNN_8, "o-i__h-w-i-p-q.o", False)])
def test_box_bounds_hold_for_every_configuration_in_random_boxes(kernel, sizes, design, drops):
    """Contraction drops only configurations that are illegal or do not fit; the resource bounds of
    the contracted box hold at every configuration left in it, the latency bound at every one that fits."""
    search = search_space(kernel, sizes, design)
    bounds = box_bounds(kernel, sizes, design)  # test_certify_forms checks some of the same designs' bounds
    rng = np.random.default_rng(7)
    p = len(bounds.params)
    checked = dropped = 0
    for width in (2, 4, 12):
        lo, hi = _random_boxes(search, bounds, rng, 80, width)
        small = np.prod(hi[:, :p] - lo[:, :p] + 1, axis=1) <= 4096
        lo, hi = lo[small], hi[small]
        clo, chi, nonempty = bounds.contract(lo.copy(), hi.copy())
        clo[~nonempty], chi[~nonempty] = lo[~nonempty], hi[~nonempty]  # bounded, but none of them is used
        latency, resources = bounds.bound(clo, chi)
        points, box = _enumerate(lo[:, :p], hi[:, :p])
        kept = bounds.inside(box, points, lo, hi)  # every legal configuration of the drawn box
        points, box = points[kept], box[kept]
        columns = bounds.columns(points)
        legal = feasible_mask(search.design, columns)
        points, box, columns = points[legal], box[legal], {n: v[legal] for n, v in columns.items()}
        batch = search.evaluate(columns)
        inside = nonempty[box] & np.all((points >= clo[box, :p]) & (points <= chi[box, :p]), axis=1)
        inside &= bounds.inside(box, points, clo, chi)
        assert not batch.feasible[~inside].any()  # dropped by contraction: does not fit
        dropped += int(np.count_nonzero(~inside))
        where = box[inside]
        fits = batch.feasible[inside]  # the latency bound holds where the configuration fits
        assert np.all(latency[where][fits] <= batch.latency[inside][fits])
        exact = np.stack([batch.resources[r][inside] for r in RESOURCES], axis=1)
        assert np.all(resources[where] <= exact + 1e-9), RESOURCES
        checked += int(inside.sum())
    assert checked > 1000 and (dropped > 0 or not drops)  # (the budget binds on some designs only)


def test_a_wide_box_bounds_sampled_configurations():
    space, device = _space("mm.c", {"I": 1024, "J": 1024, "K": 1024}, ratio=0.7)
    search = SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), device))
    bounds = BoxBounds(search)
    rng = np.random.default_rng(3)
    configs = [random_configuration(search.design, rng) for _ in range(3000)]
    columns = {n: np.array([c[n] for c in configs]) for n in search.names}
    rows = _rows(bounds, columns)
    lo, hi = rows.min(axis=0, keepdims=True), rows.max(axis=0, keepdims=True)
    latency, resources = bounds.bound(lo, hi)  # not contracted: the box holds every sample
    batch = search.evaluate(columns)
    assert latency[0] <= batch.latency[batch.feasible].min()
    assert np.all(resources[0] <= [batch.resources[r].min() for r in RESOURCES])


def test_nothing_fits_is_a_proof_naming_the_tightest_resource():
    space, device = _space("mm.c", MM_32, ratio=0.0003)  # 3.7 DSP: not even one fp32 multiply-add (5)
    c = certify(SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), device)), None, seconds=20)
    assert not c.fits and c.proven and c.params is None
    assert c.tightest in RESOURCES and c.notes and "budget" in c.notes[0]
    assert c.to_json()["fits"] is False


def test_a_poor_start_is_improved_and_the_gap_is_reported():
    search = search_space("mm.c", MM_32, "i-j__i-j.k")
    start = {n: 1 for n in search.names}
    c = certify(search, start, gap=0.01, seconds=30)
    assert c.improved and c.proven
    assert c.latency_cycles < search.evaluate([start]).latency[0]
    assert c.gap == pytest.approx(c.latency_cycles / c.lower_bound_cycles - 1)
    data = c.to_json()
    for key in ("design", "params", "latency_cycles", "lower_bound_cycles", "gap", "proven", "boxes_explored",
                "boxes_pruned", "seconds"):
        assert key in data


def test_nothing_fits_names_a_resource_other_than_dsp_when_it_binds():
    """Every resource of PerformanceModel.fits is pruned on: LUT alone rules out every configuration."""
    space, device = _space("mm.c", MM_32, ratio=1.0)
    device = dataclasses.replace(device, resources=device.resources | {"LUT": 500})  # one PE needs more
    search = SearchSpace(PerformanceModel(space, space.design("i-j__i-j.k"), device))
    c = certify(search, None, seconds=20)
    assert not c.fits and c.proven and c.tightest == "LUT" and "LUT" in c.notes[0]
