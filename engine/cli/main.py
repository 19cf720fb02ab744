"""`systolic` entry point: parse arguments, run a subcommand, turn engine errors into one line + exit 2.

Ctrl-C while the engine's libraries are still being imported (the first second or so) exits quietly
with status 130 instead of printing a traceback from inside an import; subcommands that have work
to save (search) install their own handlers for SIGINT, SIGTERM and SIGHUP.
"""
from __future__ import annotations

import os
import signal
import sys


def _quit_while_starting(_signum, _frame):
    sys.stderr.write("interrupted\n")
    os._exit(130)


# only when this process is the `systolic` command (not a test or the app importing it), and before
# the heavy imports below
if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "systolic":
    signal.signal(signal.SIGINT, _quit_while_starting)

import argparse  # noqa: E402

from engine.cli import (  # noqa: E402
    certify, csim, designs, export, floorplan, mapping, model, network, pods, runs, search, simulate, study)
from engine.cli.kernel_args import add_sa_sizes_argument, apply_sa_sizes  # noqa: E402
from engine.errors import EngineError  # noqa: E402

SUBCOMMANDS = {"designs": designs, "model": model, "search": search, "runs": runs, "study": study,
               "export": export, "csim": csim, "simulate": simulate, "mapping": mapping, "network": network,
               "pods": pods, "certify": certify, "floorplan": floorplan}
CONFIGURATION_COMMANDS = ("model", "simulate", "export", "floorplan")  # they take --sa-sizes as well as --design/--param


class _Parser(argparse.ArgumentParser):
    """Argument errors in one line (`systolic search: error: argument --seed: ...`), exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="systolic", description="Explore systolic arrays for a C loop nest.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module in SUBCOMMANDS.items():
        module.add_arguments(sub.add_parser(name, help=module.HELP, description=module.HELP))
        if name in CONFIGURATION_COMMANDS:
            add_sa_sizes_argument(sub.choices[name])
    return parser


def main(argv: list[str] | None = None) -> int:
    if signal.getsignal(signal.SIGINT) is _quit_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or an argument error already printed (2): a status, not an exception
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.command in CONFIGURATION_COMMANDS:
            apply_sa_sizes(args)
        return SUBCOMMANDS[args.command].run(args)
    except EngineError as exc:
        _report(f"error: {one_line(exc)}")
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a file the engine did not expect to fail (disk full, closed terminal, ...)
        where = f"{exc.filename}: " if exc.filename else ""
        _report(f"error: {where}{exc.strerror or exc}")
        return 2
    except MemoryError:
        _report("error: out of memory (try smaller sizes or a smaller configuration)")
        return 2


def one_line(exc: Exception) -> str:
    """An error's message as the one line the CLI promises (a library's message may span lines or end
    in a newline), never empty."""
    text = "; ".join(part.strip() for part in str(exc).splitlines() if part.strip())
    return text if text and not text.endswith(":") else f"{text} {type(exc).__name__} (no reason given)".strip()


def _report(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
