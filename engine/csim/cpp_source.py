"""Vitis HLS C++ source text -> what the instrumentation reads from it: the text with comments and
literals blanked, each line's brace depth and matching closing line, the top-level functions with
their parameters, call arguments split at top-level commas (engine/csim/trace.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import EngineError

_FUNCTION = re.compile(r"^\s*(?:static\s+|inline\s+|extern\s+\"C\"\s+)*[\w:<>,\s*&]+?\b(\w+)\s*\((.*)\)\s*\{\s*$")


class TraceError(EngineError):
    """The kernel source does not follow the conventions the instrumentation relies on."""


def strip_code(text: str) -> str:
    """Comments and the contents of string / character literals blanked (same length, same lines)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_args(text: str) -> list[str]:
    args, depth, current = [], 0, []
    for ch in text:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        args.append("".join(current).strip())
    return args


@dataclass
class Function:
    name: str
    params: list[str]
    open: int
    close: int
    inline_off: bool


class Source:
    def __init__(self, text: str, path: str):
        self.path = path
        self.lines = text.split("\n")
        self.code = strip_code(text).split("\n")
        self.close: dict[int, int] = {}  # line -> line of the '}' matching the line's last '{'
        self.depth: list[int] = []  # brace depth at the start of each line
        stack: list[tuple[int, int]] = []
        closes: dict[tuple[int, int], int] = {}
        last_open: dict[int, int] = {}
        for k, line in enumerate(self.code):
            self.depth.append(len(stack))
            for col, ch in enumerate(line):
                if ch == "{":
                    stack.append((k, col))
                    last_open[k] = col
                elif ch == "}":
                    if not stack:
                        raise TraceError(f"{path}:{k + 1}: unbalanced '}}'")
                    closes[stack.pop()] = k
        if stack:
            raise TraceError(f"{path}:{stack[-1][0] + 1}: '{{' is never closed")
        self.close = {k: closes[(k, col)] for k, col in last_open.items()}

    def code_line(self, k: int) -> str:
        return self.code[k].strip()

    def prev_code(self, k: int) -> int:
        k -= 1
        while k >= 0 and not self.code_line(k):
            k -= 1
        return k

    def next_code(self, k: int) -> int:
        k += 1
        while k < len(self.code) and not self.code_line(k):
            k += 1
        return k

    def where(self, k: int) -> str:
        return f"{self.path}:{k + 1}"


def parse_functions(src: Source) -> dict[str, Function]:
    functions = {}
    for k, line in enumerate(src.code):
        if src.depth[k] != 0 or not line.rstrip().endswith("{"):
            continue
        m = _FUNCTION.match(src.lines[k])
        if not m or m.group(1) in ("if", "for", "while", "switch", "struct", "class", "namespace"):
            continue
        close = src.close.get(k)
        if close is None:
            continue
        body = range(k + 1, close)
        inline_off = any(re.match(r"^\s*#\s*pragma\s+HLS\s+inline\s+off\b", src.lines[j], re.IGNORECASE) for j in body)
        functions[m.group(1)] = Function(m.group(1), split_args(m.group(2)), k, close, inline_off)
    return functions


def function_at(functions: dict[str, Function], k: int) -> Function | None:
    return next((f for f in functions.values() if f.open < k < f.close), None)


def balanced(line: str, start: int) -> str:
    """The text from `start` to the parenthesis that closes the one before it."""
    depth = 1
    for j in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        if depth == 0:
            return line[start:j]
    return line[start:]


def indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]
