"""A stored network run + a Dask client -> every (layer, design) search and the single-array
optimisations, each stored as it finishes; returns the answers.

The searches are Dask tasks (engine/network/task.py: run_pair; single_array.py: optimise_single_array).
By default they run on a LocalCluster with one single-threaded worker process per core (the searches
hold the GIL); `Cluster(scheduler=...)` uses an existing cluster instead, unchanged. Pairs already in
the store are not submitted again, which is how `--resume` continues a killed run. Each pair's seed is
the run's seed plus the design's position, so a run gives the same tasks wherever it runs.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from engine.compiler.design import Design
from engine.errors import EngineError
from engine.models.device import load_device
from engine.network.answers import NetworkAnswers, network_answers
from engine.network.designs import network_designs
from engine.network.single_array import SingleTask, optimise_single_array
from engine.network.store import NetworkRun, NetworkStore
from engine.network.task import Job, PairResult, PairTask, reference_space, run_pair
from engine.network.workload import Layer, Network

CONNECT_TIMEOUT = 10.0  # seconds a scheduler has to answer (and to have a worker)
_ADDRESS = re.compile(r"^(tcp|tls|ws|wss)://[^\s:/]+:\d+$")


class NetworkError(EngineError):
    """The cluster cannot be reached or used."""


class Cluster:
    """A Dask client on a new LocalCluster (one single-threaded worker per core, or `workers`) or on
    the scheduler at `scheduler` (tcp://HOST:PORT)."""

    def __init__(self, scheduler: str | None = None, workers: int | None = None):
        from distributed import Client, LocalCluster  # noqa: PLC0415 (heavy: only the network command needs it)
        self.cluster = None
        if scheduler is not None:
            check_scheduler_address(scheduler)
            try:
                _ask_identity(scheduler, CONNECT_TIMEOUT)  # a socket that accepts but never speaks hangs Client
                self.client = Client(scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as error:
                raise NetworkError(f"scheduler {scheduler} did not answer within {CONNECT_TIMEOUT:g} s "
                                   f"({_first_line(error)})") from None
            try:
                self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError):
                self.client.close()
                raise NetworkError(f"scheduler {scheduler} has no worker (none joined within "
                                   f"{CONNECT_TIMEOUT:g} s)") from None
        else:
            count = workers or os.cpu_count() or 1
            # the worker processes inherit an ignored SIGINT: Ctrl-C stops the run through its cancel
            # flag, not by killing workers mid-task (and printing their tracebacks)
            main = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:
                self.cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                            dashboard_address=":0", silence_logs=logging.ERROR)
            finally:
                if main:
                    signal.signal(signal.SIGINT, previous)
            self.client = Client(self.cluster)

    @property
    def dashboard(self) -> str | None:
        try:
            return self.client.dashboard_link
        except Exception:  # noqa: BLE001 (no dashboard on this scheduler: nothing to print)
            return None

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_scheduler_address(address: str, option: str = "--scheduler") -> str:
    """A Dask scheduler address, tcp://HOST:PORT (or tls://, ws://, wss://), checked before any work."""
    if not _ADDRESS.match(address):
        raise NetworkError(f"{option}: scheduler address {address!r}: expected tcp://HOST:PORT (a Dask scheduler)")
    return address


def _ask_identity(address: str, timeout: float) -> dict:
    """The scheduler's identity, or TimeoutError when it does not answer within `timeout` seconds."""
    from distributed.comm import connect  # noqa: PLC0415

    async def ask():
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(ask(), timeout)

    try:
        return asyncio.run(bounded())
    except asyncio.TimeoutError:
        raise TimeoutError(f"no reply after {timeout:g} s") from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


@dataclass(frozen=True)
class Event:
    """Progress for a live line: pairs done of total (stored ones included), the best pair so far,
    the estimated seconds left, and the single-array phase."""

    done: int
    total: int
    best: PairResult | None
    eta: float | None
    singles_done: int = 0
    singles_total: int = 0


@dataclass(frozen=True)
class SingleArrayOptions:
    designs: int = 3  # the best designs by geometric mean optimised as the single array
    seconds: float | None = None  # per design; default: half the layers' pair budget
    samples: int | None = None


