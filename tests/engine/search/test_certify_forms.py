"""Each latency form of the certifier's box bounds alone (engine/search/certify.py BoxBounds.forms), in
particular the forms with each non-count ceiling written as its argument plus a fraction and tile
counts distributed into maxima: on random boxes, below the latency of every configuration in the box
that fits; and the split at tile-count boundaries: two children that partition their parent."""
from __future__ import annotations

import numpy as np
import pytest

from certify_spaces import box_bounds, search_space

from engine.models.constraints import feasible_mask
from engine.search.certify import BoxBounds, _enumerate, _split
from engine.search.space import SearchSpace

from tests.engine.search.test_certify import CNN_8, MM_ODD, _random_boxes


def _boxes_and_configurations(search: SearchSpace, bounds: BoxBounds, seed: int):
    """Contracted random boxes and, per box, the legal configurations inside it with their latency
    and whether they fit."""
    rng = np.random.default_rng(seed)
    p = len(bounds.params)
    los, his = [], []
    for width in (2, 4, 12, 40):
        lo, hi = _random_boxes(search, bounds, rng, 60, width)
        small = np.prod(hi[:, :p] - lo[:, :p] + 1, axis=1) <= 4096
        los.append(lo[small])
        his.append(hi[small])
    lo, hi, nonempty = bounds.contract(np.concatenate(los), np.concatenate(his))
    lo, hi = lo[nonempty], hi[nonempty]
    points, box = _enumerate(lo[:, :p], hi[:, :p])
    inside = bounds.inside(box, points, lo, hi)
    points, box = points[inside], box[inside]
    columns = bounds.columns(points)
    legal = feasible_mask(search.design, columns)
    points, box = points[legal], box[legal]
    batch = search.evaluate(bounds.columns(points))
    return lo, hi, box, batch


@pytest.mark.parametrize("kernel,sizes,design", [
    ("cnn.c", CNN_8, "o-i__h-w-i-p-q.o"),  # passes: a Piecewise, ceilings of packed block sizes
    ("cnn.c", CNN_8, "h-w__o-h-w.i-p-q"),
    ("cnn.c", CNN_8, "o-h__o-h-w.i-p-q"),
    ("mm.c", MM_ODD, "i-j__i-k.j"),
    ("mm.c", MM_ODD, "i-j__i-j.k")])
def test_every_latency_form_alone_bounds_every_configuration_that_fits(kernel, sizes, design):
    search = search_space(kernel, sizes, design)
    bounds = box_bounds(kernel, sizes, design)  # shared with test_certify's box tests: forms put back below
    assert bounds.fraction_forms  # the design has ceilings other than tile counts
    lo, hi, box, batch = _boxes_and_configurations(search, bounds, seed=11)
    fits = batch.feasible
    assert fits.sum() > 500
    forms = list(bounds.forms)
    try:
        for k in range(len(forms)):
            bounds.forms = [forms[k]]
            latency, _ = bounds.bound(lo, hi)
            assert np.all(latency[box[fits]] <= batch.latency[fits]), (design, k)
    finally:
        bounds.forms = forms
    # and together they are tighter than the forms without the fraction ones
    together, _ = bounds.bound(lo, hi)
    bounds.forms = [f for k, f in enumerate(forms) if k not in bounds.fraction_forms]
    without, _ = bounds.bound(lo, hi)
    bounds.forms = forms
    assert np.all(together >= without)


def test_a_split_partitions_its_box_at_tile_count_boundaries():
    rng = np.random.default_rng(5)
    extents = np.array([224, 64, 3, 0])
    lo = np.stack([rng.integers(1, 225, 400), rng.integers(1, 65, 400), rng.integers(1, 4, 400),
                   rng.integers(1, 9, 400)], axis=1)
    hi = np.minimum(lo + np.stack([rng.integers(0, 200, 400), rng.integers(0, 60, 400), rng.integers(0, 3, 400),
                                   rng.integers(0, 9, 400)], axis=1), [224, 64, 3, 16])
    keep = np.any(hi > lo, axis=1)
    lo, hi = lo[keep], hi[keep]
    clo, chi = _split(lo, hi, extents)
    n = len(lo)
    left_lo, left_hi, right_lo, right_hi = clo[:n], chi[:n], clo[n:], chi[n:]
    assert np.all(left_lo <= left_hi) and np.all(right_lo <= right_hi)
    for k in range(n):  # the children cover the parent exactly: one variable cut in two, adjacent
        cut = np.flatnonzero((left_hi[k] != hi[k]) | (right_lo[k] != lo[k]))
        assert len(cut) == 1
        c = cut[0]
        assert right_lo[k, c] == left_hi[k, c] + 1 and left_lo[k, c] == lo[k, c] and right_hi[k, c] == hi[k, c]
    # a tile size's box whose tile count takes two values is cut where the count changes
    lo, hi = np.array([[30, 1, 1, 1], [90, 1, 1, 1]]), np.array([[64, 1, 1, 1], [224, 1, 1, 1]])
    clo, chi = _split(lo[:, [0, 1]], hi[:, [0, 1]], np.array([64, 0]))
    assert chi[0, 0] == 31 and clo[2, 0] == 32  # ceiling(64/m): 3 up to 31, 2 from 32
    clo, chi = _split(lo[1:, [0, 1]], hi[1:, [0, 1]], np.array([224, 0]))
    assert chi[0, 0] == 111 and clo[1, 0] == 112  # ceiling(224/m): 3 up to 111, 2 from 112
