"""Arguments every kernel-reading subcommand shares: the file, -D overrides, presets, a reduction file;
and the design + parameters of the subcommands that look at one configuration (model, simulate)."""
from __future__ import annotations

import argparse
import sys

from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.errors import EngineError
from engine.resources import preset_defines


def add_kernel_arguments(parser: argparse.ArgumentParser, *, kernel_help: str = "C file with a #pragma scop region",
                         optional: bool = False) -> None:
    parser.add_argument("kernel", nargs="?" if optional else None, help=kernel_help)
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                        help="override a #define in the kernel (repeatable), e.g. -D I=64")
    parser.add_argument("--preset", metavar="NAME",
                        help="a named size preset of a bundled kernel (resources/kernels/presets.json)")
    parser.add_argument("--simd-info", metavar="JSON",
                        help='declare reduction loops, AutoSA style: {"kernel": {"reduction": ["k"]}}')


def add_configuration_arguments(parser: argparse.ArgumentParser) -> None:
    """--design ID and repeatable --param NAME=V: one configuration of one design."""
    # not required: --sa-sizes can name the design instead (apply_sa_sizes checks one of them is given)
    parser.add_argument("--design", help="design id or name (see `systolic designs`)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V",
                        help="a tuning parameter value (repeatable), e.g. --param i_t1=64")


def kernel_defines(args: argparse.Namespace) -> list[str]:
    """Preset sizes first, so that explicit -D options win over them."""
    return (preset_defines(args.kernel, args.preset) if args.preset else []) + list(args.defines)


def add_sa_sizes_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sa-sizes", metavar="STRING",
                        help="an AutoSA --sa-sizes string, e.g. \"{kernel[]->space_time[3];kernel[]->array_part"
                             "[16,16,16];kernel[]->latency[8,8];kernel[]->simd[2]}\": selects the design and "
                             "its parameters (--design then only picks the permutation class)")


def apply_sa_sizes(args: argparse.Namespace) -> None:
    """Turn --sa-sizes into --design and --param (printing the equivalent options on stderr), so the
    subcommand sees one configuration however it was given."""
    text = getattr(args, "sa_sizes", None)
    if text is None:
        if getattr(args, "run", None) is None and getattr(args, "design", "") is None and args.kernel is not None:
            raise EngineError("--design is required with a kernel file (see `systolic designs KERNEL.c`), or "
                              "an AutoSA --sa-sizes string")
        return
    if getattr(args, "run", None) is not None:
        raise EngineError("--sa-sizes selects a design of a kernel file; drop it with --run")
    if args.kernel is None:
        raise EngineError("--sa-sizes needs a kernel file")
    space = compile_kernel(args.kernel, defines=kernel_defines(args), simd_info=args.simd_info)
    selection = select(space, text, design=args.design)
    given = {pair.partition("=")[0].strip() for pair in args.param}
    twice = sorted(given & set(selection.params))
    if twice:
        raise EngineError(f"--param {', '.join(twice)} is also set by --sa-sizes; give it once")
    print(f"--sa-sizes is: {selection.equivalent()}" + (f"  ({selection.note})" if selection.note else ""),
          file=sys.stderr)
    args.design = selection.design.id
    args.param = [f"{name}={value}" for name, value in selection.params.items()] + list(args.param)
