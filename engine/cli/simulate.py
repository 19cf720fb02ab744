"""`systolic simulate KERNEL.c --design ID --param NAME=V ... [--json]`: run one configuration on the
cycle-level simulator (engine/sim) and print its cycles, the per-module table and any deadlock,
next to the model's latency; `--check-values` also C-simulates the exported code (engine/csim) and
compares the values with the loop nest (exit 1 when they differ). A configuration whose simulator
state would not fit in the available memory is refused up front with the estimate (engine/limits.py).
`--project DIR` charges the SLR crossings of an exported project (its design.json floorplan): the
crossing FIFOs are deeper and delay their words by their pipeline latency, as its timed C simulation,
and the model latency printed beside adds their longest path (engine/models/crossings.py)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.cli.kernel_args import (
    add_configuration_arguments,
    add_kernel_arguments,
    add_layout_argument,
    compile_from_args,
    positive_int,
    seed,
)
from engine.cli.model import parse_params
from engine.compiler.descriptor import build_descriptor
from engine.csim.design_check import csim_design
from engine.errors import EngineError
from engine.export.plan import build_plan
from engine.floorplan.pipeline import CrossingPipeline
from engine.limits import check_simulator_memory
from engine.models.crossings import crossing_cycles, model_fills
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.sim import (
    DEFAULT_MAX_CYCLES,
    DramModel,
    SimulationBudgetExceeded,
    SimulationDeadlock,
    format_result,
    simulate,
)

HELP = "simulate one configuration of a design cycle by cycle (deadlocks, stalls, FIFO peaks)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    add_configuration_arguments(parser)
    parser.add_argument("--device", default="u250", help="device name or device JSON file (default u250)")
    add_layout_argument(parser)
    parser.add_argument("--max-cycles", type=positive_int, default=DEFAULT_MAX_CYCLES, metavar="N",
                        help=f"stop after N simulated cycles (default {DEFAULT_MAX_CYCLES:,})")
    parser.add_argument("--no-double-buffering", action="store_true",
                        help="single local buffers in I/O modules (loads no longer overlap)")
    parser.add_argument("--check-values", action="store_true",
                        help="also export the design and C-simulate it with g++: the values it computes "
                             "against the loop nest (exit 1 when they differ)")
    parser.add_argument("--seed", type=seed, default=0, help="with --check-values: seed of the random inputs")
    parser.add_argument("--project", type=Path, metavar="DIR",
                        help="an exported project of this configuration: charge the SLR crossings of its floorplan "
                             "(design.json) like its timed C simulation")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def project_crossings(design: dict) -> dict:
    """An exported project's design.json -> (source node, target node, array) -> CrossingPipeline of every
    FIFO its floorplan pipelines (`floorplan.crossing_fifos`, by stream name: the export's plan says which
    topology edge each stream is); empty without a floorplan."""
    records = (design.get("floorplan") or {}).get("crossing_fifos", [])
    if not records:
        return {}
    streams = build_plan(design["descriptor"], design["values"]).streams
    crossings = {}
    for c in records:
        stream = streams.get(c["stream"])
        if stream is None or not stream.ends:
            raise EngineError(f"design.json: crossing FIFO {c['stream']!r} is not a stream of the design")
        crossings[(*stream.ends, stream.array)] = CrossingPipeline(int(c["from_slr"]), int(c["to_slr"]),
                                                                   int(c["latency"]), int(c["extra_depth"]))
    return crossings


def read_project_crossings(project: Path, design_id: str, values: dict[str, int]) -> dict:
    """`--project DIR`: its crossings, refusing a project of another design or configuration (one line)."""
    path = project / "design.json"
    try:
        design = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EngineError(f"--project: cannot read {path}: {exc}") from None
    if not isinstance(design, dict) or "descriptor" not in design or "values" not in design:
        raise EngineError(f"--project: {path} is not an exported project's design.json (no descriptor/values)")
    exported = design["descriptor"]["design"]["id"]
    if exported != design_id:
        raise EngineError(f"--project: {project} exports design {exported}, not {design_id}")
    differ = sorted(k for k in set(values) | set(design["values"]) if values.get(k) != design["values"].get(k))
    if differ:
        raise EngineError(f"--project: {project} was exported with other values of " + ", ".join(
            f"{k} ({design['values'].get(k)} there, {values.get(k)} here)" for k in differ))
    return project_crossings(design)


def run(args: argparse.Namespace) -> int:
    space = compile_from_args(args)
    model = PerformanceModel(space, space.design(args.design), load_device(args.device),
                             double_buffering=not args.no_double_buffering, layout=args.layout)
    params = parse_params(args.param)
    report = evaluate_configuration(model, params)  # refuses a broken constraint, naming it
    values = report["params"]
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    check_simulator_memory(descriptor, values)  # before building a state that would not fit
    crossings = read_project_crossings(args.project, model.design.id, values) if args.project else None
    if crossings:  # the model charges them too (engine/models/crossings.py)
        report = evaluate_configuration(model, params, crossing_cycles=crossing_cycles(
            descriptor, values, crossings, model_fills(model, values)))
    try:
        result = simulate(descriptor, values, max_cycles=args.max_cycles,
                          dram=DramModel(model.device.dram_ports(model.layout)), crossings=crossings)
    except (SimulationDeadlock, SimulationBudgetExceeded) as exc:
        if args.json:
            print(json.dumps({**exc.result.as_dict(), "model_latency_cycles": report["latency_cycles"],
                              "error": str(exc)}, indent=2))
        else:
            print(format_result(exc.result))
        raise
    checked = csim_design(space, model.design, values, device=model.device, seed=args.seed) \
        if args.check_values else None
    status = 0 if checked is None or checked.passed else 1
    if args.json:
        print(json.dumps({**result.as_dict(), "model_latency_cycles": report["latency_cycles"],
                          "values": None if checked is None else
                          {"passed": checked.passed, "summary": checked.summary, "mismatch": checked.mismatch,
                           "command": checked.command}}, indent=2))
        return status
    print(format_result(result))
    error = (report["latency_cycles"] - result.cycles) / result.cycles
    print(f"model latency {report['latency_cycles']:,.0f} cycles ({error:+.2%} vs simulated)")
    if checked is not None:
        print(f"values (C simulation of the exported code): {checked.summary}")
        if not checked.passed and checked.command:
            print(f"reproduce: {checked.command}")
    return status
