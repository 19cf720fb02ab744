"""`systolic floorplan KERNEL.c --design ID --param NAME=V ... [--cap 0.7] [--json]`: assign every process
instance of one configuration to an SLR (engine/floorplan: pyomo + SCIP) and print the assignment
(per SLR its instances and utilisation, per boundary the crossing wires against capacity) with the
estimated clock of a floorplanned and of a plain build. A cap no floorplan meets is one line naming
the smallest cap that works, exit 2."""
from __future__ import annotations

import argparse
import json
import math

from engine.cli.kernel_args import add_configuration_arguments, add_kernel_arguments, compile_from_args
from engine.cli.model import parse_params
from engine.compiler.descriptor import build_descriptor
from engine.floorplan.clock import estimate_clock
from engine.floorplan.netlist import build_netlist
from engine.floorplan.report import floorplan_json, format_floorplan
from engine.floorplan.solve import DEFAULT_CAP, floorplan
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration

HELP = "assign a configuration's processes to the device's SLRs and estimate the clock it can reach"


def share(text: str) -> float:
    """argparse type: a share of an SLR's resources in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1], e.g. 0.7, not '{text}'") from None
    if not (math.isfinite(value) and 0 < value <= 1):
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1], e.g. 0.7, not {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    add_configuration_arguments(parser)
    parser.add_argument("--device", default="u250", help="device name or device JSON file (default u250)")
    parser.add_argument("--cap", type=share, default=DEFAULT_CAP,
                        help=f"the share of each SLR resource a floorplan may use (default {DEFAULT_CAP})")
    parser.add_argument("--json", action="store_true", help="print the floorplan as JSON")


def run(args: argparse.Namespace) -> int:
    space = compile_from_args(args)
    device = load_device(args.device)
    model = PerformanceModel(space, space.design(args.design), device)
    values = evaluate_configuration(model, parse_params(args.param))["params"]  # refuses broken constraints
    descriptor = build_descriptor(space, model.design, model.architecture, model.pass_architectures)
    net = build_netlist(descriptor, values, device)
    plan = floorplan(net, device, cap=args.cap)
    clock = estimate_clock(descriptor, values, device, cap=args.cap, plan=plan, net=net)
    print(json.dumps(floorplan_json(plan, clock), indent=2) if args.json else format_floorplan(plan, clock))
    return 0
