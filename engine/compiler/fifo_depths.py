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
  drains (the same FIFO kind, data flowing back) likewise;
- a FIFO that feeds operands into PEs (`to_pe`, `to_boundary_pe`, an input `pe_chain`) holds the
  skew of the PEs it feeds, capped at one tile of PE iterations. PEs that pass partial results to
  each other every iteration (a reduction along a space loop) run as a wavefront: a PE lags its
  neighbour by the PE's pipeline depth, CHAIN_HOP cycles more than its feeder lags the neighbouring
  feeder (operands alone move between PEs as fast as between feeders: no skew). The feeders,
  barrier-synchronised per tile by their ping-pong buffers, must write a tile's words well before a
  far PE reads them; with 2 words each tile paid the skew again.
  The cycle simulator and the timed C simulation measured it (MM 64^3 `k__i-j.k` i_t1=16 j_t1=16
  k_t1=8 i_t2=4 j_t2=4, float, 8 PEs on a reduction chain: 19,135 simulated cycles with 2 words,
  17,230 with one tile (64 words), 16,983 predicted; `j-k__i-j.k` int16: 5,880 with 2 words, 5,670
  with 16). These FIFOs are shift registers (SRL, SRL_WORDS words per LUT and bit), which the
  models count as LUTs.
"""
from __future__ import annotations

from functools import lru_cache

import sympy

from engine.compiler.architecture.modules import Fifo, Module
from engine.compiler.expressions import evaluate, expression, smin

DEFAULT_DEPTH = 2
CHAIN_HOP = 2  # cycles a module lags the neighbour it receives words from (one FIFO hop)
SRL_WORDS = 32  # words of a shift-register FIFO per LUT and bit
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


def skew_depth(pattern: str, reversed_: bool, along: str | None, space: list[str], pes: list,
               hops: dict[str, int], per_tile) -> sympy.Expr | None:
    """The depth the skew rule asks for, None where it does not apply. `pes[i]` PEs along
    `space[i]`; `hops[loop]` the cycles a PE lags its neighbour along a space loop (0 where nothing
    flows between PEs along it); `per_tile` the PE iterations of one tile (one word each)."""
    if reversed_ or pattern not in ("to_pe", "to_boundary_pe", "pe_chain"):
        return None
    if pattern == "pe_chain":
        lag = sympy.Integer(hops.get(along, 0))
    else:
        lag = sympy.Add(*((sympy.sympify(n) - 1) * hops.get(loop, 0)
                          for loop, n in zip(space, pes) if loop != along))
    if lag.is_number and lag <= DEFAULT_DEPTH:
        return None
    return smin(lag, sympy.sympify(per_tile))


def pe_hops(fifos: list[tuple[str, str, str | None, bool]], reduction_chains: set[str], pe_depth: int) -> dict[str, int]:
    """Lag between neighbouring PEs along each space loop, against their feeders: `fifos` as
    (pattern, array, along, reversed); `reduction_chains` the space loops along which partial
    results pass every iteration."""
    # operands alone move from PE to PE as fast as the feeders' own chains move them, so only the
    # slower hop of partial sums skews the PEs against their feeders
    return {along: pe_depth - CHAIN_HOP for pattern, _, along, _ in fifos
            if pattern == "pe_chain" and along in reduction_chains}


def architecture_skew_depth(fifo: Fifo, arch) -> sympy.Expr | None:
    """`skew_depth` of a FIFO kind of the compiler's architecture."""
    pe = arch.module("PE")
    chains = {g.exterior_loop for g in arch.groups if g.kind == "acc" and g.exterior_loop in g.invariant}
    hops = pe_hops([(f.pattern, f.array, f.along, f.reversed) for f in arch.fifos], chains, pe.depth)
    compute = next(p for p in pe.phases if p.name == "compute")
    tiles = sympy.Mul(*(loop.trip for loop in compute.loops if loop.role == "tile"))
    return skew_depth(fifo.pattern, fifo.reversed, fifo.along, list(arch.space_loops), list(arch.pe_grid),
                      hops, compute.iterations / tiles)


def architecture_row_block_depth(fifo: Fifo, modules: dict[str, Module]) -> sympy.Expr | None:
    """`row_block_depth` of a FIFO kind of the compiler's architecture (the MP bounds its BRAM)."""
    row = modules[fifo.target]  # drains list their FIFOs against the data flow: the L1 side is the target
    buffer = next(iter(row.buffers), None)
    return row_block_depth(fifo.pattern, fifo.count, fifo.pack, row.count, None if buffer is None else buffer.elements)


