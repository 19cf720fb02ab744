"""`systolic csim DIR [--timed] [--json]`: build an exported project's kernel with g++ and a CPU
harness, run it on random inputs and compare with the golden loop nest. Exit status 0 on PASS, 1 on a
mismatch or a build failure (the first mismatching element and the g++ command to reproduce it are
printed), 2 when DIR is not an exported project. `--timed` also times the run from its trace
(engine/csim/timed.py): a summary line (total cycles beside the model's latency, the slowest process
and DRAM port), and with `--verbose` each DRAM port's bursts and the per-process table (busy /
stall-in / stall-out); a build failure, a deadlock or a trace too large is one line and exit 1.
`--time-limit` bounds the run of the compiled program (default RUN_TIMEOUT_S). Plain csim prints its
summary line (PASS / FAIL) first and with `--verbose` its host buffers, seconds and the command; it
runs within MEMORY_LIMIT (2 GB) whatever the size: a project whose host buffers alone need more is
refused in one line, exit 2 (engine/csim/__init__.py)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.csim import MEMORY_LIMIT, CsimError, run_csim, run_timed_csim
from engine.csim.timed import RUN_TIMEOUT_S, TimedCsimError, format_timed

HELP = "C-simulate an exported project (g++): compare the kernel with the loop nest on random inputs"
_LOG_LINES = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", metavar="DIR", type=Path, help="a directory written by `systolic export`")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--keep-build", action="store_true", help="keep the build directory (to rerun g++ by hand)")
    parser.add_argument("--timed", action="store_true",
                        help="also time the run: replay each dataflow process's trace cycle by cycle")
    parser.add_argument("--json", action="store_true", help="with --timed: print the timing as JSON")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="after the summary line: with --timed each DRAM port's bursts and the per-process "
                             "table (busy, stall in / out, iterations, the model's term); without, the host "
                             f"buffers (at most {MEMORY_LIMIT / 1e9:g} GB), the seconds and the g++ command")
    parser.add_argument("--time-limit", type=_seconds, default=RUN_TIMEOUT_S, metavar="SECONDS",
                        help=f"stop the compiled simulation after SECONDS (default {RUN_TIMEOUT_S}, "
                             f"{RUN_TIMEOUT_S // 60} minutes; a large problem may need more)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
    return value


def run(args: argparse.Namespace) -> int:
    if args.json and not args.timed:
        raise CsimError("--json prints the timing of --timed; add --timed")
    if args.timed:
        return _timed(args)
    result = run_csim(args.project, seed=args.seed, keep_build=args.keep_build, time_limit=args.time_limit)
    print(result.summary)
    if args.verbose:
        print("\n".join(result.details()))
    if result.passed:
        return 0
    if result.mismatch:
        if result.mismatch not in result.summary:
            print(result.mismatch)
    elif result.log:
        lines = result.log.strip().splitlines()
        print("\n".join(lines[:_LOG_LINES] + ([f"... ({len(lines) - _LOG_LINES} more lines)"]
                                             if len(lines) > _LOG_LINES else [])))
    if result.command:
        print(f"reproduce: {result.command}")
    return 1


def _timed(args: argparse.Namespace) -> int:
    try:
        result = run_timed_csim(args.project, seed=args.seed, time_limit=args.time_limit)
    except TimedCsimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.as_dict(), indent=1) if args.json else format_timed(result, verbose=args.verbose))
    return 0 if result.passed and result.complete else 1
