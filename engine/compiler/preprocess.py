"""C preprocessing: a kernel file (+ `#include "x.h"` beside it, + `-D NAME=VALUE`) -> plain C text.

Uses pcpp, a C99 preprocessor in pure Python, so no compiler needs to be installed. The output keeps
`#line` markers, so the parser's coordinates point into the user's files. `-D` values win over the
file's own `#define`s (the file's definition of an overridden name is skipped), which is how users
resize a kernel without editing it. System headers (`#include <...>`, and `#include "stdio.h"` as
AutoSA's test kernels write it when no such file is next to the kernel) are skipped; the few typedefs
kernels take from them are supplied by a prelude, and the functions they declare (`rand`, `fabs`,
`printf`) need no declaration for pycparser. `#ifdef`/`#ifndef`/`#if` choose code as a C compiler
would. An include cycle (without an include guard) or a nesting deeper than MAX_INCLUDE_DEPTH is a
one-line error naming the chain.
"""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pcpp

from engine.errors import KernelError, SourceLocation

# Types a kernel file may take from <stdint.h>, <stdio.h>, <stdlib.h> without us parsing those headers.
PRELUDE = """\
typedef signed char int8_t; typedef unsigned char uint8_t;
typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t;
typedef long int64_t; typedef unsigned long uint64_t;
typedef unsigned long size_t; typedef struct __file FILE; typedef _Bool bool;
"""

# Headers of the C library that a kernel may include with quotes or angles; never looked for on disk.
SYSTEM_HEADERS = frozenset({
    "stdio.h", "stdlib.h", "math.h", "stdint.h", "string.h", "assert.h", "float.h", "limits.h",
    "stdbool.h", "stddef.h", "time.h", "inttypes.h", "sys/time.h", "cmath", "cstdio", "cstdlib",
    "cstring", "cstdint", "iostream",
})
MAX_INCLUDE_DEPTH = 32


@dataclass(frozen=True)
class PreprocessedSource:
    path: str
    text: str  # preprocessed C, prelude included, with #line markers
    source: str  # the kernel file as written
    sizes: dict[str, int]  # integer-valued object-like macros, after -D overrides


def parse_defines(pairs: list[str] | tuple[str, ...] | dict[str, int] | None) -> dict[str, str]:
    """`["N=64", "T=float"]` or `{"N": 64}` -> {"N": "64", ...}; a bare `NAME` means NAME=1."""
    if not pairs:
        return {}
    if isinstance(pairs, dict):
        return {str(k): str(v) for k, v in pairs.items()}
    defines: dict[str, str] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        name = name.strip()
        if not name.isidentifier():
            raise KernelError(f"bad -D option '{pair}': expected NAME=VALUE with NAME a C identifier")
        defines[name] = value.strip() or "1"
    return defines


class _Preprocessor(pcpp.Preprocessor):
    def __init__(self, overrides: dict[str, str]):
        super().__init__()
        self.line_directive = "#line"
        self.overrides = overrides
        self.errors: list[tuple[str, int, str]] = []
        self.include_stack: list[str] = []  # absolute paths of the files being read, outermost first
        for name, value in overrides.items():
            self.define(f"{name} {value}")

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        if is_system_include or includepath in SYSTEM_HEADERS:
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
        line = self.lastdirective.lineno if self.lastdirective else None
        self.errors.append((self.lastdirective.source if self.lastdirective else "", line,
                            f'cannot find included file "{includepath}" next to the kernel'))
        raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

    def parsegen(self, input, source=None, abssource=None):
        key = abssource or source or ""
        if key in self.include_stack or len(self.include_stack) >= MAX_INCLUDE_DEPTH:
            if key in self.include_stack and self._guarded(input):
                return  # a guarded header read again: its guard makes it empty, as in a C compiler
            chain = [Path(p).name for p in self.include_stack] + [Path(key).name]
            where = self.lastdirective
            reason = (f"include cycle: {' -> '.join(chain[chain.index(Path(key).name):])}"
                      if key in self.include_stack else
                      f"includes nested deeper than {MAX_INCLUDE_DEPTH} files: {' -> '.join(chain[:4])} -> ...")
            self.errors.append((where.source if where else "", where.lineno if where else None, reason))
            return
        self.include_stack.append(key)
        try:
            yield from super().parsegen(input, source, abssource)
        finally:
            self.include_stack.pop()

    def _guarded(self, text: str) -> bool:
        """`#pragma once`, or `#ifndef X` / `#define X` at the top with X now defined."""
        if re.search(r"^\s*#\s*pragma\s+once\b", text, re.M):
            return True
        match = re.match(r"\s*(?:(?://[^\n]*|/\*.*?\*/)\s*)*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+(\w+)",
                         text, re.S)
        return bool(match and match.group(1) == match.group(2) and match.group(1) in self.macros)

    def on_directive_handle(self, directive, toks, ifpassthru, precedingtoks):
        if directive.value in ("define", "undef", "ifdef", "ifndef") and all(t.type == "CPP_WS" for t in toks):
            # pcpp itself fails with an IndexError on these
            self.on_error(getattr(directive, "source", None), directive.lineno,
                          f"#{directive.value} needs a macro name (e.g. #{directive.value} N)")
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
        if directive.value == "define" and toks and toks[0].value in self.overrides:
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
        return super().on_directive_handle(directive, toks, ifpassthru, precedingtoks)

    def on_error(self, file, line, msg):
        self.errors.append((file, line, msg))


def preprocess(path: str | Path, defines=None) -> PreprocessedSource:
    path = Path(path)
    if not path.is_file():
        raise KernelError("no such kernel file (expected a C file with a #pragma scop region)",
                          SourceLocation(str(path)))
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelError(f"cannot read the kernel file: {exc}", SourceLocation(str(path))) from None
    overrides = parse_defines(defines)
    pp = _Preprocessor(overrides)
    pp.add_path(str(path.parent))
    # Name files in messages the way the user named the kernel, not relative to the cwd.
    folder = "" if str(path.parent) == "." else str(path.parent).replace("\\", "/") + "/"
    pp.rewrite_paths = [(re.escape(str(path.parent.resolve()) + os.sep) + "(.*)", folder + "\\1")]
    pp.parse(source, str(path))
    out = io.StringIO()
    pp.write(out)
    if pp.errors:
        file, line, msg = pp.errors[0]
        raise KernelError(f"preprocessor: {msg}", SourceLocation(file or str(path), line))
    text = f'#line 1 "<prelude>"\n{PRELUDE}#line 1 "{path}"\n{out.getvalue()}'
    return PreprocessedSource(str(path), text, source, _integer_macros(pp))


def _integer_macros(pp: _Preprocessor) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for name, macro in pp.macros.items():
        if name.startswith("__") or macro.arglist is not None:
            continue
        tokens = pp.expand_macros(pp.tokenize(name))
        if any(tok.type == "CPP_ID" for tok in tokens):
            continue  # a type or an undefined name: pcpp would evaluate it as 0
        try:
            value, _ = pp.evalexpr(tokens)
        except Exception:  # not an integer constant expression (a type name, a string): not a size
            continue
        if isinstance(value, int):
            sizes[name] = value
    return sizes