def job_of(run: NetworkRun) -> Job:
    envelope: dict[str, int] = {}
    for layer in run.workload:
        for name, value in layer["sizes"].items():
            envelope[name] = max(envelope.get(name, 0), value)
    return Job(run.kernel_path, run.kernel_text, tuple(run.defines), tuple(envelope.items()), run.device,
               run.method, run.seconds, run.samples, run.clock_mhz)


def layers_of(run: NetworkRun) -> tuple[Layer, ...]:
    return tuple(Layer(l["name"], dict(l["sizes"]), tuple(l.get("tags", ()))) for l in run.workload)


def designs_of(run: NetworkRun) -> tuple[Design, ...]:
    """The network's designs (compiled at its envelope), or the ones the run was restricted to."""
    designs = reference_space(job_of(run)).designs
    chosen = run.options.get("designs")
    return tuple(d for d in designs if d.id in chosen) if chosen else designs


def pair_tasks(run: NetworkRun) -> list[PairTask]:
    """Every (layer, design) task of the run, layer by layer; the seed is run seed + the design's
    position among all the network's designs (so restricting the designs does not change a pair)."""
    job = job_of(run)
    position = {d.id: n for n, d in enumerate(reference_space(job).designs)}
    return [PairTask(job, layer.name, tuple(layer.sizes.items()), design.id, run.seed + position[design.id])
            for layer in layers_of(run) for design in designs_of(run)]


def execute(run: NetworkRun, store: NetworkStore, cluster: Cluster, *,
            single: SingleArrayOptions = SingleArrayOptions(), on_event: Callable[[Event], None] | None = None,
            cancel: threading.Event | None = None) -> tuple[NetworkAnswers, str]:
    """Run the pairs not stored yet, then the single-array optimisations; returns (answers, status)."""
    cancel = cancel or threading.Event()
    on_event = on_event or (lambda _e: None)
    tasks = pair_tasks(run)
    stored = {(p.layer, p.design): p for p in store.pairs(run.id)}
    todo = [t for t in tasks if (t.layer, t.design) not in stored]
    state = {"best": _best(stored.values()), "new": 0}
    started = time.monotonic()
    on_event(Event(len(stored), len(tasks), state["best"], None))

    # layers of the same sizes (ResNet50's repeated blocks) share one search: the same task, the same result
    groups: dict[tuple, list[str]] = {}
    for t in todo:
        groups.setdefault((t.sizes, t.design), []).append(t.layer)
    unique = [t for t in todo if groups[(t.sizes, t.design)][0] == t.layer]

    def pair_done(result: PairResult) -> None:
        task_sizes = next(t.sizes for t in unique if t.layer == result.layer and t.design == result.design)
        copies = [replace(result, layer=layer) for layer in groups[(task_sizes, result.design)]]
        store.add_pairs(run.id, copies)  # one transaction: a kill never leaves half a group
        stored.update({(c.layer, c.design): c for c in copies})
        state["new"] += 1
        state["best"] = _best([state["best"], result])
        left = sum(1 for t in unique if (t.layer, t.design) not in stored)
        on_event(Event(len(stored), len(tasks), state["best"], (time.monotonic() - started) / state["new"] * left))

    if not _run_tasks(cluster, run_pair, unique, [_key("pair", run.id, t.layer, t.design) for t in unique],
                      pair_done, cancel):
        return run_answers(run, store), "interrupted"

    answers = run_answers(run, store)
    singles = _single_tasks(run, store, answers, single)
    done_singles = len(store.singles(run.id))
    total_singles = done_singles + len(singles)
    on_event(Event(len(stored), len(tasks), state["best"], 0.0, done_singles, total_singles))

    def single_done(result) -> None:
        nonlocal done_singles
        store.add_single(run.id, result)
        done_singles += 1
        on_event(Event(len(stored), len(tasks), state["best"], 0.0, done_singles, total_singles))

    if not _run_tasks(cluster, optimise_single_array, singles, [_key("single", run.id, t.design) for t in singles],
                      single_done, cancel):
        return run_answers(run, store), "interrupted"
    return run_answers(run, store), "finished"


