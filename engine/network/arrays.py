"""A finished network run + N -> MultiArrayAnswer: N arrays of the project's designs pipelining the
network on one device (multi_array.py's planner, with each (stage, share) optimised by the tuner as
Dask tasks), compared with the run's best single array; and each array exported (its stage's sizes)
with a C simulation of a one-tile slice of it.

A stage at a share is optimised for each candidate design (the run's K best by geometric mean) with
optimise_single_array at that share of every resource, seeded with the design's best configuration
of each of the stage's layers and the run's single-array configuration; the fastest design wins.
Budget per (stage, share, design): the single array's budget x the stage's fraction of the layers
(at least 1 s, or 1 sample). The operations of a layer are read back from its best pair, as the
answers do, so N arrays and the single array are measured alike: network GOP/s = operations of one
image / its interval (the slowest stage; for one array, the network latency).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from engine.errors import EngineError
from engine.models.device import RESOURCE_NAMES, load_device
from engine.network.answers import NetworkAnswers
from engine.network.multi_array import ArrayResult, MultiArrayPlan, plan_pipeline
from engine.network.runner import job_of, layers_of
from engine.network.single_array import SingleArrayResult, SingleTask, layer_model
from engine.network.store import NetworkRun, NetworkStore
from engine.network.task import loop_define_map, reference_space, sized_space

Submit = Callable[[list[SingleTask]], list[SingleArrayResult]]
MAX_ARRAYS = 256  # arrays on one device (each a stage of at least one layer with its own PEs and buffers)
MAX_ARRAY_COUNTS = 32  # counts of arrays planned in one run (each a planning search)


@dataclass(frozen=True)
class MultiArrayOptions:
    designs: int = 3  # candidate designs per array: the run's best by geometric mean
    seconds: float | None = None  # the single array's budget, split by stage (default: the run's rule)
    samples: int | None = None
    steps: int | None = None  # share grid: multiples of 1/steps (default 4 N)
    rounds: int = 6


@dataclass(frozen=True)
class MultiArrayAnswer:
    arrays: int
    plan: MultiArrayPlan
    network_gops: float
    single_gops: float | None  # the run's best single array
    fits: bool  # every array together within the device (the model's fits on the summed resources)
    used: dict[str, float]
    budget: dict[str, float]

    @property
    def speedup(self) -> float | None:
        return self.network_gops / self.single_gops if self.single_gops else None

    def to_json(self) -> dict:
        return {"arrays": self.arrays, "interval_cycles": self.plan.interval_cycles,
                "network_gops": self.network_gops, "single_array_gops": self.single_gops,
                "speedup": self.speedup, "fits": self.fits, "used": self.used, "budget": self.budget,
                "evaluations": self.plan.evaluations, "rounds": self.plan.rounds,
                "history": list(self.plan.history),
                "stages": [{"layers": list(a.layers), "share": a.share, "design": a.result.design,
                            "params": a.result.params, "latency_cycles": a.result.latency,
                            "layer_latency_cycles": dict(zip(a.layers, a.result.layer_latency)),
                            "resources": a.result.resources} for a in self.plan.arrays]}


def layer_operations(answers: NetworkAnswers, clock_mhz: float) -> list[float]:
    """Each layer's operations, read back from its best pair (throughput x time)."""
    ops = []
    for layer in answers.layers:
        if layer.best_gops is None:
            raise EngineError(f"layer {layer.name} has no feasible design in this run: no pipeline can hold it")
        ops.append(layer.best_gops * 1e9 * layer.best_latency_cycles / (clock_mhz * 1e6))
    return ops


