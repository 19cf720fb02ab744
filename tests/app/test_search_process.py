"""The search process's request: each design's model comes from the model cache (built there only if
missing) before that design's share starts, so a cold cache delays the first sample by one model; every design gets an even share of the budget, as `systolic search`
splits it, seeded as explore() seeds it; the messages come in order. A fake search_design records
the shares without timing anything; one real search checks the models and the cache; a sample
budget and a seed find what `systolic search --samples N --seed S` (explore()) finds."""
from __future__ import annotations

import threading

import pytest

from app.workers import search_process
from app.workers.model_pool import KernelSource
from app.workers.search_process import SearchRequest, run_search
from engine.compiler.design_space import compile_kernel
from engine.models.cache import ModelCache
from engine.models.device import load_device
from engine.search.explore import Budget, explore
from engine.search.progress import DesignResult


class ListQueue:
    def __init__(self):
        self.messages = []

    def put(self, message):
        self.messages.append(message)


def source_of(path) -> KernelSource:
    space = compile_kernel(path)
    return KernelSource(path.read_text(), path.name, str(path.parent), {}, dict(space.kernel.sizes), "u250")


DESIGNS = ("i__i-j.k", "j__i-j.k", "i-j__i-j.k", "i-k__i-k.j")


def test_every_design_gets_an_even_share_and_its_model_comes_before_its_share(small_mm, tmp_path, monkeypatch):
    calls = []

    def fake(model, method, seconds, seed, cancel, callbacks, checkpoint=None, samples=None, designs=1):
        calls.append((model.design.id, seconds, seed, designs))
        return DesignResult(model.design.id, method, 10, seconds, None, ())

    monkeypatch.setattr(search_process, "search_design", fake)
    cache = ModelCache(tmp_path)
    request = SearchRequest(source_of(small_mm), "mm", "random", 10.0, DESIGNS, seed=5, cache_folder=str(tmp_path))
    queue = ListQueue()
    run_search(request, queue, threading.Event())
    # as explore() runs them: the hybrid method's solver step is decided on the designs sharing the budget
    assert calls == [(d, pytest.approx(2.5), 5 + n, len(DESIGNS)) for n, d in enumerate(DESIGNS)]
    kinds = [kind for kind, _ in queue.messages]
    # each model was built (not cached yet) before its design's share, and stored
    assert kinds == ["phase", "started"] + ["phase", "phase", "design"] * 4 + ["result"]
    building = [text for kind, text in queue.messages if kind == "phase" and "building" in text]
    assert building == [f"building the model of {d} ({n + 1} of 4)" for n, d in enumerate(DESIGNS)]
    assert all(cache.has(request.source.key(d)) for d in DESIGNS)

    queue = ListQueue()
    run_search(request, queue, threading.Event())  # the second time: every model from the cache
    assert not any(kind == "phase" and "building" in text for kind, text in queue.messages)


def test_an_unknown_design_or_method_is_an_error_message(small_mm, tmp_path):
    source = source_of(small_mm)
    for request in (SearchRequest(source, "mm", "hybrid", 1.0, ("no-such-design",), cache_folder=str(tmp_path)),
                    SearchRequest(source, "mm", "no-such-method", 1.0, DESIGNS[:1], cache_folder=str(tmp_path))):
        queue = ListQueue()
        run_search(request, queue, threading.Event())
        kind, text = queue.messages[-1]
        assert kind == "error" and ("no-such-design" in text or "no-such-method" in text)


def test_a_real_search_samples_every_design(small_mm, tmp_path):
    request = SearchRequest(source_of(small_mm), "mm", "random", 0.4, DESIGNS[:2], cache_folder=str(tmp_path))
    queue = ListQueue()
    run_search(request, queue, threading.Event())
    kind, result = queue.messages[-1]
    assert kind == "result" and [d.design for d in result.designs] == list(DESIGNS[:2])
    assert all(d.samples > 0 and d.best is not None for d in result.designs)


def test_a_sample_budget_and_a_seed_find_what_the_cli_finds(tiny_mm, tmp_path):
    source = source_of(tiny_mm)
    designs = ("i__i-k.j", "j__i-j.k")
    request = SearchRequest(source, "tiny", "hybrid", None, designs, seed=77, cache_folder=str(tmp_path), samples=400)
    queue = ListQueue()
    run_search(request, queue, threading.Event())
    kind, result = queue.messages[-1]
    assert kind == "result", result
    cli = explore(compile_kernel(tiny_mm), load_device("u250"), method="hybrid", budget=Budget(samples=400),
                  designs=list(designs), seed=77)
    assert [(d.design, d.samples, d.best.params, d.best.latency_cycles) for d in result.designs] == \
        [(d.design, d.samples, d.best.params, d.best.latency_cycles) for d in cli.designs]
    assert [d.samples for d in result.designs] == [200, 200]
