"""`systolic designs KERNEL.c`: list every legal systolic array of a kernel, as a table or JSON."""
from __future__ import annotations

import argparse
import json

from engine.cli.kernel_args import add_kernel_arguments, add_sa_sizes_argument, compile_from_args
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.sa_sizes import autosa_band, autosa_space_time, select, space_time_order

HELP = "list every legal systolic-array design of a kernel"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kernel_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON list of designs")
    add_sa_sizes_argument(parser)
    parser.add_argument("--autosa", action="store_true",
                        help="print AutoSA's space_time candidate list (its band, its order) with the ids of "
                             "the designs of each candidate")


def run(args: argparse.Namespace) -> int:
    space = compile_from_args(args)
    if args.autosa:
        print(autosa_table(space, as_json=args.json))
        return 0
    if args.sa_sizes is not None:
        selection = select(space, args.sa_sizes)
        if args.json:
            print(json.dumps({**selection.design.to_json(), "autosa_space_time": autosa_space_time(space, selection.design),
                              "sa_sizes_params": selection.params, "note": selection.note}, indent=2))
        else:
            print(format_table((selection.design,)))
            print(f"--sa-sizes is: {selection.equivalent()}" + (f"  ({selection.note})" if selection.note else ""))
        return 0
    if args.json:
        print(json.dumps([{**d.to_json(), "autosa_space_time": autosa_space_time(space, d)} for d in space.designs],
                         indent=2))
        return 0
    sizes = " ".join(f"{loop}={n}" for loop, n in zip(space.band.loops, space.band.extents))
    print(f"{space.kernel.name}: {len(space.designs)} designs over loops {sizes} "
          f"(band: {space.band.origin})")
    print(format_table(space.designs))
    return 0


def autosa_table(space: DesignSpace, *, as_json: bool = False) -> str:
    """AutoSA's space_time candidates, index by index, with our designs of each (and the dataflows
    AutoSA does not list: a space loop after its band)."""
    band = autosa_band(space)
    order = space_time_order(space)
    rows = [(n, loops, [d.id for d in space.designs if d.space_loops == loops]) for n, loops in enumerate(order)]
    others = [d.id for d in space.designs if d.space_loops not in order]
    if as_json:
        return json.dumps({"autosa_band": list(band), "loops_after_band": [l for l in space.band.loops if l not in band],
                           "space_time": [{"index": n, "space_loops": list(loops), "designs": ids}
                                          for n, loops, ids in rows],
                           "not_in_autosa": others}, indent=2)
    after = [l for l in space.band.loops if l not in band]
    lines = [f"{space.kernel.name}: AutoSA's band ({','.join(band)})"
             + (f", then {','.join(after)} outside it" if after else "") + f": {len(order)} space_time candidates"]
    width = max(len(f"[{','.join(loops)}]") for loops in order) if order else 0
    for n, loops, ids in rows:
        lines.append(f"  space_time[{n}]".ljust(18) + f"[{','.join(loops)}]".ljust(width + 2) + " ".join(ids))
    if others:
        lines.append(f"  not in AutoSA's list ({len(others)}): " + " ".join(others))
    return "\n".join(lines)


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
