"""One (layer, design) pair -> PairResult: the pair's search, run where Dask puts it.

A task carries everything a worker needs (the kernel's text, not a path: a cluster's workers need not
share the file system) and is deterministic given its seed and a sample budget; a time budget makes
the sample count depend on the machine, as in `systolic search`. The budget includes building the
pair's model, as `explore` charges a design's model to its share. Each worker process keeps the
compiled kernel (the envelope's designs and each layer's polyhedral model) for the tasks that follow.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from engine.compiler.design_space import DesignSpace
from engine.errors import EngineError
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.network.designs import envelope_space, layer_space, loop_defines
from engine.network.shared_model import SharedModel, structure_key
from engine.search import pareto
from engine.search.methods import strategy_class
from engine.search.progress import Candidate
from engine.search.run import SearchRun
from engine.search.space import SearchSpace


@dataclass(frozen=True)
class Job:
    """What every task of one network run shares."""

    kernel_path: str  # as the user named it (messages; used as is when a worker sees the same text there)
    kernel_text: str
    defines: tuple[str, ...]  # other -D overrides (DATA_T=...); layer sizes win over them
    envelope: tuple[tuple[str, int], ...]  # the sizes the network's designs are compiled at
    device: str
    method: str
    seconds: float | None  # per pair
    samples: int | None  # per pair
    clock_mhz: float | None = None  # `systolic network --clock`: the clock throughput is reported at

    def load_device(self):
        """The run's device at the run's clock."""
        return load_device(self.device, clock_mhz=self.clock_mhz)


@dataclass(frozen=True)
class PairTask:
    job: Job
    layer: str
    sizes: tuple[tuple[str, int], ...]
    design: str
    seed: int


@dataclass(frozen=True)
class PairResult:
    layer: str
    design: str
    best: Candidate | None
    samples: int
    seconds: float
    notes: tuple[str, ...] = ()
    error: str | None = None  # the pair could not be modelled (the search did not run)


_lock = threading.Lock()
_spaces: dict[tuple, object] = {}  # compiled spaces and loop maps, per job
_kernel_files: dict[str, Path] = {}


def kernel_file(job: Job) -> Path:
    """The kernel as a file on this machine: the user's own file when it holds the same text."""
    digest = hashlib.sha1(job.kernel_text.encode()).hexdigest()
    with _lock:
        if digest not in _kernel_files:
            path = Path(job.kernel_path)
            try:
                same = path.is_file() and path.read_text() == job.kernel_text
            except OSError:
                same = False
            if not same:
                folder = Path(tempfile.gettempdir()) / f"systolic-network-{os.getpid()}-{digest[:12]}"
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / Path(job.kernel_path).name
                path.write_text(job.kernel_text)
            _kernel_files[digest] = path
        return _kernel_files[digest]


def _once(key: tuple, build):
    """What `build()` gives, built once per process and key (built outside the lock: compiling is slow)."""
    with _lock:
        found = _spaces.get(key)
    if found is None:
        found = build()
        with _lock:
            _spaces[key] = found
    return found


def reference_space(job: Job) -> DesignSpace:
    return _once(("envelope", job.kernel_text, job.defines, job.envelope),
                 lambda: envelope_space(kernel_file(job), dict(job.envelope), defines=job.defines))


def sized_space(job: Job, sizes: dict[str, int]) -> DesignSpace:
    """The network's designs remade at these sizes (a layer's, or a layer padded to a tile)."""
    return _once(("layer", job.kernel_text, job.defines, job.envelope, tuple(sorted(sizes.items()))),
                 lambda: layer_space(kernel_file(job), reference_space(job), sizes, defines=job.defines))


def loop_define_map(job: Job) -> dict[str, str]:
    """Band loop -> the define that is its extent (see designs.loop_defines), once per job."""
    return _once(("loops", job.kernel_text, job.defines, job.envelope),
                 lambda: loop_defines(kernel_file(job), dict(job.envelope), defines=job.defines))


def warm_up(method: str) -> None:
    """Imports and compiled kernels, before a budget starts (cheap when repeated)."""
    pareto.warm_up()
    strategy_class(method).warm_up()


def sized_model(job: Job, sizes: dict[str, int], design_id: str) -> PerformanceModel:
    """The design's model at these sizes: the design's shared model (engine/network/shared_model.py,
    built once per worker with the sizes as symbols) bound to them, so a pair builds no model. The
    shared model comes from the on-disk model cache (engine/models/cache.py) when another worker or
    an earlier run built it."""
    space = sized_space(job, sizes)
    design = space.design(design_id)
    return shared_model(job, space, design).bind(design)


def shared_model(job: Job, space: DesignSpace, design) -> SharedModel:
    key = ("shared", job.kernel_text, job.defines, job.envelope, job.device, structure_key(design))
    with _lock:
        found = _spaces.get(key)
    if found is not None:
        return found
    device = job.load_device()
    if os.environ.get(NO_CACHE_VARIABLE):
        found = SharedModel(space, design, device)
    else:
        from engine.models.cache import ModelCache, model_key  # noqa: PLC0415 (cloudpickle: only here)
        defines = dict(d.partition("=")[::2] for d in job.defines)
        defines["__network_shared__"] = repr(structure_key(design))
        entry = model_key(job.kernel_text, defines, {}, device, design.id)
        cache = ModelCache()
        found = _load_shared(cache, entry)
        if found is None:
            found = SharedModel(space, design, device)
            try:
                cache.store(entry, found)
            except OSError:  # a read-only or full disk: the model still works, it is just not kept
                pass
    with _lock:
        _spaces[key] = found
    return found


def _load_shared(cache, entry: str) -> SharedModel | None:
    """A cached SharedModel (ModelCache's checks, for this type: it keeps PerformanceModels)."""
    import pickle  # noqa: PLC0415

    from engine.models.cache import HEADER  # noqa: PLC0415 (cloudpickle: only here)
    path = cache.path(entry)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data[len(HEADER) + 65:]).hexdigest().encode()
    if not data.startswith(HEADER) or data[len(HEADER):len(HEADER) + 64] != digest:
        return None
    try:
        found = pickle.loads(data[len(HEADER) + 65:])
    except Exception:  # noqa: BLE001 (a damaged entry is rebuilt)
        return None
    return found if isinstance(found, SharedModel) else None


NO_CACHE_VARIABLE = "SYSTOLIC_STUDIO_NETWORK_NO_CACHE"  # set (to anything): workers build their shared models


def run_pair(task: PairTask) -> PairResult:
    job = task.job
    cls = strategy_class(job.method)
    warm_up(job.method)
    started = time.perf_counter()
    try:
        model = sized_model(job, dict(task.sizes), task.design)
    except EngineError as error:
        return PairResult(task.layer, task.design, None, 0, time.perf_counter() - started, (), str(error))
    seconds = job.seconds
    if seconds is not None:
        seconds = max(0.05, seconds - (time.perf_counter() - started))
    search = SearchSpace(model)
    strategy = cls(search, seed=task.seed)  # an MP seed is bounded by nodes: HybridSearch.start
    result = SearchRun(search, strategy, seconds=seconds, samples=job.samples).run()
    return PairResult(task.layer, task.design, result.best, result.samples, time.perf_counter() - started,
                      result.notes)


def prepare_worker(job: Job) -> None:
    """A worker's one-off start for a job (imports, compiled kernels, the envelope's designs), so that
    a benchmark can time the searches apart from it (Client.run calls it on every worker)."""
    warm_up(job.method)
    reference_space(job)
