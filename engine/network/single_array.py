"""One design + a network -> SingleArrayResult: the best single array, one configuration for every layer.

The hardware is built once: one design and one configuration (tiling, latency hiding, SIMD). Each
layer runs on it padded to the configuration's tiles; its latency is the layer's model at that
configuration. The configuration minimises the network's latency (the sum over layers) with every
layer within the device budget.

Padding. Non-divisor tiling already pads a loop of extent N to a multiple of its tile t1; a tile
larger than the layer (t1 > N) pads it to one tile, which is what the layer's model computes for
t1 > N (ceil(N / t1) = 1 tile of t1). The search uses that (fast: one compiled model per layer); the
chosen configuration is then re-evaluated exactly, each layer's model rebuilt at the padded sizes
max(N, t1), and those are the numbers reported (`exact_check` records the largest difference).

The search is the project's tuner (`engine/search`) on NetworkSearchSpace, a SearchSpace whose
evaluation is the network's; it is seeded by each layer's best configuration of the design.

A task may give the array a share of the device (`share`, a fraction of every resource's budget):
the multi-array planner (multi_array.py) optimises each of its arrays this way. Layer models are
kept per worker process (`layer_model`), so the planner's many tasks build each one once.
"""
from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, replace

import numpy as np

from engine.compiler.design import Design
from engine.errors import EngineError
from engine.models.constraints import feasible_mask
from engine.models.device import RESOURCE_NAMES, Device
from engine.models.evaluate import FastEvaluation, PerformanceModel
from engine.network.task import Job, loop_define_map, reference_space, sized_model, warm_up
from engine.search.methods import strategy_class
from engine.search.run import SearchRun
from engine.search.space import Batch, SearchSpace


@dataclass(frozen=True)
class SingleTask:
    job: Job
    design: str
    layers: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # (name, sizes) in network order
    seconds: float | None
    samples: int | None
    seed: int
    seeds: tuple[tuple[tuple[str, int], ...], ...] = ()  # configurations to try first (each layer's best)
    share: float = 1.0  # the fraction of the device's budget (every resource) this array may use


@dataclass(frozen=True)
class SingleArrayResult:
    design: str
    params: dict[str, int] | None  # None: no configuration fits every layer
    network_latency_cycles: float | None
    layer_latency_cycles: dict[str, float]
    dsp: float | None
    bram18k: float | None
    samples: int
    seconds: float
    exact_check: float | None = None  # largest relative difference, fast padded model vs rebuilt model
    notes: tuple[str, ...] = ()
    resources: dict[str, float] | None = None  # every resource, the largest over the layers (RESOURCE_NAMES)


class NetworkSearchSpace(SearchSpace):
    """The design at the network's envelope (its bounds, its model for the MP seed), evaluated on
    every layer: objective and latency are the network's, DSP and BRAM the largest over layers."""

    def __init__(self, envelope_model: PerformanceModel, layer_models: list[PerformanceModel],
                 counts: list[int] | None = None):
        """`counts[k]`: how many layers of the network have layer_models[k]'s sizes."""
        super().__init__(envelope_model)
        self.layer_models = layer_models
        self.counts = counts or [1] * len(layer_models)
        self.operations = sum(n * m.symbolic.operations for n, m in zip(self.counts, layer_models))  # throughput(): the network's

    def per_layer(self, arrays: dict[str, np.ndarray]) -> list[FastEvaluation]:
        return [m.evaluate_fast(arrays) for m in self.layer_models]

    def evaluate(self, configs) -> Batch:
        if isinstance(configs, list):
            arrays = {n: np.fromiter((c[n] for c in configs), dtype=np.int64, count=len(configs)) for n in self.names}
        else:
            arrays = {n: np.asarray(configs[n], dtype=np.int64) for n in self.names}
        per_layer = self.per_layer(arrays)
        latency = np.sum([n * e.latency for n, e in zip(self.counts, per_layer)], axis=0)
        dsp = np.max([e.dsp for e in per_layer], axis=0)
        bram = np.max([e.bram for e in per_layer], axis=0)
        # the one array fits when it fits at every layer's sizes (the model's `fits`, every resource)
        fits = np.all([e.fits for e in per_layer], axis=0)
        ok = feasible_mask(self.design, arrays) & fits
        return Batch(latency, dsp, bram, ok, latency)


_models_lock = threading.Lock()
_models: dict[tuple, PerformanceModel] = {}


def share_device(device: Device, share: float) -> Device:
    """The device with `share` of every resource's budget (the usable ratio scaled)."""
    return replace(device, usable_ratio=device.usable_ratio * share)


