"""`systolic csim DIR`: build an exported project's kernel with g++ and a CPU harness, run it on random
inputs and compare with the golden loop nest. Exit status 0 on PASS, 1 on a mismatch or a build
failure (the first mismatching element and the g++ command to reproduce it are printed), 2 when DIR
is not an exported project."""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from engine.csim import run_csim
from engine.errors import EngineError

HELP = "C-simulate an exported project (g++): compare the kernel with the loop nest on random inputs"
_LOG_LINES = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", metavar="DIR", type=Path, help="a directory written by `systolic export`")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--keep-build", action="store_true", help="keep the build directory (to rerun g++ by hand)")


def check_project(folder: Path) -> None:
    if not folder.is_dir():
        raise EngineError(f"{folder} is not a directory (expected a project written by `systolic export`)")
    missing = [name for name in ("design.json", "src/kernel_kernel.cpp", "src/kernel_kernel.h")
               if not (folder / name).is_file()]
    if missing:
        raise EngineError(f"{folder} is not an exported project: no {', '.join(missing)} "
                          "(write one with `systolic export`)")


def run(args: argparse.Namespace) -> int:
    check_project(args.project)
    result = run_csim(args.project, seed=args.seed, keep_build=args.keep_build)
    print(result.summary)
    if result.passed:
        return 0
    if result.mismatch:
        print(result.mismatch)
    elif result.log:
        lines = result.log.strip().splitlines()
        print("\n".join(lines[:_LOG_LINES] + ([f"... ({len(lines) - _LOG_LINES} more lines)"]
                                             if len(lines) > _LOG_LINES else [])))
    if result.command:
        command = result.command if isinstance(result.command, str) else shlex.join(map(str, result.command))
        print(f"reproduce: {command}")
    return 1
