"""`systolic mapping KERNEL.c --space "i,j" --time "i+j+k"` or `--stt "[[1,0,0],[0,1,0],[1,1,1]]"`:
check an explicit space-time matrix against the dependences and print the array it implies."""
from __future__ import annotations

import argparse
import json

from engine.cli.kernel_args import add_kernel_arguments, compile_from_args
from engine.compiler.mapping import Mapping, map_space_time, parse_matrix, stt_from_loops
from engine.errors import EngineError
from engine.validation import bounded_int

HELP = "check an explicit space-time mapping (T2S-Tensor / PolySA style) and print the array it implies"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    parser.add_argument("--space", metavar="EXPRS", help='PE coordinates over the band loops, e.g. "i,j" or "i+k,j"')
    parser.add_argument("--time", metavar="EXPRS",
                        help='time step(s), compared lexicographically, e.g. "i+j+k" (one per remaining dimension)')
    parser.add_argument("--stt", metavar="MATRIX", help='the whole matrix as JSON rows, e.g. "[[1,0,0],[0,1,0],[1,1,1]]"')
    parser.add_argument("--space-dims", type=bounded_int(8, "space dimensions"), metavar="N",
                        help="with --stt: how many leading rows are space rows (default 2, or 1 for two loops)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    if (args.stt is None) == (args.space is None):
        raise EngineError('give either --space "i,j" --time "i+j+k" or --stt "[[...],...]"')
    space = compile_from_args(args)  # the input and size checks every kernel-reading subcommand makes
    loops = space.band.loops
    if args.stt is not None:
        if args.time is not None:
            raise EngineError("--time goes with --space; --stt holds the time rows already")
        rows = parse_matrix(args.stt, len(loops), loops)
        space_dims = args.space_dims if args.space_dims is not None else min(2, len(loops) - 1)
    else:
        rows, space_dims = stt_from_loops(space, args.space, args.time)
    mapping = map_space_time(space, rows, space_dims)
    if args.json:
        print(json.dumps({"kernel": space.kernel.name, "legal": True, **mapping.to_json()}, indent=2))
    else:
        print(format_mapping(space.kernel.name, dict(zip(loops, space.band.extents)), mapping,
                             tuple(space.kernel.arrays)))
    return 0


def format_mapping(kernel: str, extents: dict[str, int], mapping: Mapping, arrays: tuple[str, ...] = ()) -> str:
    sizes = " ".join(f"{loop}={n}" for loop, n in extents.items())
    space = ", ".join(mapping.row_text(r) for r in range(mapping.space_dims))
    time = ", ".join(mapping.row_text(r) for r in range(mapping.space_dims, len(mapping.matrix)))
    shape = " x ".join(str(n) for n in mapping.shape)
    box = 1
    for n in mapping.shape:
        box *= n
    lines = [f"{kernel} (loops {sizes}): PE = ({space}), time = ({time})",
             "legal: every dependence stays in its PE or moves to a neighbour, at a later time step",
             f"array: {mapping.space_dims}-D, {mapping.pe_count} PEs"
             + (f" in a {shape} box" if mapping.pe_count != box else f" ({shape})")
             + f", {' x '.join(str(hi - lo + 1) for lo, hi in mapping.time_range)} time steps"]
    for m in mapping.movements:
        if m.space_step is None:
            where = "moves by a varying step"
        elif m.stays:
            where = "stays in its PE"
        else:
            where = "moves by (" + ", ".join(f"{s:+d}" for s in m.space_step) + ") PEs"
        if m.time_step is None:
            when = ", a varying number of time steps later"
        else:
            step = m.time_step[0] if len(m.time_step) == 1 else "(" + ", ".join(map(str, m.time_step)) + ")"
            when = f", {step} time step{'s' if step != 1 else ''} later"
        label = {"read": "reused", "flow": "produced and consumed", "reduction": "accumulated"}[m.kind]
        lines.append(f"  {m.array} ({label}, {m.dependence}): {where}{when}")
    stationary = mapping.stationary_arrays()
    lines.append(f"stationary arrays (stay in their PE): {', '.join(stationary) if stationary else 'none'}")
    still = [a for a in arrays if a not in {m.array for m in mapping.movements}]
    if still:
        lines.append(f"no transfer between iterations: {', '.join(still)} (each element used in one iteration)")
    lines.append(f"equals listed designs: {', '.join(mapping.equals)}" if mapping.equals else
                 "not a listed design (its space rows are not loops): loop selection does not build this array")
    return "\n".join(lines)
