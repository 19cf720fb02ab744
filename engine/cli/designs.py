"""`systolic designs KERNEL.c`: list every legal systolic array of a kernel, as a table or JSON."""
from __future__ import annotations

import argparse
import json

from engine.cli.kernel_args import add_kernel_arguments, compile_from_args
from engine.compiler.design import Design
from engine.compiler.sa_sizes import autosa_space_time

HELP = "list every legal systolic-array design of a kernel"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON list of designs")


def run(args: argparse.Namespace) -> int:
    space = compile_from_args(args)
    if args.json:
        print(json.dumps([{**d.to_json(), "autosa_space_time": autosa_space_time(space, d)} for d in space.designs],
                         indent=2))
        return 0
    sizes = " ".join(f"{loop}={n}" for loop, n in zip(space.band.loops, space.band.extents))
    print(f"{space.kernel.name}: {len(space.designs)} designs over loops {sizes} "
          f"(band: {space.band.origin})")
    print(format_table(space.designs))
    return 0


def _param_summary(design: Design) -> str:
    parts = []
    for p in design.params:
        if not p.tunable:
            continue
        extra = "".join(f", {c}" for c in p.constraints)
        parts.append(f"{p.name}[{p.lower}..{p.upper}{extra}]")
    return " ".join(parts)


def format_table(designs: tuple[Design, ...]) -> str:
    header = ("id", "space", "array shape", "permutation", "simd", "tuning parameters")
    rows = [(d.id, str(d.dataflow), " x ".join(d.array_shape) + (f" x {d.simd_loop}_t2" if d.simd_loop else ""),
             str(d.permutation), d.simd_loop or "-", _param_summary(d)) for d in designs]
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * len(header[-1]))
    return "\n".join(lines)