def layer_model(job: Job, sizes: dict[str, int] | None, design: str, device: Device) -> PerformanceModel:
    """The design's model at these sizes (None: the envelope's, compiled with the network's designs), judged against `device` (built once per process and job;
    a share of the device only changes the budget `fits` reads, so the built model is shared)."""
    key = (job.kernel_text, job.defines, job.envelope, None if sizes is None else tuple(sorted(sizes.items())), design, job.device)
    with _models_lock:
        model = _models.get(key)
    if model is None:
        if sizes is None:
            space = reference_space(job)
            model = PerformanceModel(space, space.design(design), job.load_device())
        else:  # the design's shared model bound to these sizes (engine/network/shared_model.py): no build
            model = sized_model(job, dict(sizes), design)
        with _models_lock:
            _models[key] = model
    if model.device == device:
        return model
    judged = copy.copy(model)
    judged.device = device
    return judged


def padded_sizes(design: Design, sizes: dict[str, int], params: dict[str, int], define_of: dict[str, str]) -> dict[str, int]:
    """A layer's sizes with every loop grown to its tile when the tile is larger."""
    padded = dict(sizes)
    for loop, name in define_of.items():
        padded[name] = max(padded[name], params[f"{loop}_t1"])
    return padded


def optimise_single_array(task: SingleTask) -> SingleArrayResult:
    job = task.job
    warm_up(job.method)
    started = time.perf_counter()
    device = share_device(job.load_device(), task.share)
    reference = reference_space(job)
    envelope_design = reference.design(task.design)
    define_of = loop_define_map(job)
    notes: list[str] = []
    try:
        unique = list(dict.fromkeys(sizes for _name, sizes in task.layers))  # repeated layers: one model
        layer_models = [layer_model(job, dict(sizes), task.design, device) for sizes in unique]
        counts = [sum(1 for _name, sizes in task.layers if sizes == u) for u in unique]
        space = NetworkSearchSpace(layer_model(job, None, task.design, device), layer_models, counts)
    except EngineError as error:
        return SingleArrayResult(task.design, None, None, {}, None, None, 0, time.perf_counter() - started,
                                 notes=(str(error),))
    best_params, best_latency = _best_seed(space, task.seeds)
    seconds = task.seconds
    if seconds is not None:
        seconds = max(0.05, seconds - (time.perf_counter() - started))
    cls = strategy_class(job.method)
    strategy = cls(space, seed=task.seed)
    result = SearchRun(space, strategy, seconds=seconds, samples=task.samples).run()
    notes += result.notes
    if result.best is not None and result.best.latency_cycles < best_latency:
        best_params, best_latency = dict(result.best.params), result.best.latency_cycles
    samples = result.samples + len(task.seeds)
    if best_params is None:
        return SingleArrayResult(task.design, None, None, {}, None, None, samples, time.perf_counter() - started,
                                 notes=tuple(notes) + ("no configuration fits the device on every layer",))
    layer_latency, resources, check = _exact(job, task, envelope_design, define_of, best_params, space, device)
    return SingleArrayResult(task.design, best_params, float(sum(layer_latency.values())), layer_latency,
                             resources["DSP"], resources["BRAM18K"], samples, time.perf_counter() - started, check,
                             tuple(notes), resources)


def _best_seed(space: NetworkSearchSpace, seeds) -> tuple[dict | None, float]:
    configs = [dict(s) for s in seeds if set(dict(s)) == set(space.names)]
    if not configs:
        return None, np.inf
    fitness = space.evaluate(configs).fitness
    k = int(np.argmin(fitness))
    return (configs[k], float(fitness[k])) if np.isfinite(fitness[k]) else (None, np.inf)


def _exact(job: Job, task: SingleTask, design: Design, define_of: dict[str, str], params: dict[str, int],
           space: NetworkSearchSpace, device):
    """Each layer's latency from its model rebuilt at the padded sizes (only where padding applies),
    the largest use of every resource over the layers, and the largest fast-vs-rebuilt difference."""
    arrays = {n: np.asarray([v]) for n, v in params.items()}
    latency: dict[str, float] = {}
    resources = {r: 0.0 for r in RESOURCE_NAMES}
    worst = 0.0
    by_sizes: dict[tuple, tuple] = {}
    for name, sizes in task.layers:
        padded = padded_sizes(design, dict(sizes), params, define_of)
        key = tuple(sorted(padded.items()))
        if key not in by_sizes:
            model = layer_model(job, dict(sizes), task.design, device)
            fast = model.evaluate_resources(arrays)
            try:
                exact = layer_model(job, padded, task.design, device).evaluate_resources(arrays)
            except EngineError:  # the padded kernel has no systolic array (a 1-tap window padded to 2):
                exact = fast     # the layer's own model, which computes the padded tile, stands
            if padded != dict(sizes):
                e, f = float(np.ravel(exact[0])[0]), float(np.ravel(fast[0])[0])
                worst = max(worst, abs(e - f) / e)
            by_sizes[key] = exact
        lat, used = by_sizes[key]
        latency[name] = float(np.ravel(lat)[0])
        resources = {r: max(resources[r], float(np.ravel(used[r])[0])) for r in RESOURCE_NAMES}
    return latency, resources, worst
