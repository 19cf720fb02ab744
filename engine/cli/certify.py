"""`systolic certify KERNEL.c --design ID`: prove how far a design's best configuration can be from
the optimum (engine/search/certify.py), starting from --param values, else the best stored run of
this kernel, sizes and device, else a short search; and `certify_designs`, which
`systolic search --certify` runs after a search. A certificate of a stored run's best is stored
with that run (RunStore.put_certificate)."""
from __future__ import annotations

import argparse
import json

import sys

from engine.cli.kernel_args import add_clock_argument, add_configuration_arguments, add_kernel_arguments, compile_from_args
from engine.cli.model import parse_params
from engine.compiler.design_space import DesignSpace
from engine.errors import DesignError, EngineError
from engine.models.constraints import violations
from engine.models.device import Device, load_device
from engine.models.evaluate import PerformanceModel
from engine.search.certify import Certificate, certify
from engine.search.explore import Budget, explore
from engine.search.space import SearchSpace
from engine.search.store import DAMAGED, RunStore
from engine.validation import nonnegative_number, positive_seconds

HELP = "prove a design's best configuration optimal or within a gap of the optimum (or improve it)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    add_configuration_arguments(parser)
    parser.add_argument("--gap", type=nonnegative_number, default=0.01, help="target gap, e.g. 0.01 for 1%% (default)")
    parser.add_argument("--seconds", type=positive_seconds, default=60.0, help="time for the proof (default 60)")
    parser.add_argument("--device", default="u250", help="device name or device JSON file (default u250)")
    add_clock_argument(parser)
    parser.add_argument("--db", help="run database to take the starting configuration from (default: the user's)")
    parser.add_argument("--search-seconds", type=positive_seconds, default=2.0,
                        help="without --param or a stored run: search this long for a start (default 2)")
    parser.add_argument("--json", action="store_true", help="print the certificate as JSON")


def stored_start(space: DesignSpace, design: str, device: str, db) -> tuple[dict[str, int], str, int] | None:
    """The best stored configuration of this design for the same kernel text, sizes and device:
    (params, where it comes from, run id). A damaged run is named on stderr and skipped."""
    best = None
    names = [p.name for p in space.design(design).params if p.tunable]
    with RunStore(db) as store:
        for summary in store.list_runs():
            if summary.status == DAMAGED:
                print(f"note: run {summary.id} is damaged, skipped: {summary.problem}", file=sys.stderr)
                continue
            if summary.device != device:
                continue
            try:
                run = store.load(summary.id)
            except EngineError as exc:
                print(f"note: {exc}; skipped", file=sys.stderr)
                continue
            if run.kernel_text != space.kernel.source or run.sizes != space.kernel.sizes:
                continue
            for d in run.result.designs:
                if d.design == design and d.best and set(names) <= set(d.best.params) \
                        and (best is None or d.best.latency_cycles < best[0]):
                    best = (d.best.latency_cycles, dict(d.best.params), f"stored run {summary.id}", summary.id)
    return None if best is None else best[1:]


def run(args: argparse.Namespace) -> int:
    space = compile_from_args(args)  # the same input and size checks as search
    device = load_device(args.device, clock_mhz=args.clock)
    design = space.design(args.design)
    search = SearchSpace(PerformanceModel(space, design, device))
    run_id = None
    if args.param:
        start, origin = parse_params(args.param), "--param"
        problems = violations(design, start)
        if problems:
            raise DesignError(f"{design.id}: " + "; ".join(problems))
    else:
        found = stored_start(space, design.id, args.device, args.db)
        if found is None:
            result = explore(space, device, budget=Budget(seconds=args.search_seconds), designs=[design.id])
            best = result.designs[0].best
            found = (dict(best.params), f"a {args.search_seconds:g} s search", None) if best else (None, None, None)
        start, origin, run_id = found
    certificate = certify(search, start, gap=args.gap, seconds=args.seconds)
    if run_id is not None:
        with RunStore(args.db) as store:
            store.put_certificate(run_id, certificate.to_json())
    if args.json:
        print(json.dumps(certificate.to_json() | {"start": origin}, indent=2))
        return 0 if certificate.fits else 2
    if not certificate.fits:
        raise EngineError(f"{design.id}: no configuration fits the device {device.name} (proven: "
                          f"{certificate.boxes_explored:,} boxes in {certificate.seconds:.1f} s): "
                          f"{certificate.notes[0]}")
    print(format_certificate(certificate, search, origin))
    return 0


def format_certificate(c: Certificate, search: SearchSpace, origin: str) -> str:
    lines = [f"{c.design}: {c.status}"]
    if c.latency_cycles is not None:
        params = " ".join(f"{k}={v}" for k, v in c.params.items())
        found = (f"from {origin}" if not c.improved else
                 f"found by the proof, better than {origin}" if origin else "found by the proof")
        lines.append(f"  incumbent  {c.latency_cycles:,.0f} cycles, {search.throughput(c.latency_cycles):.1f} GOP/s "
                     f"at {search.device.clock_mhz:g} MHz  ({found}): {params}")
    if c.lower_bound_cycles is not None:
        lines.append(f"  bound      {c.lower_bound_cycles:,.0f} cycles, {search.throughput(c.lower_bound_cycles):.1f}"
                     " GOP/s: no configuration is faster")
    if c.gap is not None:
        lines.append(f"  gap        {100 * c.gap:.2f}% (target {100 * c.target_gap:.2f}%)")
    lines.append(f"  boxes      {c.boxes_explored:,} explored, {c.boxes_pruned:,} pruned, {c.seconds:.1f} s")
    return "\n".join(lines)


def certify_designs(space: DesignSpace, device: Device, result, *, seconds: float, gap: float = 0.01,
                    store: RunStore | None = None, run_id: int | None = None) -> list[Certificate]:
    """`systolic search --certify`: a certificate for each design of a search result, from its best;
    each stored with run `run_id` of `store` when given."""
    certificates = []
    for d in result.designs:
        search = SearchSpace(PerformanceModel(space, space.design(d.design), device))
        certificates.append(certify(search, dict(d.best.params) if d.best else None, gap=gap, seconds=seconds))
        if store is not None and run_id is not None:
            store.put_certificate(run_id, certificates[-1].to_json())
    return certificates


def print_certificates(certificates: list[Certificate]) -> None:
    header = f"{'design':24} {'latency':>12} {'bound':>12} {'gap':>8} {'boxes':>10} {'s':>6}  status"
    print(header)
    print("-" * len(header))
    for c in certificates:
        latency = f"{c.latency_cycles:12,.0f}" if c.latency_cycles is not None else f"{'-':>12}"
        bound = f"{c.lower_bound_cycles:12,.0f}" if c.lower_bound_cycles is not None else f"{'-':>12}"
        gap = f"{100 * c.gap:7.2f}%" if c.gap is not None else f"{'-':>8}"
        print(f"{c.design:24} {latency} {bound} {gap} {c.boxes_explored:10,} {c.seconds:6.1f}  {c.status}")
