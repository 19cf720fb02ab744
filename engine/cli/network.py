"""`systolic network KERNEL.c NETWORK.json`: search every (layer, design) pair of a network as Dask
tasks (a local cluster, or `--scheduler tcp://HOST:PORT`), store each result as it arrives, then
answer three questions, each a table, a CSV and a PNG: the best design per layer, the best single
dataflow (geometric mean over layers) and the best single array (one configuration for every layer).
`--resume RUN_ID` finishes an interrupted or killed run without redoing its stored pairs."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from engine.errors import EngineError
from engine.models.device import load_device
from engine.network.arrays import (MAX_ARRAY_COUNTS, MAX_ARRAYS, MultiArrayOptions, cluster_submit, export_arrays,
                                   plan_arrays)
from engine.network.designs import network_designs
from engine.network.report import arrays_report, text_report, write_arrays_csv, write_files
from engine.network.runner import Cluster, Event, SingleArrayOptions, execute, pair_tasks
from engine.network.store import NetworkStore
from engine.network.workload import load_network
from engine.search.methods import METHODS, strategy_class
from engine.cli.kernel_args import add_clock_argument
from engine.validation import bounded_int, positive_int, positive_seconds, read_text, seed, workers

HELP = "tune every design for every layer of a network (Dask), and find the best single array"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kernel", nargs="?", help="C kernel whose #defines the workload's sizes set (e.g. cnn.c)")
    parser.add_argument("network", nargs="?",
                        help="workload: Odyssey's JSON, a CSV, or a bundled name (vgg16, resnet50)")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                        help="override another #define (e.g. DATA_T=int16_t); layer sizes win")
    parser.add_argument("--design", action="append", default=[], metavar="ID",
                        help="only these designs (repeatable; default: every design of the kernel)")
    parser.add_argument("--method", default="hybrid", help=f"one of {', '.join(METHODS)} (default hybrid)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=positive_seconds, help="budget per (layer, design) pair (default 1 s)")
    budget.add_argument("--samples", type=positive_int, help="sample budget per pair (deterministic given the seed)")
    parser.add_argument("--seed", type=seed, default=0, help="pair seed = this + the design's position (0..2^63-1)")
    parser.add_argument("--device", default="u250")
    add_clock_argument(parser)
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="an existing Dask scheduler to use")
    parser.add_argument("--workers", type=workers,
                        help="local cluster: worker processes, 1..cores x 4 (default: one per core)")
    parser.add_argument("--single-designs", type=bounded_int(1000, "single-array designs", minimum=0), default=3,
                        metavar="K",
                        help="optimise the K best designs (by geometric mean) as the single array (default 3)")
    parser.add_argument("--single-seconds", type=positive_seconds, metavar="S",
                        help="budget per single-array design (default: half the layers x the pair budget)")
    parser.add_argument("--arrays", type=_array_counts, metavar="N",
                        help="also plan N arrays pipelining the network on the device (N, A-B or A,B,...; "
                             "see docs/network.md), compared with the best single array")
    parser.add_argument("--export-arrays", action="store_true",
                        help="with --arrays: export each array (DIR/arrays-N/array-K) and C-simulate a one-tile slice")
    parser.add_argument("--resume", type=positive_int, metavar="RUN_ID", help="finish a stored network run")
    parser.add_argument("--list", action="store_true", help="list the stored network runs")
    parser.add_argument("-o", "--out", type=Path, help="folder for the CSV and PNG files (default network-NAME-RUN)")
    parser.add_argument("--json", action="store_true", help="print the answers as JSON")
    parser.add_argument("--db", type=Path, help="run database (default: the user data folder)")


def run(args: argparse.Namespace) -> int:
    with NetworkStore(args.db) as store:
        if args.list:
            _list(store)
            return 0
        if args.resume is not None:
            run_id = args.resume
            stored = store.load(run_id)
            if args.kernel or args.network or args.clock is not None:
                raise EngineError("--resume takes the kernel, the network and the clock from the stored run; "
                                  "give none of them")
            owner = store.running_elsewhere(run_id)
            if owner is not None:
                raise EngineError(f"network run {run_id} is running (process {owner}); resume it once it has stopped")
        else:
            run_id = None
            stored = None
            _create_checks(args)
        _check_out(args.out)
        if args.export_arrays and not args.arrays:
            raise EngineError("--export-arrays needs --arrays N")
        with Cluster(args.scheduler, args.workers) as cluster:  # fails before anything is stored
            if stored is None:
                run_id = _create(store, args)
                stored = store.load(run_id)
            else:
                damaged = store.claim(run_id)  # this process now owns the run (its pid and heartbeat)
                if damaged:
                    _log(f"network run {run_id}: {damaged} damaged stored result(s) deleted, to be computed again")
            out = args.out or Path(f"network-{_file_safe(stored.network)}-{run_id}")
            _check_out(out)
            pairs = len(pair_tasks(stored))
            _log(f"network run {run_id}: {stored.network}, {len(stored.workload)} layers x "
                 f"{pairs // max(1, len(stored.workload))} designs = {pairs} pairs, {stored.method} "
                 + (f"{stored.seconds:g} s" if stored.seconds is not None else f"{stored.samples} samples")
                 + f" per pair, on {cluster.workers} workers")
            if cluster.dashboard:
                _log(f"dask dashboard: {cluster.dashboard}")
            line = _ProgressLine()
            cancel = threading.Event()
            # Ctrl-C, SIGTERM and SIGHUP stop the run the same way: stored as "interrupted"
            stops = [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
            previous = {s: signal.signal(s, lambda *_: cancel.set()) for s in stops}
            try:
                answers, status = execute(stored, store, cluster, on_event=line, cancel=cancel,
                                          single=SingleArrayOptions(args.single_designs, args.single_seconds))
            finally:
                for s, handler in previous.items():
                    signal.signal(s, handler)
                line.close()
            store.set_status(run_id, status)
            multi = _arrays(args, stored, store, answers, cluster, out) if args.arrays and status == "finished" else []
    files = write_files(answers, out)
    if args.json:
        extra = {"multi_array": [m.to_json() | {"exports": e} for m, e in multi]} if args.arrays else {}
        print(json.dumps({"run_id": run_id, "status": status, **answers.to_json(), **extra}, indent=2))
    else:
        print(text_report(answers), end="")
        if multi:
            print(arrays_report([m for m, _ in multi]), end="")
        print(f"{status}; stored as network run {run_id}; files: {', '.join(str(f) for f in files)}")
        if status == "interrupted":
            print(f"resume with: systolic network --resume {run_id}")
    return 130 if status == "interrupted" else 0


def _array_counts(text: str) -> tuple[int, ...]:
    """N, A-B or A,B,...: counts in 1..MAX_ARRAYS, at most MAX_ARRAY_COUNTS of them (checked before the
    range is built)."""
    expected = f"'{text}': expected a count of arrays (2), a range (2-4) or a list (2,3)"
    try:
        if "-" in text:
            low, high = (int(x) for x in text.split("-"))
            bounds = [low, high]
        else:
            bounds = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(expected) from None
    if not bounds or min(bounds) < 1:
        raise argparse.ArgumentTypeError(expected)
    if max(bounds) > MAX_ARRAYS:
        raise argparse.ArgumentTypeError(f"'{text}': at most {MAX_ARRAYS} arrays on one device, not {max(bounds):,}")
    count = bounds[1] - bounds[0] + 1 if "-" in text else len(bounds)
    if not 1 <= count <= MAX_ARRAY_COUNTS:
        raise argparse.ArgumentTypeError(f"'{text}': {count:,} counts of arrays; the limit is {MAX_ARRAY_COUNTS} "
                                         f"per run (each is a planning search)")
    return tuple(range(bounds[0], bounds[1] + 1)) if "-" in text else tuple(bounds)


def _arrays(args, stored, store, answers, cluster, out: Path) -> list:
    """Plan each count of arrays on the cluster; export and C-simulate them when asked."""
    found = []
    for n in args.arrays:
        _log(f"planning {n} arrays ...")
        answer = plan_arrays(stored, store, answers, n, cluster_submit(cluster.client),
                             MultiArrayOptions(designs=max(1, args.single_designs)))
        exports = export_arrays(stored, answer, out / f"arrays-{n}", log=_log) if args.export_arrays else []
        found.append((answer, exports))
    write_arrays_csv([m for m, _ in found], out)
    return found


def _create_checks(args) -> None:
    if not args.kernel or not args.network:
        raise EngineError("give a kernel and a network (systolic network KERNEL.c NETWORK.json), "
                          "or --resume RUN_ID, or --list")
    strategy_class(args.method)
    load_device(args.device, clock_mhz=args.clock)
    args.loaded_network = load_network(args.network)
    if args.arrays and max(args.arrays) > len(args.loaded_network.layers):
        raise EngineError(f"--arrays {max(args.arrays)}: {args.loaded_network.name} has "
                          f"{len(args.loaded_network.layers)} layers, and each array needs one")
    designs = network_designs(args.kernel, args.loaded_network, defines=args.defines)
    args.design_ids = [designs.space.design(d).id for d in args.design]


def _create(store: NetworkStore, args) -> int:
    network = args.loaded_network
    seconds = args.seconds if args.seconds is not None or args.samples is not None else 1.0
    return store.create(
        kernel_path=str(args.kernel), kernel_text=read_text(args.kernel, "kernel file"), defines=list(args.defines),
        network=network.name, workload=[{"name": l.name, "tags": list(l.tags), "sizes": l.sizes}
                                        for l in network.layers],
        device=args.device, method=args.method, seconds=seconds, samples=args.samples, seed=args.seed,
        options={"network_path": str(network.path), "designs": args.design_ids,
                 **({"clock_mhz": args.clock} if args.clock is not None else {})})


def _file_safe(name: str) -> str:
    """A stored network name as part of a folder name: letters, digits, '_', '-' and '.' only (a name
    read back from the database must not lead the output out of the current folder)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "_-.") else "_" for c in str(name))[:80]
    return safe.replace("..", "__") or "network"


