"""Indented C/C++ text, built line by line: the small writer both C++ emitters share, and the one
rule for the width of the kernel's loop counters and indices (`index_type`)."""
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
        """Nested `for (ap_uint<b> var = 0; var < trip; var++)` (b from `index_type`) with labels;
        the pipeline pragma (II `ii`) opens the innermost body, so the nest is one pipelined loop.
        Loops of trip 1 are still written, so that indices keep their names; no loop at all (a PE
        with no time loop: one point per tile) gets no pipeline pragma."""
        for label, var, trip in loops:
            self.line(f"{label}:")
            self.line(f"{counted_for(var, trip)} {{")
            self.depth += 1
        if pipeline and loops:
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


def index_bits(bound: int) -> int:
    """Bits of an unsigned variable that takes every value in [0, bound], `bound` included.

    The one rule for the kernel's narrow types: a loop counter of trip count n exits when it reaches
    n, so it holds 0..n; an index that stays below n (a PE's grid index, a tile, a position inside a
    box) gets the same width as the counter that produces it, so values pass between them unchanged.
    A bound that depends on an argument (a drain instance's share of a chain) takes the largest value
    the descriptor allows, the same number its `loop_tripcount max` states. Expressions of these
    variables (addresses) are never stored in them: HLS's (and the shim's) arithmetic widens, and the
    named indices derived from them are declared with the width of their own largest value."""
    if bound < 0:
        raise ValueError(f"an index bound cannot be negative ({bound})")
    return max(1, int(bound).bit_length())


def index_type(bound: int) -> str:
    """`ap_uint<b>` holding 0..bound (`index_bits`)."""
    return f"ap_uint<{index_bits(bound)}>"


def counted_for(var: str, trip: int) -> str:
    """The head of a loop `var` = 0 .. trip - 1, with a counter as narrow as `trip` allows."""
    return f"for ({index_type(trip)} {var} = 0; {var} < {trip}; {var}++)"


def pack_type(array: str, pack: int) -> str:
    """The C++ type of a FIFO word of `pack` elements of `array` (`A_x4`, a typedef of packed<A_t, 4>)."""
    return f"{array}_x{pack}"
