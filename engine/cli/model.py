"""`systolic model KERNEL.c --design ID --param NAME=V ...`: latency, resources and traffic of one
configuration (or of many, one JSON object per line with --params-file)."""
from __future__ import annotations

import argparse
import json
import sys

from engine.cli.kernel_args import (
    add_configuration_arguments,
    add_kernel_arguments,
    kernel_defines,
)
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.errors import DesignError
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import as_int_params, evaluate_configuration, format_report

HELP = "evaluate the performance model of one design for given tuning parameters"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    add_configuration_arguments(parser)
    parser.add_argument("--params-file", metavar="FILE.jsonl",
                        help="evaluate many configurations: one JSON object of parameters per line")
    parser.add_argument("--device", default="u250", help="device name or device JSON file (default u250)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--no-double-buffering", action="store_true",
                        help="single local buffers in I/O modules (less BRAM, loads no longer overlap)")
    parser.add_argument("--descriptor", action="store_true",
                        help="print the design descriptor (docs/descriptor.md) instead of evaluating")


def parse_params(pairs: list[str]) -> dict[str, int]:
    values = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            values[name.strip()] = int(value)
        except ValueError:
            raise DesignError(f"bad --param '{pair}': expected NAME=INTEGER, e.g. i_t1=64") from None
        if not sep:
            raise DesignError(f"bad --param '{pair}': expected NAME=INTEGER, e.g. i_t1=64")
    return values


def run(args: argparse.Namespace) -> int:
    space = compile_kernel(args.kernel, defines=kernel_defines(args), simd_info=args.simd_info)
    model = PerformanceModel(space, space.design(args.design), load_device(args.device),
                             double_buffering=not args.no_double_buffering)
    if args.descriptor:
        print(json.dumps(build_descriptor(space, model.design, model.architecture), indent=2))
        return 0
    if args.params_file:
        return _batch(model, args.params_file)
    result = evaluate_configuration(model, parse_params(args.param))
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0


def _batch(model: PerformanceModel, path: str) -> int:
    try:
        lines = open(path).read().splitlines()
    except OSError as exc:
        raise DesignError(f"cannot read {path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            values = as_int_params(json.loads(line))
        except (ValueError, AttributeError, DesignError) as exc:
            raise DesignError(f"{path}:{number}: expected a JSON object of integer parameters ({exc})") from None
        try:
            result = evaluate_configuration(model, values)
        except DesignError as exc:
            result = {"design": model.design.id, "params": values, "error": str(exc)}
        print(json.dumps(result))
        sys.stdout.flush()
    return 0
