"""The search process gets ready before Start: a Prepare compiles the kernel and keeps the first
design's model in memory (loaded from the cache, or built when missing and stored, for the model
pool and the selection process to read rather than build again), the search then takes that model without reading the cache; the running process serves a Prepare before a request; a hybrid run that
solves no MP seed (a short share over many designs) never imports the solver, one that solves a seed
imports it before its budget starts."""
from __future__ import annotations

import subprocess
import sys

from app.workers import search_process
from app.workers.kernel_source import KernelSource
from app.workers.search_process import Prepare, SearchRequest, load_model, prepare, start_search_host
from engine.compiler.design_space import compile_kernel
from engine.models.cache import ModelCache


def source_of(path) -> KernelSource:
    space = compile_kernel(path)
    return KernelSource(path.read_text(), path.name, str(path.parent), {}, dict(space.kernel.sizes), "u250")


class ListQueue:
    def __init__(self):
        self.messages = []

    def put(self, message):
        self.messages.append(message)


def test_a_prepared_model_is_built_into_the_cache_and_searched_from_memory(tiny_mm, tmp_path, monkeypatch):
    monkeypatch.setattr(search_process, "_PREPARED", {})
    source = source_of(tiny_mm)
    design = compile_kernel(tiny_mm).designs[0].id
    assert prepare(Prepare(source, design, str(tmp_path)))  # built here
    cache = ModelCache(tmp_path)
    key = source.key(design)
    assert cache.has(key)  # and stored: the model pool reads it instead of building it again
    request = SearchRequest(source, "mm", "random", 1.0, (design,), cache_folder=str(tmp_path))
    queue = ListQueue()
    model = load_model(request, design, 0, 1, queue, {})
    assert model is search_process._PREPARED[key] and model.design.id == design
    assert queue.messages == []  # nothing to build: no "building the model" phase


def test_the_process_serves_a_prepare_then_a_search(tiny_mm, tmp_path):
    source = source_of(tiny_mm)
    design = compile_kernel(tiny_mm).designs[0].id
    host = start_search_host()
    try:
        host.prepare(Prepare(source, design, str(tmp_path)))
        host.requests.put(SearchRequest(source, "mm", "random", None, (design,), cache_folder=str(tmp_path),
                                        samples=64))
        messages = []
        while not messages or messages[-1][0] not in ("idle", "error"):
            messages.append(host.replies.get(timeout=300))
        kinds = [kind for kind, _ in messages]
        assert "error" not in kinds, messages
        # the model was prepared before the request: the search built nothing itself
        assert not any(kind == "phase" and "building" in text for kind, text in messages)
        result = next(payload for kind, payload in messages if kind == "result")
        assert [d.design for d in result.designs] == [design] and result.designs[0].samples == 64
        assert ModelCache(tmp_path).has(source.key(design))  # the Prepare stored it (the "building" phase: none)
    finally:
        host.close()


SEARCH = """
import sys
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.search.evolution import HybridSearch
from engine.search.run import SearchRun
from engine.search.space import SearchSpace

space = compile_kernel(sys.argv[1])
search = SearchSpace(PerformanceModel(space, space.designs[0], load_device("u250")))
seconds, designs = float(sys.argv[2]), int(sys.argv[3])
result = SearchRun(search, HybridSearch(search, seed=0), seconds=seconds, samples=64, designs=designs).run()
print(result.samples, "pyomo" in sys.modules, any("MP seed" in note for note in result.notes))
"""


def run_hybrid(kernel, seconds: float, designs: int) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SEARCH, str(kernel), str(seconds), str(designs)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_hybrid_run_imports_the_solver_only_when_it_solves_a_seed(tiny_mm):
    # a 0.22 s share of 27 designs (6 s over MM's 27): no seed, no pyomo
    samples, imported, noted = run_hybrid(tiny_mm, 6 / 27, 27)
    assert samples == "64" and imported == "False" and noted == "True"  # the note says the seed was skipped
    samples, imported, noted = run_hybrid(tiny_mm, 4.0, 1)  # a lone design's 4 s: the seed is solved
    assert samples == "64" and imported == "True" and noted == "True"
