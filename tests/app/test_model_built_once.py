"""Issue 29, a cold first sample: after a compile the first design's model is asked for at once by
the search process (its Prepare), the selection process (the first evaluation) and the model pool;
it is built once, by whichever comes first, and the others read the cache entry it stores
(engine/models/cache.cached_model's build lock). Builds are counted through a hook on
prepared_model, not timed; the three callers are held until each has found the cache empty, so
without the lock each of them would build it."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from app.workers import search_process, selection_process
from app.workers.kernel_source import KernelSource, build_model, compile_source
from app.workers.search_process import Prepare
from engine.models import cache as cache_module
from engine.models.cache import ModelCache

CALLERS = 3


def test_the_first_designs_model_is_built_once_for_search_selection_and_pool(tiny_mm, tmp_path, monkeypatch):
    monkeypatch.setattr(search_process, "_PREPARED", {})
    monkeypatch.setattr(selection_process, "_MODELS", {})
    monkeypatch.setattr(selection_process, "_DESCRIPTORS", {})
    folder = str(tmp_path / "models")
    probe = KernelSource(tiny_mm.read_text(), tiny_mm.name, str(tiny_mm.parent), {}, {}, "u250")
    space = compile_source(probe)  # once, here: each caller finds it compiled
    source = KernelSource(probe.text, probe.file_name, probe.headers, {}, dict(space.kernel.sizes), "u250")
    compile_source(source)
    design = space.designs[0]

    builds, looked = [], threading.local()
    all_missed = threading.Barrier(CALLERS)
    real_load, real_prepared = ModelCache.load, cache_module.prepared_model

    def load(self, key, design_id=None):
        model = real_load(self, key, design_id)
        if not getattr(looked, "once", False):  # a caller's first look: all three find the cache empty
            looked.once = True
            all_missed.wait(timeout=600)  # (against a hang only: a broken barrier fails the caller)
        return model

    def prepared_model(*args, **kwargs):
        builds.append(args[1].id)
        return real_prepared(*args, **kwargs)

    monkeypatch.setattr(ModelCache, "load", load)
    monkeypatch.setattr(cache_module, "prepared_model", prepared_model)
    values = {p.name: p.lower for p in design.params if p.tunable}
    with ThreadPoolExecutor(CALLERS) as pool:
        futures = {"search process": pool.submit(search_process.prepare, Prepare(source, design.id, folder)),
                   "selection process": pool.submit(selection_process.evaluate, source, design.id, values, folder),
                   "model pool": pool.submit(build_model, source, design.id, folder)}
        built = {"search process": futures["search process"].result(),
                 "selection process": futures["selection process"].result().built,
                 "model pool": futures["model pool"].result()[1]}
    assert builds == [design.id], builds
    assert sum(built.values()) == 1, built  # one of them built it, the two others read it
    assert ModelCache(folder).has(source.key(design.id))
