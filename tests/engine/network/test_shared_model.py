"""One model per design shared by a network's layers: bound to a layer's sizes, it evaluates exactly like
the model built at those sizes (fast and full evaluation, MP objectives, resources), for every design
of the CNN kernel; a layer whose design has another structure (1x1: no latency hiding on p, q) gets
a shared model of its own; a pair's model comes from the on-disk cache in a fresh process."""
from __future__ import annotations

import numpy as np
import pytest

from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.network.shared_model import SharedModel, structure_key
from engine.network.task import Job, _spaces, sized_model, sized_space
from engine.resources import KERNELS
from engine.search.mathematical_programming import mp_objectives
from engine.search.space import SearchSpace

LAYERS = [{"I": 8, "O": 16, "H": 14, "W": 14, "P": 3, "Q": 3},
          {"I": 16, "O": 8, "H": 7, "W": 10, "P": 3, "Q": 3},
          {"I": 16, "O": 16, "H": 7, "W": 7, "P": 1, "Q": 1}]


@pytest.fixture(scope="module")
def job():
    kernel = KERNELS / "cnn.c"
    envelope = {k: max(layer[k] for layer in LAYERS) for k in LAYERS[0]}
    return Job(str(kernel), kernel.read_text(), (), tuple(envelope.items()), "u250", "hybrid", None, 100)


def _random_configs(design, rng, count=64):
    return {p.name: rng.integers(p.lower, p.upper + 1, count) for p in design.params if p.tunable}


def test_a_bound_shared_model_evaluates_like_the_model_built_at_the_layer(job):
    device = load_device("u250")
    rng = np.random.default_rng(3)
    shared: dict = {}
    for sizes in LAYERS:
        space = sized_space(job, sizes)
        for design in space.designs[::5]:
            key = structure_key(design)
            if key not in shared:
                shared[key] = SharedModel(space, design, device)
            bound, built = shared[key].bind(design), PerformanceModel(space, design, device)
            configs = _random_configs(design, rng)
            for a, b in zip(bound.evaluate_fast(configs), built.evaluate_fast(configs)):
                np.testing.assert_array_equal(a, b)
            full_a, full_b = bound.evaluate(configs), built.evaluate(configs)
            assert full_a.values.keys() == full_b.values.keys()
            for name in full_b.values:
                np.testing.assert_allclose(full_a[name], full_b[name])
            assert bound.symbolic.macs == built.symbolic.macs
            assert bound.symbolic.operations == built.symbolic.operations
            lowest = {p.name: p.lower for p in design.params if p.tunable}
            assert mp_objectives(SearchSpace(bound), lowest) == mp_objectives(SearchSpace(built), lowest)
    # the 1x1 layer's designs (no latency hiding on p and q, no reduction along them) have their own
    assert any(k[-1] == (False,) * 6 for k in shared) and any(any(k[-1]) for k in shared)


def test_a_pair_model_is_shared_across_layers_and_cached_on_disk(job, tmp_path, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_CACHE", str(tmp_path / "cache"))
    design = sized_space(job, LAYERS[0]).designs[0].id
    first = sized_model(job, LAYERS[0], design)
    second = sized_model(job, LAYERS[1], design)
    assert first.shared is second.shared  # one build for both layers
    assert any((tmp_path / "cache").rglob("*.model"))
    for key in [k for k in _spaces if k[0] == "shared"]:  # as a fresh worker: memory empty, disk kept
        del _spaces[key]
    again = sized_model(job, LAYERS[1], design)
    assert again.shared is not second.shared
    configs = _random_configs(again.design, np.random.default_rng(0))
    for a, b in zip(again.evaluate_fast(configs), second.evaluate_fast(configs)):
        np.testing.assert_array_equal(a, b)