def _check_out(out: Path | None) -> None:
    if out is not None and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise EngineError(f"output folder {out} exists and is not empty")


def _list(store: NetworkStore) -> None:
    """One line per run: running (its process alive), finished, interrupted (stopped and stored),
    killed (its process gone without storing a status) or damaged (with the reason below)."""
    rows = store.runs()
    if not rows:
        print("no network runs stored")
        return
    print(f"{'id':>4}  {'created':25}  {'network':12}  {'method':8}  {'status':11}  pairs")
    for r in rows:
        print(f"{r.id:>4}  {r.created[:25]:25}  {r.network[:40]:12}  {r.method[:20]:8}  {r.status:11}  {r.pairs}")
    for r in rows:
        if r.problem:
            print(f"network run {r.id} is damaged and cannot be read: {r.problem}")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class _ProgressLine:
    """Pairs done / total, the best so far and the time left, rewritten in place on a terminal
    (a line every 10% otherwise, so logs stay short)."""

    def __init__(self):
        self.live = sys.stderr.isatty()
        self.last, self.step = 0.0, -1

    def __call__(self, e: Event) -> None:
        best = (f"best {e.best.best.throughput_gops:.1f} GOP/s ({e.best.layer}, {e.best.design})"
                if e.best else "no result yet")
        eta = "" if e.eta is None else f"  ETA {e.eta:5.0f} s"
        single = f"  single array {e.singles_done}/{e.singles_total}" if e.singles_total else ""
        text = f"pairs {e.done}/{e.total}  {best}{eta}{single}"
        now = time.monotonic()
        if self.live:
            if now - self.last >= 0.2 or e.done == e.total:
                self.last = now
                sys.stderr.write("\r" + text[:150].ljust(150))
                sys.stderr.flush()
            return
        step = (10 * e.done // max(1, e.total), e.singles_done)
        if step != self.step:
            self.step = step
            _log(text)

    def close(self) -> None:
        if self.live:
            sys.stderr.write("\r" + " " * 150 + "\r")
            sys.stderr.flush()