def plan_arrays(run: NetworkRun, store: NetworkStore, answers: NetworkAnswers, n: int, submit: Submit,
                options: MultiArrayOptions = MultiArrayOptions()) -> MultiArrayAnswer:
    job = job_of(run)
    layers = layers_of(run)
    if not 1 <= n <= len(layers):
        raise EngineError(f"--arrays {n}: the network has {len(layers)} layers; give 1 to {len(layers)} arrays")
    device = load_device(run.device, clock_mhz=run.clock_mhz)
    ops = layer_operations(answers, device.clock_mhz)
    chosen = [d.id for d in answers.designs if d.geomean_share > 0][:max(1, options.designs)]
    if not chosen:
        raise EngineError("no design is feasible on every layer of this run: nothing to build arrays from")
    pairs = {(p.layer, p.design): p for p in store.pairs(run.id)}
    singles = {s.design: s for s in store.singles(run.id) if s.params is not None}
    position = {d.id: k for k, d in enumerate(reference_space(job).designs)}
    seconds, samples = _budget(run, options, len(layers))

    def evaluate(requests):
        tasks = []
        for (first, last), share in requests:
            stage = layers[first:last]
            fraction = (last - first) / len(layers)
            for design in chosen:
                seeds = [tuple(sorted(p.best.params.items())) for l in stage
                         if (p := pairs.get((l.name, design))) is not None and p.best is not None]
                if design in singles:
                    seeds.append(tuple(sorted(singles[design].params.items())))
                tasks.append(SingleTask(
                    job, design, tuple((l.name, tuple(l.sizes.items())) for l in stage),
                    None if seconds is None else max(1.0, seconds * fraction),
                    None if samples is None else max(1, int(samples * fraction)),
                    run.seed + position[design], tuple(seeds), share))
        results = submit(tasks)
        out = []
        for k, ((first, last), _share) in enumerate(requests):
            found = [r for r in results[k * len(chosen):(k + 1) * len(chosen)]
                     if r.params is not None and r.network_latency_cycles is not None]
            if not found:
                out.append(ArrayResult(math.inf, tuple(math.inf for _ in range(first, last))))
                continue
            best = min(found, key=lambda r: r.network_latency_cycles)
            out.append(ArrayResult(best.network_latency_cycles,
                                   tuple(best.layer_latency_cycles[l.name] for l in layers[first:last]),
                                   best.design, dict(best.params), dict(best.resources or {})))
        return out

    plan = plan_pipeline([l.name for l in layers], ops, n, evaluate, steps=options.steps, rounds=options.rounds)
    used = plan.used
    fits = math.isfinite(plan.interval_cycles) and bool(
        layer_model(job, None, chosen[0], device).fits({r: used[r] for r in RESOURCE_NAMES}))
    gops = sum(ops) / (plan.interval_cycles / (device.clock_mhz * 1e6)) / 1e9 if math.isfinite(plan.interval_cycles) else 0.0
    single = answers.single_array.network_gops if answers.single_array else None
    return MultiArrayAnswer(n, plan, gops, single, fits, used, {r: device.budget(r) for r in RESOURCE_NAMES})


