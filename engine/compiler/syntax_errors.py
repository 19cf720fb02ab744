"""pycparser ParseError -> KernelError at the place a person would look.

pycparser reports the token *after* a mistake ("before: C" on the next line for a missing ';'), and
for some errors ("Invalid expression", "At end of input") only the file name. We point a token that
starts a line back at the end of the previous line, and recover the position of the last token the
parser read when the message has none.
"""
from __future__ import annotations

import re
from pathlib import Path

import pycparser

from engine.compiler.preprocess import source_name
from engine.errors import KernelError, SourceLocation


def syntax_error(exc: pycparser.c_parser.ParseError, parser: pycparser.CParser, path: str) -> KernelError:
    message = str(exc)
    match = re.match(r"^(.*?):(\d+):(\d+): (.*)$", message)
    if match:
        file, line, column, reason = match.groups()
        return _at_token(source_name(file), int(line), int(column), reason)
    reason = message.split(": ", 1)[1] if ": " in message else message
    if "end of input" in reason.lower():
        lines = _source_lines(path)
        last = next((n for n in range(len(lines), 0, -1) if lines[n - 1].strip()), None)
        return KernelError("syntax error: the file ends inside a block (a '{' or '(' that is never "
                           "closed?)", SourceLocation(path, last))
    token = _last_token(parser)
    if token is None:
        return KernelError(f"syntax error: {reason}", SourceLocation(path))
    return KernelError(f"syntax error: {reason.lower()} at '{token.value}'",
                       SourceLocation(source_name(token.filename) if token.filename else path, token.lineno,
                                      token.column))


def _at_token(file: str, line: int, column: int, reason: str) -> KernelError:
    lines = _source_lines(file)
    token = reason[len("before: "):] if reason.startswith("before: ") else None
    starts_line = lines and 1 <= line <= len(lines) and lines[line - 1][:column - 1].strip() in ("", "#")
    if token is not None and starts_line:
        previous = next((n for n in range(line - 1, 0, -1) if lines[n - 1].strip()), None)
        if previous is not None:
            end = len(lines[previous - 1].rstrip()) + 1
            return KernelError(f"syntax error at the end of this line: missing ';' or operator before "
                               f"'{token}' on the next line?", SourceLocation(file, previous, end))
    text = f"syntax error before '{token}'" if token is not None else f"syntax error: {reason}"
    return KernelError(text, SourceLocation(file, line, column))


def _last_token(parser: pycparser.CParser):
    # pycparser keeps the tokens it has read in its token stream; private, so fail soft.
    stream = getattr(parser, "_tokens", None)
    buffer = getattr(stream, "_buffer", None)
    index = getattr(stream, "_index", None)
    if not buffer or index is None:
        return None
    return buffer[min(index, len(buffer) - 1)]


def _source_lines(file: str) -> list[str]:
    try:
        return Path(file).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
