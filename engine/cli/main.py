"""`systolic` entry point: parse arguments, run a subcommand, turn engine errors into one line + exit 2."""
from __future__ import annotations

import argparse
import os
import sys

from engine.cli import certify, csim, designs, export, model, runs, search, simulate, study
from engine.errors import EngineError

SUBCOMMANDS = {"designs": designs, "model": model, "search": search, "runs": runs, "study": study,
               "export": export, "csim": csim, "simulate": simulate,
               "certify": certify}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="systolic", description="Explore systolic arrays for a C loop nest.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in SUBCOMMANDS.items():
        module.add_arguments(sub.add_parser(name, help=module.HELP, description=module.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return SUBCOMMANDS[args.command].run(args)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
