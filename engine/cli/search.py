"""`systolic search KERNEL.c`: tune every design (or some) with one method, show live progress,
end with a table per design, and store the run (kernel, sizes, device, method, seed, budget, trace,
results) in the run database as it goes: the database is opened and the run's row written before
the first sample, each design's result so far is stored every few seconds and on new bests, so a
kill -9 leaves an "incomplete" run holding all but the last seconds. Ctrl-C, SIGTERM and SIGHUP
stop the search, store it as "interrupted" and print the best found."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from engine.cli.certify import certify_designs, print_certificates
from engine.cli.clock_choice import clock_choice, print_clock_comparison
from engine.cli.kernel_args import (
    add_kernel_arguments,
    compile_from_args,
    kernel_defines,
    positive_int,
    positive_seconds,
    seed,
)
from engine.compiler.architecture.build import kernel_operations, operations_label
from engine.compiler.sa_sizes import select
from engine.errors import EngineError
from engine.models.device import load_device
from engine.search.explore import Budget, explore, smallest_design_needs
from engine.search.methods import METHODS, strategy_class
from engine.search.progress import Candidate, DesignResult, ExplorationResult, Progress
from engine.search.recorder import RunRecorder
from engine.search.store import RunStore

HELP = "tune the tuning parameters of every design (or some) with a search method"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    parser.add_argument("--design", action="append", default=[], metavar="ID", help="only these designs (repeatable)")
    parser.add_argument("--sa-sizes", metavar="STRING",
                        help="an AutoSA --sa-sizes string: tune the design it selects (instead of --design)")
    parser.add_argument("--method", default="hybrid", help=f"one of {', '.join(METHODS)} (default hybrid)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=positive_seconds,
                        help="total time budget, split across designs (default 2 s per design)")
    budget.add_argument("--samples", type=positive_int,
                        help="total number of evaluated configurations, split across designs")
    parser.add_argument("--seed", type=seed, default=0, help="0..2^63-1 (default 0)")
    parser.add_argument("--device", default="u250")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--db", type=Path, help="run database (default: the user data folder)")
    parser.add_argument("--no-store", action="store_true", help="do not store the run")
    parser.add_argument("--clock", type=clock_choice, metavar="MHz|estimated",
                        help="kernel clock for the throughput (default the device's, 300 MHz on the U250; at most its "
                             "clock_mhz_max), or 'estimated': each configuration at the clock its export can be "
                             "expected to reach (a model, not Vivado: docs/export.md), so the tuner prefers designs "
                             "that close; half the budget then finds the device-clock choice to print beside it")
    parser.add_argument("--certify", type=positive_seconds, nargs="?", const=10.0, metavar="SECONDS",
                        help="then prove each design's best within 1%% of its optimum (SECONDS each, default 10)")


def candidate_json(design: str, c: Candidate) -> dict:
    return {"design": design, "params": c.params, "latency_cycles": c.latency_cycles,
            "throughput_gops": c.throughput_gops, "dsp": c.dsp, "bram18k": c.bram18k}


class _ProgressLine:
    """One line on stderr, rewritten in place at most ~5 times a second when stderr is a terminal."""

    def __init__(self, designs: int):
        self.designs, self.done, self.last = designs, 0, 0.0
        self.live = sys.stderr.isatty()

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if not self.live or now - self.last < 0.2:
            return
        self.last = now
        best = f"best {p.best.throughput_gops:8.1f} GOP/s" if p.best else "no feasible point yet"
        self._write(f"\r[{self.done + 1}/{self.designs}] {p.design:24} {p.samples:>9,} samples "
                    f"{p.elapsed:6.1f} s  {best}   ")

    def _write(self, text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except OSError:  # the terminal is gone (SIGHUP, closed ssh): keep searching, stop drawing
            self.live = False

    def design_done(self, _result: DesignResult) -> None:
        self.done += 1

    def close(self) -> None:
        if self.live:
            self._write("\r" + " " * 100 + "\r")


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def run(args: argparse.Namespace) -> int:
    strategy_class(args.method)  # unknown methods fail before any work
    # the database is opened and checked before the kernel is compiled: a database that cannot be used
    # is an error before any work, never after the search
    store = None if args.no_store else RunStore(args.db)
    try:
        return _search(args, store)
    finally:
        if store is not None:
            store.close()


def _search(args: argparse.Namespace, store: RunStore | None) -> int:
    defines = kernel_defines(args)
    space = compile_from_args(args)
    estimated = args.clock == "estimated"
    device = load_device(args.device, clock_mhz=None if estimated else args.clock)
    if args.sa_sizes is not None:  # AutoSA's string names the design to tune (its own configuration aside)
        if args.design:
            raise EngineError("--sa-sizes names the design to tune; give it or --design, not both")
        selection = select(space, args.sa_sizes)
        print(f"--sa-sizes is: {selection.equivalent()}" + (f"  ({selection.note})" if selection.note else "")
              + f"; tuning {selection.design.id}", file=sys.stderr)
        args.design = [selection.design.id]
    designs = [space.design(d).id for d in args.design] or [d.id for d in space.designs]
    budget = Budget(seconds=args.seconds, samples=args.samples) if (args.seconds or args.samples) is not None \
        else Budget(seconds=2.0 * len(designs))
    if estimated:  # the other half finds the choice at the device's clock, printed beside this one
        budget = budget.split(2)
    line = _ProgressLine(len(designs))
    cancel = threading.Event()
    received: list[int] = []

    def stop(signum, _frame):
        if received and signum == signal.SIGINT:  # a second Ctrl-C: stop now (what is stored stays)
            raise KeyboardInterrupt
        received.append(signum)
        cancel.set()

    recorder, status = None, "failed"
    previous = {s: signal.signal(s, stop) for s in STOP_SIGNALS}  # from before the run's row exists
    try:
        if store is not None:  # the row exists, "running", before the first sample: a write that fails, fails here
            recorder = RunRecorder(store, store.begin(
                kernel_path=str(args.kernel), kernel_text=space.kernel.source, sizes=space.kernel.sizes,
                device=args.device, method=args.method, seed=args.seed, budget=budget.to_json(),
                kernel=space.kernel.name, options={"designs": designs, "defines": defines,
                                                   **({"scop": args.scop} if args.scop else {}),
                                                   **({"simd_touch_space": True} if args.simd_touch_space else {}),
                                                   **({"clock": args.clock} if args.clock else {})}))

        def on_design_done(result: DesignResult) -> None:
            if recorder is not None:
                recorder.put(line.done, result)
            line.design_done(result)

        result = explore(space, device, method=args.method, budget=budget, designs=designs, seed=args.seed,
                         callbacks=(line,), cancel_event=cancel, on_design_done=on_design_done,
                         on_checkpoint=None if recorder is None else recorder.put,
                         clock="estimated" if estimated else "device")
        status = "interrupted" if cancel.is_set() else "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        line.close()
        if recorder is not None:
            recorder.finish(status)
    stored = recorder is not None and recorder.error is None
    reference = None
    if estimated and status == "finished":
        line = _ProgressLine(len(designs))
        reference = explore(space, device, method=args.method, budget=budget, designs=designs, seed=args.seed,
                            callbacks=(line,), cancel_event=cancel)
        line.close()
    certificates = None
    if args.certify and status == "finished":  # an interrupted search is not certified
        certificates, result = certify_designs(space, device, result, seconds=args.certify, store=store,
                                               run_id=recorder.run_id if stored else None)
    _print(result, recorder.run_id if stored else None, status, args.json, certificates,
           operations=kernel_operations(space))
    if reference is not None and not args.json:
        print_clock_comparison(space, device, result, reference)
    if recorder is not None and recorder.error is not None:
        raise EngineError(f"the run could not be stored (results printed above): {recorder.error}")
    if result.best is None and status == "finished":
        raise EngineError("no configuration of any design fits the device: " + smallest_design_needs(space, device))
    return 128 + received[0] if received else 0


def _print(result: ExplorationResult, run_id, status: str, as_json: bool, certificates=None, *,
           operations: dict) -> None:
    """`operations`: compute.operations of the kernel, what GOP/s counts."""
    best = result.best
    if as_json:
        print(json.dumps({**({"certificates": [c.to_json() for c in certificates]} if certificates else {}),
            "run_id": run_id, "status": status, "method": result.method, "seed": result.seed,
            "operations": operations,
            "best": candidate_json(best.design, best.best) if best else None,
            "designs": [{**candidate_json(d.design, d.best), "samples": d.samples, "seconds": d.elapsed,
                         "notes": list(d.notes)} if d.best else
                        {"design": d.design, "best": None, "samples": d.samples, "notes": list(d.notes)}
                        for d in result.designs]}, indent=2))
        return
    header = f"{'design':24} {'samples':>9} {'s':>6} {'latency':>12} {'GOP/s':>8} {'DSP':>6} {'BRAM':>6}  params"
    print(header)
    print("-" * len(header))
    for d in sorted(result.designs, key=lambda d: d.best.latency_cycles if d.best else float("inf")):
        if d.best is None:
            print(f"{d.design:24} {d.samples:9,} {d.elapsed:6.1f} {'no feasible configuration':>34}")
            continue
        c = d.best
        params = " ".join(f"{k}={v}" for k, v in c.params.items())
        mark = "*" if best and d.design == best.design else " "
        print(f"{d.design:23}{mark} {d.samples:9,} {d.elapsed:6.1f} {c.latency_cycles:12,.0f} {c.throughput_gops:8.1f} "
              f"{c.dsp:6.0f} {c.bram18k:6.0f}  {params}")
    notes = sorted({n for d in result.designs for n in d.notes})
    for note in notes[:5]:
        print(f"note: {note}")
    if certificates:
        print_certificates(certificates)
    stored = f"stored as run {run_id}" if run_id is not None else "not stored"
    print(f"{status}; {stored}" + (f"; best: {best.design} at {best.best.throughput_gops:.1f} GOP/s" if best else "")
          + f" (GOP/s: {operations_label(operations)})")
