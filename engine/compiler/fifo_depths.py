"""Descriptor FIFO kind + concrete parameter values -> FIFO depth in words.

The one place FIFO depths are decided: the HLS exporter emits `#pragma HLS stream depth=` with these
numbers and the cycle simulator (engine/sim) runs with them, so a configuration the simulator finds
free of deadlock is exported with exactly the depths it was simulated with.

Rules:
- every FIFO holds at least AutoSA's default of 2 words, enough for II = 1 between a producer and
  a consumer;
- a FIFO from a level-2 filter to the head of a row of double-buffered level-1 modules
  (`to_row_heads`) holds two blocks of that row, as many as the row's ping-pong buffers. The
  filter serves its rows one after the other (its own row's words first, then those it forwards); with 2 words, a row whose ping-pong buffers are
  both full stops the filter, and with it every later row: the rows then run in turn instead of
  together. The cycle simulator measured this on 2-D arrays whose array is indexed by both space
  loops (MM 64^3 `i-k__i-j.k`, i_t1=60 j_t1=28 k_t1=12 i_t2=12 j_t2=4: 24,233 cycles with 2 words,
  7,241 predicted; 8,596 with one row block, 7,731 with two or three, 7,531 with 256 words);
  drains (the same FIFO kind, data flowing back) likewise.
"""
from __future__ import annotations

from functools import lru_cache

import sympy

from engine.compiler.architecture.modules import Fifo, Module
from engine.compiler.descriptor import evaluate, expression

DEFAULT_DEPTH = 2
BLOCKS = 2  # row blocks a `to_row_heads` FIFO holds: as many as the row's ping-pong buffers


def row_block_depth(pattern: str, count, pack, row_modules, row_elements) -> sympy.Expr | None:
    """The depth the row rule asks for, before the default minimum; None where it does not apply.
    `count` FIFOs of this kind move words of `pack` elements; for `to_row_heads`, `row_modules` is
    the number of level-1 modules they feed (all rows together) and `row_elements` the elements of
    one buffer of one of them (None without a buffer)."""
    if pattern != "to_row_heads" or row_elements is None:
        return None
    per_row = sympy.sympify(row_modules) / sympy.sympify(count)
    return sympy.ceiling(BLOCKS * sympy.sympify(row_elements) * per_row / pack)


def depth_rule(pattern: str, count, pack, row_modules, row_elements) -> sympy.Expr:
    """The rules above as one expression (arguments as for `row_block_depth`)."""
    deep = row_block_depth(pattern, count, pack, row_modules, row_elements)
    return sympy.Integer(DEFAULT_DEPTH) if deep is None else sympy.Max(DEFAULT_DEPTH, deep)


def architecture_row_block_depth(fifo: Fifo, modules: dict[str, Module]) -> sympy.Expr | None:
    """`row_block_depth` of a FIFO kind of the compiler's architecture (the MP bounds its BRAM)."""
    row = modules[fifo.target]  # drains list their FIFOs against the data flow: the L1 side is the target
    buffer = next(iter(row.buffers), None)
    return row_block_depth(fifo.pattern, fifo.count, fifo.pack, row.count, None if buffer is None else buffer.elements)


def architecture_fifo_depth(fifo: Fifo, modules: dict[str, Module]) -> sympy.Expr:
    """Depth of a FIFO kind of the compiler's architecture, symbolically (the models count the
    block RAM of deep FIFOs with it)."""
    deep = architecture_row_block_depth(fifo, modules)
    return sympy.Integer(DEFAULT_DEPTH) if deep is None else sympy.Max(DEFAULT_DEPTH, deep)


def fifo_depth(fifo: dict, values: dict[str, int], descriptor: dict) -> int:
    """Words one FIFO of this kind (an entry of descriptor `topology.fifos`) can hold."""
    row = next(m for m in descriptor["topology"]["modules"] if m["name"] == fifo["target"])
    buffer = next(iter(row["buffers"]), None)
    text = _rule_text(fifo["pattern"], fifo["count"], fifo["pack"], row["count"],
                      None if buffer is None else buffer["elements"])
    return round(evaluate(text, values))


@lru_cache(maxsize=1024)
def _rule_text(pattern: str, count: str, pack: str, row_count: str, row_elements: str | None) -> str:
    # the topology graph asks once per FIFO kind and graph: keep sympy out of that loop
    return str(depth_rule(pattern, expression(count), expression(pack), expression(row_count),
                          None if row_elements is None else expression(row_elements)))


def fifo_depths(descriptor: dict, values: dict[str, int]) -> dict[tuple[str, str, str, str], int]:
    """Depth of every FIFO kind, keyed by (source, target, array, pattern)."""
    return {(f["source"], f["target"], f["array"], f["pattern"]): fifo_depth(f, values, descriptor)
            for f in descriptor["topology"]["fifos"]}