def _budget(run: NetworkRun, options: MultiArrayOptions, layers: int) -> tuple[float | None, int | None]:
    """The single array's budget for the whole network (runner._single_tasks' rule unless given)."""
    if options.seconds is not None or options.samples is not None:
        return options.seconds, options.samples
    if run.seconds is not None:
        return max(2.0, 0.5 * layers * run.seconds), None
    return None, max(1, layers * (run.samples or 1) // 2)


def local_submit(tasks: list[SingleTask]) -> list[SingleArrayResult]:
    """Run the tasks here, one after another (tests; no cluster)."""
    from engine.network.single_array import optimise_single_array  # noqa: PLC0415
    return [optimise_single_array(t) for t in tasks]


def cluster_submit(client) -> Submit:
    """Run the tasks as Dask tasks on `client`, results in the tasks' order."""
    from engine.network.single_array import optimise_single_array  # noqa: PLC0415

    def submit(tasks: list[SingleTask]) -> list[SingleArrayResult]:
        return client.gather(client.map(optimise_single_array, tasks, pure=False)) if tasks else []
    return submit


def slice_sizes(stage_sizes: dict[str, int], params: dict[str, int], define_of: dict[str, str],
                whole_below: int = 1) -> dict[str, int]:
    """A one-tile problem of the array (C simulation in seconds): each loop's extent cut to its tile,
    except loops shorter than `whole_below` tiles, kept whole."""
    sizes = dict(stage_sizes)
    for loop, name in define_of.items():
        tile = params[f"{loop}_t1"]
        if sizes[name] >= whole_below * tile:
            sizes[name] = min(sizes[name], tile)
    return sizes


def _array_space(job, envelope: dict[str, int], params: dict[str, int], define_of: dict[str, str]):
    """The sizes an array is exported at: its stage's largest layer, each loop grown to its tile when
    the tile is larger (the padding the search's model computes); when that kernel has no systolic
    array (a 1-tap window padded to 2), the stage's sizes with such tiles cut to the loop (and their
    latency-hiding factors to a divisor), the same computation on the stage's layers."""
    padded = dict(envelope)
    for loop, name in define_of.items():
        padded[name] = max(padded[name], params[f"{loop}_t1"])
    try:
        return padded, sized_space(job, padded), dict(params)
    except EngineError:
        pass
    clamped = dict(params)
    for loop, name in define_of.items():
        t1 = min(clamped[f"{loop}_t1"], envelope[name])
        clamped[f"{loop}_t1"] = t1
        for key in [k for k in clamped if k.startswith(f"{loop}_t") and k != f"{loop}_t1"]:
            while t1 % clamped[key]:
                clamped[key] = clamped[key] // 2 if clamped[key] & (clamped[key] - 1) == 0 else clamped[key] - 1
    return dict(envelope), sized_space(job, envelope), clamped


def _slice_space(job, envelope: dict[str, int], params: dict[str, int], define_of: dict[str, str]):
    """The smallest slice the kernel compiles at: every loop cut to its tile; else only loops of two
    tiles or more (a short loop cut to a tile may leave the kernel without a systolic array, e.g. a
    3-tap window cut to 2); else, loop by loop from the longest, each cut kept where the kernel still
    compiles (a stage mixing 7x7 and 1x1 windows)."""
    tried = []
    for sizes in (slice_sizes(envelope, params, define_of), slice_sizes(envelope, params, define_of, 2)):
        if sizes in tried:
            continue
        tried.append(sizes)
        try:
            return sizes, sized_space(job, sizes)
        except EngineError:
            continue
    sizes, space = dict(envelope), None
    for loop, name in sorted(define_of.items(), key=lambda item: -envelope[item[1]]):
        cut = min(sizes[name], params[f"{loop}_t1"])
        if cut == sizes[name]:
            continue
        trial = {**sizes, name: cut}
        try:
            space = sized_space(job, trial)
            sizes = trial
        except EngineError:
            continue
    return sizes, space if space is not None else sized_space(job, sizes)


def export_arrays(run: NetworkRun, answer: MultiArrayAnswer, out: Path, *, csim: bool = True,
                  log: Callable[[str], None] = print) -> list[dict]:
    """Each array as a Vitis project at its stage's envelope (array-K, floorplanned as `systolic export`
    does), and, with `csim`, the same design and configuration at a one-tile slice (array-K-slice,
    not floorplanned: a slice is simulated, never built) built and run by the C simulation.
    Returns one record per array: its folders and the simulation's verdict."""
    from engine.csim import run_csim  # noqa: PLC0415
    from engine.export.project import export_project  # noqa: PLC0415
    job = job_of(run)
    layers = {l.name: l for l in layers_of(run)}
    define_of = loop_define_map(job)
    device = load_device(run.device, clock_mhz=run.clock_mhz)
    records = []
    for k, array in enumerate(answer.plan.arrays, start=1):
        if array.result.design is None:
            records.append({"array": k, "exported": None, "csim": "nothing fits this share", "csim_passed": False})
            continue
        envelope: dict[str, int] = {}
        for name in array.layers:
            for key, value in layers[name].sizes.items():
                envelope[key] = max(envelope.get(key, 0), value)
        share = load_device(run.device, usable_ratio=device.usable_ratio * array.share, clock_mhz=run.clock_mhz)
        record = {"array": k, "design": array.result.design, "share": array.share}
        try:
            sizes, space, params = _array_space(job, envelope, array.result.params, define_of)
            folder = export_project(space, space.design(array.result.design), params,
                                    out / f"array-{k}", device=share, force=True)
            record.update({"sizes": sizes, "params": params, "exported": str(folder)})
            if csim:
                small, small_space = _slice_space(job, sizes, params, define_of)
                sliced = export_project(small_space, small_space.design(array.result.design), params,
                                        out / f"array-{k}-slice", device=share, force=True, allow_over_budget=True,
                                        floorplan="none")
                result = run_csim(sliced)
                record.update({"slice": small, "slice_exported": str(sliced), "csim": result.summary,
                               "csim_passed": result.passed})
        except EngineError as error:
            record.update({"exported": record.get("exported"), "csim": f"FAIL: {error}", "csim_passed": False})
        log(f"array {k} ({array.result.design}, slice "
            f"{' '.join(f'{a}={b}' for a, b in record.get('slice', {}).items())}): {record.get('csim')}")
        records.append(record)
    return records
