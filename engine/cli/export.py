"""`systolic export KERNEL.c --design ID --param NAME=V ... [-o DIR] [--layout serialized|natural]` or `systolic export --run RUN_ID
[--rank K]`: write a design at a configuration as a Vitis project (kernel, XRT host, Makefile,
connectivity.cfg, hls_script.tcl, README.md), floorplanned on the device's SLRs unless `--floorplan none`
(floorplan.tcl, deeper SLR-crossing FIFOs; a `--cap` no floorplan meets is one line naming the smallest
that works, exit 2, nothing written), at `--clock` MHz (the Makefile's --kernel_frequency). With `--simulate` the cycle simulator runs the
configuration first, with the FIFO depths the project will have, and a deadlock stops the export: a
design that would pass C simulation (unbounded streams) and hang on the board is not written."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from engine.cli.floorplan import share
from engine.cli.kernel_args import add_clock_argument, add_kernel_arguments, compile_from_args
from engine.cli.model import parse_params
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export.dram_layout import port_layout
from engine.export.project import DEFAULT_FLOORPLAN, FLOORPLAN_MODES, check_output, export_project, safe_directory_name
from engine.floorplan import DEFAULT_CAP
from engine.errors import EngineError
from engine.models.device import load_device
from engine.models.dram import DEFAULT_LAYOUT, LAYOUTS
from engine.models.cache import shared_model
from engine.models.report import as_int_params, evaluate_configuration
from engine.search.progress import Candidate
from engine.search.store import RunStore, StoredRun, default_database_path
from engine.sim import (
    DEFAULT_MAX_CYCLES,
    SimulationBudgetExceeded,
    SimulationDeadlock,
    simulate,
)
from engine.validation import read_text

HELP = "export a design at a configuration as a Vitis project (kernel, host, Makefile, ...)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser, kernel_help="C file with a #pragma scop region (or use --run)", optional=True)
    parser.add_argument("--design", metavar="ID", help="design id or name (see `systolic designs`)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V",
                        help="a tuning parameter value (repeatable); packing factors are inferred unless given")
    parser.add_argument("--run", metavar="RUN_ID", type=int, help="export the best design of a stored search run")
    parser.add_argument("--rank", metavar="K", type=int, default=1,
                        help="with --run: the K-th best design of the run (default 1)")
    parser.add_argument("--db", metavar="PATH", type=Path, default=None,
                        help="run database (default: $SYSTOLIC_STUDIO_DB or runs.sqlite in the user data folder)")
    parser.add_argument("-o", "--output", metavar="DIR", type=Path,
                        help="project directory (default ./<kernel>-<design id>)")
    parser.add_argument("--platform", metavar="P", help="Vitis platform (default xilinx_u250_gen3x16_xdma_4_1_202210_1)")
    parser.add_argument("--device", default=None, help="device name or device JSON file (default u250, or the run's)")
    parser.add_argument("--force", action="store_true",
                        help="write into an existing non-empty directory, replacing the exported files")
    parser.add_argument("--allow-over-budget", action="store_true",
                        help="export a configuration the models predict to be over the device budget")
    parser.add_argument("--layout", default=DEFAULT_LAYOUT, metavar="|".join(LAYOUTS),
                        help="DRAM layout: 'serialized' (default; the host packs each array in the order the "
                             "kernel reads it, so every DRAM loop is one long burst) or 'natural' (padded "
                             "row-major arrays, a burst per row segment)")
    parser.add_argument("--floorplan", choices=FLOORPLAN_MODES, default=DEFAULT_FLOORPLAN,
                        help="auto (default): assign every process to an SLR (engine/floorplan), write floorplan.tcl "
                             "for the v++ link and pipeline the FIFOs that cross SLRs; none: no floorplan")
    parser.add_argument("--cap", type=share, default=None,
                        help=f"with --floorplan auto: the share of each SLR's resources it may use (default "
                             f"{DEFAULT_CAP}, or the smallest that works when none meets it, said on stderr); a cap "
                             f"given that no floorplan meets names the smallest that works")
    add_clock_argument(parser)
    parser.add_argument("--simulate", action="store_true",
                        help="run the cycle simulator first (same FIFO depths) and refuse to export on a deadlock")
    parser.add_argument("--max-cycles", type=int, default=DEFAULT_MAX_CYCLES, metavar="N",
                        help="with --simulate: the simulation's cycle budget; running out of it is an error too")


def _check_mode(args: argparse.Namespace) -> None:
    if args.run is not None:
        mixed = [flag for flag, given in (("KERNEL", args.kernel), ("--design", args.design), ("--param", args.param),
                                          ("-D", args.defines), ("--preset", args.preset)) if given]
        if mixed:
            raise EngineError(f"--run exports a stored run's design and parameters; drop {', '.join(mixed)}")
        if args.rank < 1:
            raise EngineError(f"--rank must be 1 or more, not {args.rank}")
    elif args.rank != 1:
        raise EngineError("--rank needs --run RUN_ID")
    elif args.kernel is None:
        raise EngineError("give a kernel file (with --design and --param) or --run RUN_ID")
    elif args.design is None:
        raise EngineError("--design is required with a kernel file (see `systolic designs KERNEL.c`)")


def _stored_run(args: argparse.Namespace) -> tuple[StoredRun, str, Candidate]:
    """The run, and the design id and best configuration at the asked rank."""
    path = args.db if args.db is not None else default_database_path()
    if not path.exists():
        raise EngineError(f"no stored run {args.run} in {path}")
    with RunStore(path) as store:
        stored = store.load(args.run)
        ranked = store.top_k(args.run, args.rank)
    if len(ranked) < args.rank:
        raise EngineError(f"run {args.run} has {len(ranked)} design(s) with a feasible configuration, "
                          f"no rank {args.rank}")
    return stored, *ranked[-1]


def _compile_stored(stored: StoredRun, simd_info, folder: Path):
    """Compile the run's kernel text with its -D options (element types among them), its sizes and its
    scop region (--scop) and --simd-touch-space: from the original file if it still holds that text, else from a copy (a
    kernel that includes a header needs the original)."""
    defines = [*stored.options.get("defines", []), *(f"{k}={v}" for k, v in stored.sizes.items())]
    original = Path(stored.kernel_path)
    try:  # a stored path: any file, or none (read through the size and encoding checks)
        unchanged = read_text(original, "kernel file") == stored.kernel_text
    except EngineError:
        unchanged = False
    path = original if unchanged else folder / original.name
    if not unchanged:
        path.write_text(stored.kernel_text)
    return compile_kernel(path, defines=defines, simd_info=simd_info, scop=stored.options.get("scop"),
                          simd_touch_space=stored.options.get("simd_touch_space", False))


def _simulate_first(space, design, values: dict[str, int], device, max_cycles: int, layout: str) -> None:
    """The cycle simulator on the configuration to export; a deadlock (or an exhausted budget)
    raises, so nothing is written."""
    model = shared_model(space, design, device, layout=layout)  # the export that follows reuses it
    full = evaluate_configuration(model, as_int_params(values))["params"]
    descriptor = build_descriptor(space, design, model.architecture, model.pass_architectures)
    try:
        result = simulate(descriptor, full, max_cycles=max_cycles)
    except SimulationDeadlock as exc:
        raise EngineError(f"not exported: {exc}") from exc
    except SimulationBudgetExceeded as exc:
        raise EngineError(f"not exported: the simulation did not finish ({exc})") from exc
    print(f"simulated {result.cycles:,} cycles, no deadlock (bottleneck {result.bottleneck})")


def run(args: argparse.Namespace) -> int:
    _check_mode(args)
    if args.output is not None:
        check_output(args.output, args.force)  # before compiling or simulating
    if args.run is not None:
        stored, design_id, best = _stored_run(args)
        device = load_device(args.device or stored.device, clock_mhz=args.clock)
        with tempfile.TemporaryDirectory(prefix="systolic-export-") as folder:
            space = _compile_stored(stored, args.simd_info, Path(folder))
        values = {k: int(v) for k, v in best.params.items()}
        source = f"run {args.run}, rank {args.rank}"
    else:
        space = compile_from_args(args)
        device = load_device(args.device or "u250", clock_mhz=args.clock)
        design_id, values, source = args.design, parse_params(args.param), None
    design = space.design(design_id)
    port_layout(args.layout, "in")  # an unknown layout: one line before any work
    out_dir = args.output or Path(f"{safe_directory_name(space.kernel.name)}-{safe_directory_name(design.id)}")
    check_output(out_dir, args.force)  # before simulating
    if args.simulate:
        _simulate_first(space, design, values, device, args.max_cycles, args.layout)
    notes: list[str] = []
    written = export_project(space, design, values, out_dir, device=device, platform=args.platform,
                             force=args.force, allow_over_budget=args.allow_over_budget, layout=args.layout,
                             floorplan=args.floorplan, cap=args.cap, notes=notes,
                             hbm_channels=getattr(args, "hbm_channels", None))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"exported {space.kernel.name} design {design.id}" + (f" ({source})" if source else "")
          + f" to {written}")
    print(f"next: systolic csim {written}   |   make -C {written} check TARGET=sw_emu")
    return 0
