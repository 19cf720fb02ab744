"""Untrusted input -> checked values, or an EngineError in one line naming the option or file, the
limit and the value. One checker per kind of input, shared by the subcommands and the engine:

- files: `read_text` reads a regular file of at most MAX_FILE_BYTES (checked before reading, so
  /dev/zero or a FIFO is refused at once) as UTF-8 with or without a BOM; anything else is refused
  naming the file and, for bad bytes, the line;
- JSON: `loads_json` refuses nesting deeper than MAX_JSON_DEPTH before parsing (the json module
  recurses once per level);
- command-line values (argparse types): `seed` (0..2^63-1), `positive_seconds` (finite, > 0),
  `positive_mhz` (a finite clock > 0; `check_clock` bounds it by the device's clock_mhz_max),
  `positive_int`, `nonnegative_number` (finite, >= 0), `workers` (1..cores x WORKERS_PER_CORE),
  `bounded_int(limit, what)` (1..limit, the limit named in the message);
- stored rows: `stored_int`, `stored_number`, `stored_text`, `stored_object` raise StoredRowError
  (a ValueError) naming the column and the value, so a reader can list the row as damaged.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
from pathlib import Path

from engine.errors import EngineError, SourceLocation
from engine.limits import INT64_MAX
MAX_FILE_BYTES = 16 * 2**20  # kernels, headers, workloads, devices, technologies: a few KB in practice
MAX_JSON_DEPTH = 64  # the bundled files nest 4 levels at most
WORKERS_PER_CORE = 4


class InputError(EngineError):
    """A file or a value given to the engine cannot be used as it is."""


class StoredRowError(ValueError):
    """A stored row's column does not hold what the writer stores there."""


