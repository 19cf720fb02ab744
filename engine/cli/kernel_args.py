"""Arguments every kernel-reading subcommand shares: the file, -D overrides, presets, a reduction file;
the design + parameters of the subcommands that look at one configuration (model, simulate); the
kernel compiled from them and checked (unused -D names, size limits); argparse types for seeds and
budgets that refuse what a run could not honour (negative or huge seeds, nan / inf / 0 seconds), which
live in engine/validation.py."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from engine.compiler.design_space import DesignSpace, compile_kernel, explore_designs
from engine.compiler.frontend import parse_kernel
from engine.compiler.ir import Kernel
from engine.compiler.preprocess import MAX_SOURCE_BYTES
from engine.compiler.sa_sizes import select
from engine.errors import EngineError, KernelError, SourceLocation
from engine.limits import check_design_space, check_kernel
from engine.models.device import load_device
from engine.models.dram import DEFAULT_LAYOUT, LAYOUTS
from engine.resources import preset_defines
# argparse types for seeds, budgets and counts: engine/validation.py (re-exported for the subcommands)
from engine.validation import positive_int, positive_mhz, positive_seconds, read_json, read_text, seed  # noqa: F401


def add_kernel_arguments(parser: argparse.ArgumentParser, *, kernel_help: str = "C file with a #pragma scop region",
                         optional: bool = False) -> None:
    parser.add_argument("kernel", nargs="?" if optional else None, help=kernel_help)
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                        help="override a #define in the kernel (repeatable), e.g. -D I=64")
    parser.add_argument("--preset", metavar="NAME",
                        help="a named size preset of a bundled kernel (resources/kernels/presets.json)")
    parser.add_argument("--simd-info", metavar="JSON",
                        help='declare reduction loops, AutoSA style: {"kernel": {"reduction": ["k"]}}')
    parser.add_argument("--scop", type=positive_int, metavar="N",
                        help="the N-th #pragma scop region of a file with several (1 = the first)")
    parser.add_argument("--simd-touch-space", action="store_true",
                        help="AutoSA's --simd-touch-space: also list designs with SIMD on a parallel space loop, "
                             "each lane computing its own output (design ids ending __simd-<loop>); off by default")


def add_configuration_arguments(parser: argparse.ArgumentParser) -> None:
    """--design ID and repeatable --param NAME=V: one configuration of one design."""
    # not required: --sa-sizes can name the design instead (apply_sa_sizes checks one of them is given)
    parser.add_argument("--design", help="design id or name (see `systolic designs`)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V",
                        help="a tuning parameter value (repeatable), e.g. --param i_t1=64")


def add_layout_argument(parser: argparse.ArgumentParser) -> None:
    """--layout: how the export lays arrays out in DRAM, which decides the AXI bursts (engine/models/dram.py)."""
    parser.add_argument("--layout", choices=LAYOUTS, default=DEFAULT_LAYOUT,
                        help="DRAM layout of the arrays: serialized (the host packs each array in the order the "
                             "kernel reads it: long AXI bursts; default) or natural (row-major: a burst per row "
                             "segment); the model, the simulator and the export charge its bursts")


def add_clock_argument(parser: argparse.ArgumentParser) -> None:
    """--clock MHz: the kernel clock the throughput is reported at (the device's clock by default); the
    device file's clock_mhz_max bounds it."""
    parser.add_argument("--clock", type=positive_mhz, metavar="MHz",
                        help="kernel clock for the throughput (default: the device's, 300 MHz on the U250; at most "
                             "the device's clock_mhz_max)")


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
    space = compile_kernel(args.kernel, defines=kernel_defines(args), simd_info=args.simd_info,
                           scop=getattr(args, "scop", None), simd_touch_space=getattr(args, "simd_touch_space", False))
    selection = select(space, text, design=args.design)
    if selection.hbm:
        check_hbm(selection.hbm, getattr(args, "device", None) or "u250")
    given = {pair.partition("=")[0].strip() for pair in args.param}
    twice = sorted(given & set(selection.params))
    if twice:
        raise EngineError(f"--param {', '.join(twice)} is also set by --sa-sizes; give it once")
    print(f"--sa-sizes is: {selection.equivalent()}" + (f"  ({selection.note})" if selection.note else ""),
          file=sys.stderr)
    args.design = selection.design.id
    args.hbm_channels = selection.hbm  # export: the least pseudo-channels of each array's port
    args.param = [f"{name}={value}" for name, value in selection.params.items()] + list(args.param)


def check_hbm(hbm: dict[str, int], device_name: str) -> None:
    """AutoSA's hbm_<array>[n] entries against the device: an HBM board, and runs of consecutive
    pseudo-channels (in the entries' order, as the export links them) that end on the board: the
    first entry that runs past it is named with the channels it would take and what it may ask."""
    device = load_device(device_name)
    entries = ", ".join(f"hbm_{a}[{n}]" for a, n in hbm.items())
    if device.memory_kind != "HBM2":
        raise EngineError(f"--sa-sizes {entries}: the {device.name} has {device.memory_kind} banks, not HBM "
                          f"pseudo-channels; expected --device u280 or u55c")
    start = 0
    for array, n in hbm.items():
        if start + n > device.banks:
            before = f" after {start} for the entries before it" if start else ""
            raise EngineError(f"--sa-sizes hbm_{array}[{n}]: HBM channels {start}..{start + n - 1}, "
                              f"{sum(hbm.values())} HBM channels in all; the {device.name} has {device.banks} "
                              f"pseudo-channels (HBM[0..{device.banks - 1}]): expected hbm_{array}[1..{device.banks - start}]"
                              f"{before}")
        start += n


def compile_from_args(args: argparse.Namespace) -> DesignSpace:
    """The kernel compiled with the -D / preset / --simd-info arguments, refused when it has more
    statements than the compiler handles in seconds, a -D names nothing the kernel uses, or its sizes
    are beyond what the models count (engine/limits.py)."""
    kernel = parse_kernel(args.kernel, defines=kernel_defines(args), simd_info=args.simd_info,
                          scop=getattr(args, "scop", None))
    check_defines(kernel, args.defines)  # input checks first, then the polyhedral passes
    check_reductions(kernel, args.simd_info)
    check_kernel(kernel)  # whose time grows with the statements
    space = explore_designs(kernel, simd_touch_space=getattr(args, "simd_touch_space", False))
    check_design_space(space)
    return space


def check_reductions(kernel: Kernel, simd_info: str | None) -> None:
    """A --simd-info file has AutoSA's shape and every loop it (or a `#pragma systolic reduction`) names
    is a loop of the kernel."""
    if simd_info is not None:
        info = read_json(simd_info, "reduction file", error=KernelError)  # the front end has read it already
        if not isinstance(info, dict) or not info or not all(
                isinstance(e, dict) and isinstance(e.get("reduction"), list) for e in info.values()):
            raise KernelError('expected an object of kernels, each with a "reduction" list, e.g. '
                              '{"kernel": {"reduction": ["k"]}}', SourceLocation(simd_info))
    loops = list(dict.fromkeys(loop.name for s in kernel.statements for loop in s.loops))
    for name in sorted(kernel.declared_reduction_loops - set(loops)):
        where = SourceLocation(simd_info) if simd_info is not None else SourceLocation(kernel.path)
        for number, line in enumerate(kernel.source.splitlines(), 1):
            if re.search(r"#\s*pragma\s+systolic\s+reduction", line) and re.search(rf"\b{re.escape(name)}\b", line):
                where = SourceLocation(kernel.path, number)
                break
        raise KernelError(f"reduction loop '{name}' is not a loop of the kernel (its loops: {', '.join(loops)})",
                          where)


def check_defines(kernel: Kernel, defines: list[str]) -> None:
    """Every -D NAME must be a size (or a macro) the kernel or a header it includes mentions."""
    texts = [kernel.source]
    folder = Path(kernel.path).parent
    for header in re.findall(r'#\s*include\s*"([^"]+)"', kernel.source):
        try:  # (a header under `#if 0` was never read by the preprocessor: the same checks here)
            texts.append(read_text(folder / header, "included file", MAX_SOURCE_BYTES))
        except EngineError:
            continue
    for pair in defines:
        name = pair.partition("=")[0].strip()
        if name in kernel.sizes or any(re.search(rf"\b{re.escape(name)}\b", text) for text in texts):
            continue
        known = ", ".join(kernel.sizes) or "none"
        raise KernelError(f"-D {pair}: the kernel does not use '{name}' (its sizes: {known})",
                          SourceLocation(kernel.path))

