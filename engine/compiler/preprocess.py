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

The kernel and its headers are untrusted files: each must be a regular file of at most
MAX_SOURCE_BYTES, UTF-8 with or without a BOM (engine/validation.py), checked before it is read; a
macro is expanded only where it is used, and expansions may add at most MAX_EXPANDED_TOKENS tokens
in all (`#define A B B`, `#define B C C`, ... doubles at each level), else a one-line refusal.
"""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pcpp

from engine.errors import KernelError, SourceLocation
from engine.validation import check_regular_file, decode_text

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
_BARE_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]*(?=\r?$)", re.M)
MAX_SOURCE_BYTES = 512 * 1024  # pcpp reads ~60k tokens a second: a kernel file of this size takes seconds
MAX_EXPANDED_TOKENS = 200_000  # tokens macro expansion may add to the whole translation unit


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
        name, equals, value = pair.partition("=")
        name = name.strip()
        if not name.isidentifier():
            raise KernelError(f"bad -D option '{pair}': expected NAME=VALUE with NAME a C identifier")
        if equals and not value.strip():
            raise KernelError(f"bad -D option '{pair}': no value after '=' (write {name}=64, or {name} alone for 1)")
        defines[name] = value.strip() or "1"
    return defines


class _Preprocessor(pcpp.Preprocessor):
    def __init__(self, overrides: dict[str, str]):
        super().__init__()
        self.line_directive = "#line"
        self.overrides = overrides
        self.errors: list[tuple[str, int, str]] = []
        self.include_stack: list[str] = []  # absolute paths of the files being read, outermost first
        self.expanded = 0  # tokens added by macro expansion so far (MAX_EXPANDED_TOKENS)
        self._at = None  # the first macro of the line being expanded
        self._depth = 0  # nested expand_macros calls
        for name, value in overrides.items():
            self.define(f"{name} {value}")

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        if is_system_include or includepath in SYSTEM_HEADERS:
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
        line = self.lastdirective.lineno if self.lastdirective else None
        self.errors.append((self.lastdirective.source if self.lastdirective else "", line,
                            f'cannot find included file "{includepath}" next to the kernel'))
        raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

    def on_file_open(self, is_system_include, includepath):
        """A header: a regular file of at most MAX_SOURCE_BYTES in UTF-8 (with or without a BOM); a
        header that is not is an error naming it (and read as empty, so the first error is reported)."""
        if not os.path.exists(includepath):
            raise FileNotFoundError(includepath)  # pcpp then tries the next folder
        try:
            check_regular_file(includepath, "included file", MAX_SOURCE_BYTES, KernelError)
            with open(includepath, "rb") as f:
                return io.StringIO(decode_text(f.read(MAX_SOURCE_BYTES + 1), includepath, "included file",
                                               KernelError))
        except KernelError as exc:
            where = exc.location
            self.errors.append((self._shown(where.file), where.line, exc.reason))
        except OSError as exc:
            self.errors.append((self._shown(includepath), None, f"cannot read the included file: {exc.strerror}"))
        return io.StringIO("")

    def _shown(self, path: str) -> str:
        for pattern, replacement in self.rewrite_paths:
            shown = re.sub(pattern, replacement, path)
            if shown != path:
                return shown
        return path

    def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 (pcpp's signature)
        if not self._depth:  # a line of the source (or an #if): where a refusal points
            self._at = next((t for t in tokens if t.type == "CPP_ID" and t.value in self.macros), None)
        before = len(tokens)  # pcpp expands the list in place
        self._depth += 1
        try:
            result = super().expand_macros(tokens, expanding_from)
        finally:
            self._depth -= 1
        self.expanded += max(0, len(result) - before)
        if self.expanded > MAX_EXPANDED_TOKENS:
            at = self._at
            name = at.value if at else expanding_from[0] if expanding_from else "?"
            file = (getattr(at, "source", "") if at else "") or (self.include_stack[-1] if self.include_stack else "")
            raise KernelError(f"preprocessor: expanding macro '{name}' adds more than {MAX_EXPANDED_TOKENS:,} "
                              f"tokens (a macro made of copies of copies?); the limit is {MAX_EXPANDED_TOKENS:,}",
                              SourceLocation(self._shown(file) or "<kernel>", at.lineno if at else None))
        return result

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
        # a `#pragma` with nothing after it is ignored, as C compilers do (pcpp fails on it with an
        # IndexError); the line stays, so later lines keep their numbers
        input = _BARE_PRAGMA.sub("", input)
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
        if directive.value in ("define", "undef", "ifdef", "ifndef", "if", "elif") and \
                all(t.type in ("CPP_WS", "CPP_COMMENT1", "CPP_COMMENT2") for t in toks):
            # pcpp itself fails with an IndexError on these
            needs = "an expression (e.g. #if N > 8)" if directive.value in ("if", "elif") else \
                f"a macro name (e.g. #{directive.value} N)"
            self.on_error(getattr(directive, "source", None), directive.lineno, f"#{directive.value} needs {needs}")
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
        if directive.value == "define" and toks and toks[0].value in self.overrides:
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
        return super().on_directive_handle(directive, toks, ifpassthru, precedingtoks)

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
        if directive.value == "error":  # pcpp prints it and goes on; a C compiler stops
            text = "".join(tok.value for tok in toks).strip()
            self.on_error(getattr(directive, "source", None), directive.lineno, f"#error {text}".strip())
            return True
        return super().on_directive_unknown(directive, toks, ifpassthru, precedingtoks)

    def on_error(self, file, line, msg):
        self.errors.append((file, line, msg))


def preprocess(path: str | Path, defines=None) -> PreprocessedSource:
    path = Path(path)
    if "\n" in str(path) or "\r" in str(path):
        raise KernelError("the kernel's path holds a line break, which C line markers cannot carry: rename "
                          "the file or its folder", SourceLocation(repr(str(path))))
    if not path.exists():
        raise KernelError("no such kernel file (expected a C file with a #pragma scop region)",
                          SourceLocation(str(path)))
    check_regular_file(path, "kernel file", MAX_SOURCE_BYTES, KernelError)
    try:
        data = path.read_bytes()[:MAX_SOURCE_BYTES + 1]
    except OSError as exc:
        raise KernelError(f"cannot read the kernel file: {exc.strerror or exc}", SourceLocation(str(path))) from None
    source = decode_text(data, str(path), "kernel file", KernelError)
    overrides = parse_defines(defines)
    pp = _Preprocessor(overrides)
    pp.add_path(str(path.parent))
    # Name files in messages the way the user named the kernel, not relative to the cwd.
    folder = "" if str(path.parent) == "." else str(path.parent) + "/"
    if os.sep == "\\":
        folder = folder.replace("\\", "/")
    pp.rewrite_paths = [(re.escape(str(path.parent.resolve()) + os.sep) + "(.*)",
                         folder.replace("\\", "\\\\") + "\\1")]  # (a backslash in a replacement is an escape)
    pp.parse(source, str(path))
    out = io.StringIO()
    pp.write(out)
    if pp.errors:
        file, line, msg = pp.errors[0]
        raise KernelError(f"preprocessor: {msg}", SourceLocation(file or str(path), line))
    body = re.sub(r'^(#line \d+ )"(.*)"$', lambda m: f'{m[1]}"{marker_name(m[2])}"', out.getvalue(), flags=re.M)
    text = f'#line 1 "<prelude>"\n{PRELUDE}#line 1 "{marker_name(str(path))}"\n{body}'
    return PreprocessedSource(str(path), text, source, _integer_macros(pp, source))


def marker_name(name: str) -> str:
    """A file name as a C string in a `#line` marker (a quote or backslash in a folder name escaped)."""
    return name.replace("\\", "\\\\").replace('"', '\\"')


def source_name(marker: str) -> str:
    """The file name a `#line` marker's string stands for (pycparser keeps the escapes)."""
    return re.sub(r"\\(.)", r"\1", marker) if "\\" in marker else marker


def _integer_macros(pp: _Preprocessor, source: str) -> dict[str, int]:
    """The object-like macros the kernel file's code uses (or a macro it uses names) whose value is an
    integer constant: only those, as a macro nobody uses must cost nothing."""
    sizes: dict[str, int] = {}
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
    used, frontier = set(), set(re.findall(r"[A-Za-z_]\w*", code))
    while frontier:
        used |= frontier
        frontier = {tok.value for name in frontier if name in pp.macros for tok in pp.macros[name].value
                    if tok.type == "CPP_ID"} - used
    for name, macro in list(pp.macros.items()):
        if name.startswith("__") or macro.arglist is not None or name not in used:
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
