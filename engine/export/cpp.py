"""Indented C/C++ text, built line by line: the small writer both C++ emitters share."""
from __future__ import annotations

from contextlib import contextmanager


class Code:
    def __init__(self, indent: str = "  "):
        self.lines: list[str] = []
        self.depth = 0
        self.indent = indent

    def line(self, text: str = "") -> None:
        self.lines.append(self.indent * self.depth + text if text else "")

    def pragma(self, text: str) -> None:
        self.lines.append(f"#pragma {text}")

    @contextmanager
    def block(self, head: str, tail: str = "}"):
        self.line(head + " {")
        self.depth += 1
        yield
        self.depth -= 1
        self.line(tail)

    @contextmanager
    def loops(self, loops: list[tuple[str, str, int]], *, pipeline: bool = False, ii: int = 1):
        """Nested `for (int var = 0; var < trip; var++)` with labels; the pipeline pragma (II `ii`)
        opens the innermost body, so the nest is one pipelined loop. Loops of trip 1 are still
        written, so that indices keep their names."""
        for label, var, trip in loops:
            self.line(f"{label}:")
            self.line(f"for (int {var} = 0; {var} < {trip}; {var}++) {{")
            self.depth += 1
        if pipeline:
            self.pragma(f"HLS pipeline II={ii}")
        yield
        for _ in loops:
            self.depth -= 1
            self.line("}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def product(terms: list[str]) -> str:
    terms = [t for t in terms if t != "1"]
    return " * ".join(terms) if terms else "1"


def total(terms: list[str]) -> str:
    terms = [t for t in terms if t != "0"]
    return " + ".join(terms) if terms else "0"
