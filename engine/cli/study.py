"""`systolic study NAME`: run one of the Odyssey paper's studies on a kernel's designs and write its
CSV, PNG and summary.txt into an output folder; the summary (measured vs paper) is printed at the end."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.kernel_args import compile_from_args
from engine.errors import EngineError
from engine.models.device import load_device
from engine.resources import DEFAULT_KERNEL, preset_defines
from engine.studies import STUDIES
from engine.studies.common import BEST_KNOWN, prepare_output
from engine.validation import positive_int, positive_seconds, read_json

HELP = ("reproduce a study of the Odyssey paper (methods, mutation, latency-model, traffic-pruning, mp-vs-hybrid, "
        "model-accuracy, mm-architectures, vgg16-conv12, networks)")
PAPER_DEFINES = ["I=1024", "J=1024", "K=1024"]

EPILOG = "studies (default budget per run; time on MM 1024^3, all 27 designs, 1 seed):\n" + "\n".join(
    f"  {s.name:16} {s.what}\n  {'':16} {s.help_duration()}" for s in STUDIES.values()) + """

Without --kernel the problem is the paper's: resources/kernels/mm.c with I=J=K=1024 (-D overrides
sizes). A run takes about designs x runs per design x seconds x seeds, plus ~0.3 s per design to
build its model; the estimate printed at the start follows the options given. Each run's budget
starts with its first sample: process start-up (imports, compiled sweeps) is done before. Output: <out>/<study>.csv, <study>.png (methods also convergence.csv/.png) and
summary.txt."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("name", metavar="NAME", help=f"one of {', '.join(STUDIES)}")
    parser.add_argument("-o", "--out", type=Path, help="output folder (default ./study-NAME); must be empty")
    parser.add_argument("--force", action="store_true", help="write into a non-empty output folder")
    parser.add_argument("--seconds", type=positive_seconds, help="budget per design per method (default: per study, above)")
    parser.add_argument("--samples", type=positive_int,
                        help="sample budget per design per method (with or instead of --seconds; "
                             "the MP solves of hybrid and mp runs are timed, not counted in samples)")
    parser.add_argument("--seeds", type=positive_int, default=1, help="repeat each search with seeds 0..N-1 (default 1)")
    parser.add_argument("--designs", nargs="+", action="extend", default=[], metavar="ID", help="only these designs")
    parser.add_argument("--methods", nargs="+", metavar="METHOD", help="methods study: the methods to compare")
    parser.add_argument("--kernel", type=Path, help="C kernel (default: mm.c at the paper's 1024^3)")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                        help="override a #define of the kernel (repeatable)")
    parser.add_argument("--preset", metavar="NAME", help="a named size preset of a bundled kernel")
    parser.add_argument("--scop", type=positive_int, metavar="N",
                        help="the N-th #pragma scop region of a --kernel file with several (1 = the first)")
    parser.add_argument("--device", default="u250")
    parser.add_argument("--best-known", type=Path, default=BEST_KNOWN, metavar="JSON",
                        help="methods study: best-known latencies to normalise to (default bench/best_known.json)")
    parser.add_argument("--quiet", action="store_true", help="no per-run progress on stderr")


def run(args: argparse.Namespace) -> int:
    study = STUDIES.get(args.name)
    if study is None:
        raise EngineError(f"unknown study '{args.name}' (known: {', '.join(STUDIES)})")
    if args.methods and args.name != "methods":
        raise EngineError("--methods applies to the methods study only")
    if args.name == "methods" and args.best_known is not None and args.best_known.exists():
        table = read_json(args.best_known, "best-known file")  # size, encoding and depth checked before any work
        if not isinstance(table, dict) or not isinstance(table.get("designs", {}), dict):
            raise EngineError(f"{args.best_known}: a best-known file is a JSON object with a \"designs\" object "
                              f"(see bench/best_known.json)")
    out = args.out or Path(f"study-{args.name}")
    prepare_output(out, force=args.force)  # fail before any long work
    kernel = args.kernel or DEFAULT_KERNEL
    # the same input and size checks as search (unused -D names, sizes the models count exactly)
    space = compile_from_args(argparse.Namespace(
        kernel=kernel, preset=None, simd_info=None, scop=args.scop,
        defines=([] if args.kernel else PAPER_DEFINES) + (preset_defines(kernel, args.preset) if args.preset else [])
        + list(args.defines)))
    device = load_device(args.device)
    seconds = args.seconds if args.seconds is not None or args.samples is not None else study.seconds
    log = (lambda message: print(message, file=sys.stderr, flush=True)) if not args.quiet else None
    if log:  # from the options given: designs, budget, seeds, methods
        designs = len(args.designs) or (len(space.designs) if study.kind == "search" or args.kernel else None)
        log(f"study {args.name}: " + study.estimate(designs=designs, seconds=args.seconds, samples=args.samples,
                                                    seeds=args.seeds,
                                                    runs=len(args.methods) if args.methods else None))
    extra = {"methods": args.methods, "best_known": args.best_known} if args.name == "methods" else {}
    report = study.run(space, device, designs=args.designs or None, seconds=seconds, samples=args.samples,
                       seeds=args.seeds, out_dir=out, force=True, log=log, **extra)
    print(report.text(), end="")
    print(f"written to {out}/")
    return 0