def _run_tasks(cluster: Cluster, function, tasks: list, keys: list[str], on_result, cancel: threading.Event) -> bool:
    """Submit the tasks, hand each result over as it arrives; False when cancelled (checked twice a
    second, so Ctrl-C is prompt even while every worker is busy)."""
    from distributed import wait  # noqa: PLC0415
    if not tasks:
        return not cancel.is_set()
    futures = [cluster.client.submit(function, t, key=k, pure=False) for t, k in zip(tasks, keys)]
    pending = set(futures)
    try:
        while pending:
            if cancel.is_set():
                return False
            try:
                done, pending = wait(pending, timeout=0.5, return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue
            for future in sorted(done, key=futures.index):
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 (a worker died or the task failed: say which)
                    if cancel.wait(0.5):  # Ctrl-C reaches a local cluster's workers too: that is a stop
                        return False
                    raise NetworkError(f"task {future.key} failed on the cluster: {_first_line(error)} "
                                       "(finished pairs are stored; --resume continues)") from None
                on_result(result)
        return not cancel.is_set()
    finally:
        unfinished = [f for f in futures if not f.done()]
        if unfinished:
            cluster.client.cancel(unfinished)


def _single_tasks(run: NetworkRun, store: NetworkStore, answers: NetworkAnswers,
                  options: SingleArrayOptions) -> list[SingleTask]:
    """The best designs by geometric mean, seeded with each layer's best configuration of the design."""
    done = {s.design for s in store.singles(run.id)}
    chosen = [d.id for d in answers.designs if d.geomean_share > 0][:options.designs]
    pairs = {(p.layer, p.design): p for p in store.pairs(run.id)}
    layers = layers_of(run)
    seconds, samples = options.seconds, options.samples
    if seconds is None and samples is None:
        if run.seconds is not None:
            seconds = max(2.0, 0.5 * len(layers) * run.seconds)
        else:
            samples = max(1, len(layers) * (run.samples or 1) // 2)
    job = job_of(run)
    position = {d.id: n for n, d in enumerate(reference_space(job).designs)}
    tasks = []
    for design in chosen:
        if design in done:
            continue
        seeds = tuple(tuple(sorted(p.best.params.items())) for layer in layers
                      if (p := pairs.get((layer.name, design))) is not None and p.best is not None)
        tasks.append(SingleTask(job, design, tuple((l.name, tuple(l.sizes.items())) for l in layers),
                                seconds, samples, run.seed + position[design], seeds))
    return tasks


def run_answers(run: NetworkRun, store: NetworkStore) -> NetworkAnswers:
    """The answers from what a run has stored so far (a view can redraw them as pairs arrive)."""
    return network_answers(run.network, layers_of(run), designs_of(run), store.pairs(run.id), store.singles(run.id),
                           load_device(run.device, clock_mhz=run.clock_mhz).clock_mhz)


def _best(results) -> PairResult | None:
    found = [r for r in results if r is not None and r.best is not None]
    return max(found, key=lambda r: r.best.throughput_gops) if found else None


def _key(*parts) -> str:
    return "-".join(str(p) for p in parts) + f"-{os.getpid()}-{time.monotonic_ns()}"


def run_network(kernel_path: str | Path, network: Network, *, db: str | Path | None = None, designs=(),
                method: str = "hybrid", seconds: float | None = 1.0, samples: int | None = None, seed: int = 0,
                device: str = "u250", defines=(), scheduler: str | None = None, workers: int | None = None,
                single: SingleArrayOptions = SingleArrayOptions(),
                on_event: Callable[[Event], None] | None = None) -> tuple[NetworkRun, NetworkAnswers, str]:
    """The whole command as one call (the studies' way in): check, store, run on a cluster, answer."""
    checked = network_designs(kernel_path, network, defines=defines)
    ids = [checked.space.design(d).id for d in designs]
    with NetworkStore(db) as store, Cluster(scheduler, workers) as cluster:
        run_id = store.create(
            kernel_path=str(kernel_path), kernel_text=Path(kernel_path).read_text(), defines=list(defines),
            network=network.name, workload=[{"name": l.name, "tags": list(l.tags), "sizes": l.sizes}
                                            for l in network.layers],
            device=device, method=method, seconds=seconds, samples=samples, seed=seed,
            options={"network_path": network.path, "designs": ids})
        run = store.load(run_id)
        answers, status = execute(run, store, cluster, single=single, on_event=on_event)
        store.set_status(run_id, status)
        return store.load(run_id), answers, status
