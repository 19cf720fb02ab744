"""Arguments every kernel-reading subcommand shares: the file, -D overrides, presets, a reduction file;
and the design + parameters of the subcommands that look at one configuration (model, simulate)."""
from __future__ import annotations

import argparse

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
    parser.add_argument("--design", required=True, help="design id or name (see `systolic designs`)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V",
                        help="a tuning parameter value (repeatable), e.g. --param i_t1=64")


def kernel_defines(args: argparse.Namespace) -> list[str]:
    """Preset sizes first, so that explicit -D options win over them."""
    return (preset_defines(args.kernel, args.preset) if args.preset else []) + list(args.defines)
