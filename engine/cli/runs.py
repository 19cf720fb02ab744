"""`systolic runs`: list the search runs stored in the run database, or show one run's per-design results.
A run whose process died mid-search is listed as "incomplete", a row that cannot be decoded as
"damaged" (with the reason under the table): one bad row never hides the others."""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from engine.errors import EngineError
from engine.search.progress import DesignResult
from engine.search.store import RunStore, RunSummary, StoredRun, default_database_path

HELP = "list stored search runs, or show the results of one"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH", type=Path, default=None,
                        help="run database (default: $SYSTOLIC_STUDIO_DB or runs.sqlite in the user data folder)")
    parser.add_argument("--show", metavar="RUN_ID", type=int, default=None,
                        help="print the per-design results of one run")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    path = args.db if args.db is not None else default_database_path()
    if not path.exists():  # listing must not create a database in the user's data folder
        if args.show is not None:
            raise EngineError(f"no stored run {args.show} in {path}")
        print("[]" if args.json else f"no stored runs in {path}")
        return 0
    with RunStore(path) as store:
        if args.show is not None:
            stored = store.load(args.show)
            print(json.dumps(asdict(stored), indent=2) if args.json else format_run(stored))
            return 0
        runs = store.list_runs()
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
    elif not runs:
        print(f"no stored runs in {path}")
    else:
        print(format_runs(runs))
    return 0


def format_budget(budget: dict) -> str:
    parts = []
    for key, value in budget.items():
        if value is None:
            continue
        if key == "seconds":
            parts.append(f"{value:g}s")
        elif key == "samples":
            parts.append(f"{value} samples")
        else:
            parts.append(f"{key}={value}")
    return ", ".join(parts) or "-"


def _number(value: float | None, spec: str = ".4g") -> str:
    return "-" if value is None else format(value, spec)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int] = frozenset()) -> str:
    """Columns padded to their widest cell (numbers right-aligned); the last column is not padded."""
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(row):
        cells = [cell.rjust(w) if c in right else cell.ljust(w) for c, (cell, w) in enumerate(zip(row, widths))]
        cells[-1] = row[-1]
        return "  ".join(cells).rstrip()

    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *map(line, rows)])


def format_runs(runs: list[RunSummary]) -> str:
    header = ("id", "created", "kernel", "method", "seed", "budget", "status", "designs", "best design",
              "best GOP/s")
    rows = [(str(r.id), r.created[:16].replace("T", " "), r.kernel, r.method, str(r.seed), format_budget(r.budget),
             r.status, str(r.designs), r.best_design or "-", _number(r.best_throughput, ".2f")) for r in runs]
    damaged = [f"run {r.id} is damaged and cannot be read: {r.problem}" for r in runs if r.problem]
    return "\n".join([_table(header, rows, right={0, 4, 7, 9}), *damaged])


def _design_row(d: DesignResult, best: bool) -> tuple[str, ...]:
    b = d.best
    params = " ".join(f"{k}={v}" for k, v in b.params.items()) if b else f"(no feasible configuration, {d.stopped})"
    return (("* " if best else "  ") + d.design, str(d.samples), f"{d.elapsed:.1f}",
            _number(b and b.latency_cycles, ".0f"), _number(b and b.throughput_gops, ".2f"),
            _number(b and b.dsp, ".0f"), _number(b and b.bram18k, ".0f"), params)


def format_run(stored: StoredRun) -> str:
    result = stored.result
    sizes = " ".join(f"{k}={v}" for k, v in stored.sizes.items())
    lines = [(f"run {stored.id}: {result.kernel} ({stored.kernel_path}{', ' + sizes if sizes else ''}) on "
              f"{stored.device}, {stored.method} seed {stored.seed}, budget {format_budget(stored.budget)}, "
              f"{stored.status}, {stored.created}")]
    if not result.designs:
        return lines[0] + "\nno design results"
    best = result.best
    header = ("  design", "samples", "seconds", "best latency", "GOP/s", "DSP", "BRAM", "params")
    lines.append(_table(header, [_design_row(d, d is best) for d in result.designs], right={1, 2, 3, 4, 5, 6}))
    for d in result.designs:
        lines.extend(f"{d.design}: {note}" for note in d.notes)
    return "\n".join(lines)