def architecture_fifo_depth(fifo: Fifo, modules: dict[str, Module], arch=None) -> sympy.Expr:
    """Depth of a FIFO kind of the compiler's architecture, symbolically (the models count the
    block RAM of deep FIFOs with it); the skew rule needs the whole `arch`."""
    deep = architecture_row_block_depth(fifo, modules)
    if deep is None and arch is not None:
        deep = architecture_skew_depth(fifo, arch)
    return sympy.Integer(DEFAULT_DEPTH) if deep is None else sympy.Max(DEFAULT_DEPTH, deep)


def fifo_depth(fifo: dict, values: dict[str, int], descriptor: dict) -> int:
    """Words one FIFO of this kind (an entry of descriptor `topology.fifos`) can hold."""
    row = next(m for m in descriptor["topology"]["modules"] if m["name"] == fifo["target"])
    buffer = next(iter(row["buffers"]), None)
    text = _rule_text(fifo["pattern"], fifo["count"], fifo["pack"], row["count"],
                      None if buffer is None else buffer["elements"])
    depth = round(evaluate(text, values))
    skew = _skew_text(fifo["pattern"], fifo["reversed"], fifo["along"], _skew_context(descriptor))
    return depth if skew is None else max(depth, round(evaluate(skew, values)))


def fifo_storage(fifo: dict, values: dict[str, int], descriptor: dict) -> str | None:
    """Where a deepened FIFO lives, as the models count it: "bram" under the row rule, "srl" (shift
    registers) under the skew rule; None for the default depth (HLS's choice, registers)."""
    row = next(m for m in descriptor["topology"]["modules"] if m["name"] == fifo["target"])
    buffer = next(iter(row["buffers"]), None)
    if round(evaluate(_rule_text(fifo["pattern"], fifo["count"], fifo["pack"], row["count"],
                                 None if buffer is None else buffer["elements"]), values)) > DEFAULT_DEPTH:
        return "bram"
    skew = _skew_text(fifo["pattern"], fifo["reversed"], fifo["along"], _skew_context(descriptor))
    return "srl" if skew is not None and round(evaluate(skew, values)) > DEFAULT_DEPTH else None


def _skew_context(descriptor: dict) -> tuple:
    """What the skew rule reads of a descriptor, hashable (for the cache below)."""
    topo = descriptor["topology"]
    pe = next(m for m in topo["modules"] if m["kind"] == "pe")
    chains = tuple(sorted(g["exterior_loop"] for g in descriptor["io_groups"]
                          if g["kind"] == "acc" and g["exterior_loop"] in g["invariant_loops"]))
    compute = next(p for p in pe["phases"] if p["name"] == "compute")
    tiles = tuple(loop["trip"] for loop in compute["loops"] if loop["role"] == "tile")
    fifos = tuple((f["pattern"], f["array"], f["along"], f["reversed"]) for f in topo["fifos"])
    return (tuple(topo["space_loops"]), tuple(topo["pe_grid"]), pe["pipeline_depth"], chains,
            compute["iterations"], tiles, fifos)


@lru_cache(maxsize=1024)
def _skew_text(pattern: str, reversed_: bool, along: str | None, context: tuple) -> str | None:
    space, grid, pe_depth, chains, iterations, tiles, fifos = context
    hops = pe_hops(list(fifos), set(chains), pe_depth)
    per_tile = expression(iterations) / sympy.Mul(*(expression(t) for t in tiles))
    skew = skew_depth(pattern, reversed_, along, list(space), [expression(g) for g in grid], hops, per_tile)
    return None if skew is None else str(skew)


@lru_cache(maxsize=1024)
def _rule_text(pattern: str, count: str, pack: str, row_count: str, row_elements: str | None) -> str:
    # the topology graph asks once per FIFO kind and graph: keep sympy out of that loop
    return str(depth_rule(pattern, expression(count), expression(pack), expression(row_count),
                          None if row_elements is None else expression(row_elements)))


def fifo_depths(descriptor: dict, values: dict[str, int]) -> dict[tuple[str, str, str, str], int]:
    """Depth of every FIFO kind, keyed by (source, target, array, pattern)."""
    return {(f["source"], f["target"], f["array"], f["pattern"]): fifo_depth(f, values, descriptor)
            for f in descriptor["topology"]["fifos"]}
