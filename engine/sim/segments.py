"""Small pieces the simulator's hardware builder (engine/sim/hardware.py, engine/sim/pe_threads.py)
composes threads from: values of descriptor expressions, FIFO operations placed over a segment's
iterations, buffer tokens around segments, word counts, channel guards."""
from __future__ import annotations

import math

import numpy as np
import sympy

from engine.compiler.architecture.local_arrays import condition_holds, parse_c_condition
from engine.compiler.expressions import evaluate
from engine.errors import DesignError
from engine.sim.kernel import Fifo, Op, Segment

IO_LATENCY = 2  # cycles from an I/O iteration's issue to its word arriving downstream
BUFFER_TOKENS = 2  # ping-pong


def int_value(text: str, values: dict) -> int:
    """A descriptor expression's value at `values`, rounded to an integer."""
    return round(evaluate(text, values))


def with_tokens(segs: list[Segment], take: Fifo, give: Fifo) -> Segment:
    """A single segment that also takes a buffer token at its start and gives one at its end."""
    (seg,) = segs
    return Segment(seg.n, seg.reads + (Op(take, 1, 0, 1),), seg.writes + (Op(give, 1, seg.n - 1, 1),),
                   ii=seg.ii, depth=seg.depth, latency=seg.latency)


def spread(f: Fifo, count: int, first: float, share: float, n: int) -> Op:
    span = min(n, max(count, math.ceil(n * share)))
    start = min(n - span, math.floor(n * first + 1e-9))
    return Op(f, count, start, span)


def between(f: Fifo, count: int, first: int, last: int, read: bool) -> Op:
    """`count` words spread evenly from iteration `first` to iteration `last`, the first and the last
    word on those iterations (the placement engine/csim/timed.py gives a traced stream access)."""
    span = max(count * (last - first) // (count - 1), count) if count > 1 else 1
    return Op(f, count, first if read else last - span + 1, span)


def word_count(elements: int, pack: int) -> int:
    return -(-elements // max(pack, 1))


def pack_of(f: Fifo, entries) -> int:
    return next(k["pack"] for g, k, _ in entries if g is f)


def coefficients(text: str, band: list[str]) -> dict[str, int]:
    expr = sympy.sympify(text, locals={l: sympy.Symbol(l) for l in band})
    return {l: int(expr.coeff(sympy.Symbol(l))) for l in band if expr.coeff(sympy.Symbol(l)) != 0}


def parse_guard(condition: str) -> list[list[tuple[str, str]]]:
    """A channel guard as `parse_c_condition` reads it; a design error when it cannot."""
    try:
        return parse_c_condition(condition)
    except ValueError as exc:
        raise DesignError(f"simulator: {exc}") from None


def holds(condition: list, point: dict, shape: list[int]) -> np.ndarray:
    return condition_holds(condition, point, shape)


def node_name(node) -> str:
    name, index = node
    return f"{name}({','.join(map(str, index))})" if index else name