# -- files -----------------------------------------------------------------------------------------
def check_regular_file(path: str | Path, what: str = "file", limit: int = MAX_FILE_BYTES,
                       error: type[EngineError] = InputError) -> os.stat_result:
    """stat() a file and refuse what is not a regular file of at most `limit` bytes (before reading it)."""
    where = SourceLocation(str(path))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"cannot read {what}: not found", where) from None
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", where) from None
    if not stat.S_ISREG(info.st_mode):
        kind = ("a folder" if stat.S_ISDIR(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                or stat.S_ISBLK(info.st_mode) else "a pipe" if stat.S_ISFIFO(info.st_mode) else "not a regular file")
        raise error(f"the {what} is {kind}; expected a regular text file", where)
    if info.st_size > limit:
        raise error(f"the {what} holds {info.st_size:,} bytes; the limit is {limit:,} bytes", where)
    return info


def decode_text(data: bytes, file: str, what: str = "file", error: type[EngineError] = InputError) -> str:
    """UTF-8 bytes (a leading BOM dropped) -> text; other encodings refused naming the line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        body, start = exc.object, exc.start  # (after the BOM, if any)
        line = body.count(b"\n", 0, start) + 1
        column = start - (body.rfind(b"\n", 0, start) + 1) + 1
        raise error(f"the {what} is not UTF-8 (byte 0x{body[start]:02x}); save it as UTF-8",
                    SourceLocation(file, line, column)) from None


def read_text(path: str | Path, what: str = "file", limit: int = MAX_FILE_BYTES,
              error: type[EngineError] = InputError) -> str:
    """A regular file of at most `limit` bytes, UTF-8 with or without a BOM, as text."""
    check_regular_file(path, what, limit, error)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)  # the file may have grown since stat()
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", SourceLocation(str(path))) from None
    if len(data) > limit:
        raise error(f"the {what} holds more than {limit:,} bytes; the limit is {limit:,} bytes",
                    SourceLocation(str(path)))
    return decode_text(data, str(path), what, error)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def json_depth(text: str) -> int:
    """The deepest nesting of [ and { in JSON text (strings skipped)."""
    depth = deepest = 0
    for char in re.findall(r"[\[\]{}]", _JSON_STRING.sub('""', text)):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def loads_json(text: str, file: str = "<json>", what: str = "JSON file", max_depth: int = MAX_JSON_DEPTH,
               error: type[EngineError] = InputError):
    """JSON text -> value, refusing nesting deeper than `max_depth` and reporting a syntax error at
    its line and column. NaN and Infinity (which Python's json accepts) are refused."""
    depth = json_depth(text)
    if depth > max_depth:
        raise error(f"the {what} nests {depth} levels deep; the limit is {max_depth}", SourceLocation(file))

    def constant(name):
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON: {exc.msg}", SourceLocation(file, exc.lineno, exc.colno)) from None
    except ValueError as exc:  # NaN / Infinity, or an integer of more than 4300 digits
        raise error(f"not valid JSON: {str(exc).splitlines()[0]}", SourceLocation(file)) from None
    except RecursionError:  # deeper than the interpreter allows despite the check above
        raise error(f"the {what} nests too deep; the limit is {max_depth}", SourceLocation(file)) from None


def read_json(path: str | Path, what: str = "JSON file", error: type[EngineError] = InputError):
    """read_text + loads_json."""
    return loads_json(read_text(path, what, error=error), str(path), what, error=error)


# -- command-line values (argparse types: a bad value is the option's one-line error, exit 2) -------
def _number(text: str, expected: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, not '{text}'") from None


def _integer(text: str, expected: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, not '{text}'") from None


def seed(text: str) -> int:
    """A seed in 0..2^63-1 (what the run database and numpy take)."""
    value = _integer(text, "an integer seed in 0..2^63-1")
    if not 0 <= value <= INT64_MAX:
        raise argparse.ArgumentTypeError(f"the seed must be in 0..2^63-1 = {INT64_MAX}, not {value}")
    return value


def positive_seconds(text: str) -> float:
    """A finite, positive number of seconds."""
    value = _number(text, "a number of seconds")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"the time budget must be positive and finite, not {text}")
    return value


def positive_number(text: str) -> float:
    """A finite number > 0."""
    value = _number(text, "a positive number")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive, finite number, not {text}")
    return value


def nonnegative_number(text: str) -> float:
    """A finite number >= 0."""
    value = _number(text, "a number")
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number of 0 or more, not {text}")
    return value


def positive_mhz(text: str) -> float:
    """A finite, positive clock in MHz (`--clock`; the device's maximum is checked by `check_clock`)."""
    value = _number(text, "a clock in MHz, e.g. 250")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"the clock must be a positive number of MHz, not {text}")
    return value


def check_clock(mhz: float, maximum: float, device: str, where: str) -> float:
    """A kernel clock within (0, the device's clock_mhz_max], else one line naming the limit and its file."""
    if not (math.isfinite(mhz) and 0 < mhz <= maximum):
        raise InputError(f"--clock {mhz:g} MHz: expected a positive clock of at most {maximum:g} MHz, the fastest "
                         f"kernel clock of {device} ('clock_mhz_max' in {where})")
    return mhz


def positive_int(text: str) -> int:
    """An integer in 1..2^63-1 (counts the engine holds in int64)."""
    value = _integer(text, "a positive integer")
    if not 1 <= value <= INT64_MAX:
        raise argparse.ArgumentTypeError(f"expected a positive integer up to 2^63-1, not {value}")
    return value


def bounded_int(limit: int, what: str, *, minimum: int = 1):
    """An argparse type: an integer in minimum..limit; the message names `what` and the limit."""
    def parse(text: str) -> int:
        value = _integer(text, f"a whole number of {what}")
        if not minimum <= value <= limit:
            raise argparse.ArgumentTypeError(f"{what}: {value} is outside {minimum}..{limit:,}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


def max_workers() -> int:
    return (os.cpu_count() or 1) * WORKERS_PER_CORE


def workers(text: str) -> int:
    """Worker processes: 1..cores x WORKERS_PER_CORE (more only queue on the cores and use memory)."""
    value = _integer(text, "a number of worker processes")
    limit = max_workers()
    if not 1 <= value <= limit:
        raise argparse.ArgumentTypeError(f"{value} workers: expected 1..{limit} ({os.cpu_count() or 1} cores x "
                                         f"{WORKERS_PER_CORE})")
    return value


# -- stored rows (a database another process, version or person may have written) ----------------
def stored_int(value, column: str, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise StoredRowError(f"{column} is {_shown(value)}, not an integer in {minimum}..{maximum}")
    return value


def stored_number(value, column: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise StoredRowError(f"{column} is {_shown(value)}, not a finite number of 0 or more")
    return value


def stored_text(value, column: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise StoredRowError(f"{column} is {_shown(value)}, not text")
    return value


def stored_object(value, column: str, kind: type = dict):
    """A JSON column holding an object (or `kind`)."""
    if not isinstance(value, str):
        raise StoredRowError(f"{column} is {_shown(value)}, not JSON text")
    if json_depth(value) > MAX_JSON_DEPTH:
        raise StoredRowError(f"{column} nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise StoredRowError(f"{column} is not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(decoded, kind):
        raise StoredRowError(f"{column} holds a JSON {type(decoded).__name__}, not a {kind.__name__}")
    return decoded


def stored_params(value, column: str) -> dict[str, int]:
    """A JSON object of tuning parameters: identifier -> integer."""
    params = stored_object(value, column)
    for name, v in params.items():
        if not name.isidentifier() or isinstance(v, bool) or not isinstance(v, int) or abs(v) > INT64_MAX:
            raise StoredRowError(f"{column}: parameter {name!r} = {_shown(v)} is not an integer")
    return params


def _shown(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a blob of {len(value)} bytes"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
