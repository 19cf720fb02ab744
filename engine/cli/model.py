"""`systolic model KERNEL.c --design ID --param NAME=V ...`: latency, resources and traffic of one
configuration (or of many, one JSON object per line with --params-file).

--params-file has one rule for bad lines: every non-blank line gives one JSON object on stdout, in
order: its result, or `{"line": N, "error": "FILE:N: reason", ...}` when the line is not UTF-8, not
a JSON object of integer parameters, or breaks a bound or constraint. A bad line never stops the
lines after it; the exit status is 0 unless the file itself cannot be read: it is read whole before
the kernel is compiled, through engine/validation.read_lines (a regular file of at most 16 MB and
100,000 lines), and it cannot be combined with --param or --descriptor."""
from __future__ import annotations

import argparse
import json
import sys

from engine.cli.kernel_args import (
    add_clock_argument,
    add_configuration_arguments,
    add_kernel_arguments,
    add_layout_argument,
    compile_from_args,
)
from engine.compiler.descriptor import build_descriptor
from engine.floorplan import estimate_clock
from engine.errors import DesignError
from engine.limits import INT64_MAX
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import as_int_params, evaluate_configuration, format_report
from engine.validation import MAX_JSON_DEPTH, json_depth, read_lines

HELP = "evaluate the performance model of one design for given tuning parameters"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    add_configuration_arguments(parser)
    parser.add_argument("--params-file", metavar="FILE.jsonl",
                        help="evaluate many configurations: one JSON object of parameters per line (UTF-8); "
                             "each line prints its result or {\"line\": N, \"error\": ...}, bad lines never "
                             "stop the others")
    parser.add_argument("--device", default="u250", help="device name or device JSON file (default u250)")
    add_layout_argument(parser)
    add_clock_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--no-double-buffering", action="store_true",
                        help="single local buffers in I/O modules (less BRAM, loads no longer overlap)")
    parser.add_argument("--floorplan", action="store_true",
                        help="solve the SLR floorplan for the clock estimate (seconds to a minute; without it the "
                             "estimate takes the SLRs' utilisation at its lower bound)")
    parser.add_argument("--descriptor", action="store_true",
                        help="print the design descriptor (docs/descriptor.md) instead of evaluating")


def parse_params(pairs: list[str]) -> dict[str, int]:
    values = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        try:
            number = int(value)
        except ValueError:
            raise DesignError(f"bad --param '{pair}': expected NAME=INTEGER, e.g. i_t1=64") from None
        if not sep or not name:
            raise DesignError(f"bad --param '{pair}': expected NAME=INTEGER, e.g. i_t1=64")
        if name in values:
            raise DesignError(f"--param {name} is given twice ({name}={values[name]} and {name}={number}): "
                              f"give each parameter once")
        values[name] = _in_range(name, number)
    return values


def _in_range(name: str, value: int) -> int:
    """Every tuning parameter and packing factor is a positive integer the models hold in int64."""
    if value < 1:
        raise DesignError(f"parameter {name}={value} must be a positive integer")
    if value > INT64_MAX:
        raise DesignError(f"parameter {name}={value} is beyond the int64 range the models evaluate")
    return value


def _unique_keys(pairs: list[tuple]) -> dict:
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"parameter '{key}' appears twice")
        seen[key] = value
    return seen


def run(args: argparse.Namespace) -> int:
    lines = None
    if args.params_file:
        clash = [flag for flag, given in (("--param", args.param), ("--descriptor", args.descriptor)) if given]
        if clash:
            raise DesignError(f"--params-file evaluates the configurations of a file; drop {' and '.join(clash)}")
        lines = read_lines(args.params_file, "params file", error=DesignError)  # before any work
    space = compile_from_args(args)
    model = PerformanceModel(space, space.design(args.design), load_device(args.device, clock_mhz=args.clock),
                             double_buffering=not args.no_double_buffering, layout=args.layout)
    if args.descriptor:
        print(json.dumps(build_descriptor(space, model.design, model.architecture, model.pass_architectures), indent=2))
        return 0
    if lines is not None:
        return _batch(model, args.params_file, lines)
    result = evaluate_configuration(model, parse_params(args.param))
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    clock = estimate_clock(descriptor, result["params"], model.device, quick=not args.floorplan)
    result["clock_estimate"] = {"floorplanned_mhz": clock.floorplanned_mhz, "floorplanned_reason": clock.floorplanned_reason,
                                "unfloorplanned_mhz": clock.unfloorplanned_mhz,
                                "unfloorplanned_reason": clock.unfloorplanned_reason, "note": clock.note,
                                "floorplan_solved": clock.plan is not None}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(format_report(result))
    gops = result["throughput_gops"] * 1e6 / model.device.clock_mhz
    print(f"clock estimate ({'floorplan solved' if clock.plan is not None else 'no floorplan solved: --floorplan solves one'}"
          f"; {clock.note}):\n"
          f"  floorplanned   {clock.floorplanned_mhz:5.0f} MHz ({gops * clock.floorplanned_mhz / 1e6:,.1f} GOP/s): "
          f"{clock.floorplanned_reason}\n"
          f"  unfloorplanned {clock.unfloorplanned_mhz:5.0f} MHz ({gops * clock.unfloorplanned_mhz / 1e6:,.1f} GOP/s): "
          f"{clock.unfloorplanned_reason}")
    return 0


def _batch(model: PerformanceModel, path: str, lines: list[bytes]) -> int:
    for number, raw in enumerate(lines, 1):
        result = _line_result(model, path, number, raw)
        if result is not None:
            print(json.dumps(result))
            sys.stdout.flush()
    return 0


def _line_result(model: PerformanceModel, path: str, number: int, raw: bytes) -> dict | None:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {"line": number, "error": f"{path}:{number}:{exc.start + 1}: not UTF-8 text"}
    if not line.strip(" \t\r\n"):  # JSON's whitespace: a line of control characters is a bad line, not a blank one
        return None
    try:
        if json_depth(line) > MAX_JSON_DEPTH:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        data = json.loads(line, object_pairs_hook=_unique_keys)
        if not isinstance(data, dict):
            raise ValueError(f"found {type(data).__name__}")
        values = {k: _in_range(k, v) for k, v in as_int_params(data).items()}
    except RecursionError:
        return {"line": number, "error": f"{path}:{number}: expected a JSON object of integer parameters "
                                         f"(nested too deeply)"}
    except (ValueError, DesignError) as exc:
        reason = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        return {"line": number, "error": f"{path}:{number}: expected a JSON object of integer parameters ({reason})"}
    try:
        return evaluate_configuration(model, values)
    except DesignError as exc:
        return {"line": number, "design": model.design.id, "params": values, "error": f"{path}:{number}: {exc}"}
