"""The on-disk model cache: a stored model loads and evaluates as the built one does; the key changes
with everything a model depends on; a corrupt or foreign entry is discarded and rebuilt, never used."""
from __future__ import annotations

import numpy as np
import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.cache import MODEL_VERSION, ModelCache, cached_model, model_key, shared_model
from engine.models.device import load_device
from engine.resources import KERNELS

SIZES = {"I": 32, "J": 24, "K": 16}


@pytest.fixture(scope="module")
def space():
    return compile_kernel(KERNELS / "mm.c", defines=SIZES)


def test_a_cached_model_evaluates_like_the_built_one(space, tmp_path):
    cache, device = ModelCache(tmp_path), load_device("u250")
    design = space.designs[3]
    key = model_key("text", {}, SIZES, device, design.id)
    built, was_built = cached_model(cache, key, space, design, device)
    loaded, again = cached_model(cache, key, space, design, device)
    assert was_built and not again and loaded is not built
    values = {p.name: np.array([p.lower, min(p.upper, 4)]) for p in design.params if p.tunable}
    for name in ("latency_cycles", "DSP", "BRAM18K", "LUT", "offchip_bytes"):
        assert np.array_equal(loaded.evaluate(values)[name], built.evaluate(values)[name])


def test_the_key_follows_text_defines_sizes_device_and_design(space):
    device = load_device("u250")
    base = model_key("text", {"D": 1}, SIZES, device, "d")
    assert len({base, model_key("text2", {"D": 1}, SIZES, device, "d"), model_key("text", {"D": 2}, SIZES, device, "d"),
                model_key("text", {"D": 1}, {**SIZES, "I": 8}, device, "d"),
                model_key("text", {"D": 1}, SIZES, load_device("u250", clock_mhz=250), "d"),
                model_key("text", {"D": 1}, SIZES, device, "e")}) == 6
    assert len(MODEL_VERSION) == 16


def test_a_corrupt_entry_is_discarded_and_rebuilt(space, tmp_path):
    cache, device = ModelCache(tmp_path), load_device("u250")
    design = space.designs[0]
    key = model_key("text", {}, SIZES, device, design.id)
    cached_model(cache, key, space, design, device)
    data = bytearray(cache.path(key).read_bytes())
    data[-10] ^= 0xFF  # one flipped byte
    cache.path(key).write_bytes(bytes(data))
    assert cache.load(key, design.id) is None and not cache.has(key) and cache.discarded == [key]
    cache.path(key).parent.mkdir(parents=True, exist_ok=True)
    cache.path(key).write_bytes(b"not a model at all")
    _, built = cached_model(cache, key, space, design, device)
    assert built and cache.load(key, design.id) is not None
    assert cache.load(key, space.designs[1].id) is None  # another design's entry is not trusted either


def test_shared_model_is_built_once_per_kernel_design_device_and_layout(space, monkeypatch):
    from engine.models import cache

    monkeypatch.setattr(cache, "_shared", type(cache._shared)())  # this test's own memo
    device, design = load_device("u250"), space.designs[0]
    model = shared_model(space, design, device)
    again = compile_kernel(KERNELS / "mm.c", defines=SIZES)  # another compilation of the same kernel
    assert shared_model(again, again.design(design.id), device) is model
    smaller = compile_kernel(KERNELS / "mm.c", defines={**SIZES, "I": 16})
    others = [shared_model(space, design, device, layout="natural"),
              shared_model(space, design, load_device("u250", clock_mhz=250)),
              shared_model(space, space.designs[1], device),
              shared_model(smaller, smaller.design(design.id), device)]
    assert all(other is not model for other in others) and len({id(m) for m in others}) == 4
    assert others[0].layout == "natural" and others[1].device.clock_mhz == 250
    assert others[2].design == space.designs[1]


def test_shared_model_keeps_the_most_recently_used(space, monkeypatch):
    from engine.models import cache

    monkeypatch.setattr(cache, "_shared", type(cache._shared)())
    monkeypatch.setattr(cache, "SHARED_MODELS", 2)
    device = load_device("u250")
    first, second = (shared_model(space, d, device) for d in space.designs[:2])
    assert shared_model(space, space.designs[0], device) is first  # now the most recent
    shared_model(space, space.designs[2], device)  # evicts the second, the least recently used
    assert shared_model(space, space.designs[0], device) is first
    assert shared_model(space, space.designs[1], device) is not second
