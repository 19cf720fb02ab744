"""The hardware vocabulary of an architecture: modules, their loop nests, buffers and FIFOs.

Every quantity that depends on the tuning parameters is a sympy expression. A module's work is a
list of phases; a phase is a perfect loop nest whose innermost loop is pipelined (II = 1 unless the
module says otherwise) and whose body moves or computes what `body` says.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy

# A buffer of at most this many bits HLS implements in registers / LUTRAM: no block RAM (the models'
# BRAM count, engine/models/memory.py) and storage "registers" for a PE's local array.
REGISTER_BITS = 1024


@dataclass(frozen=True)
class Loop:
    name: str
    trip: sympy.Expr
    role: str  # tile, pe, time, latency_hiding, transfer, chain


@dataclass(frozen=True)
class Phase:
    name: str  # compute, load (inter_trans), feed (intra_trans), drain, ...
    loops: tuple[Loop, ...]
    body: str
    ii: sympy.Expr = sympy.Integer(1)
    elements: sympy.Expr | None = None  # array elements a transfer phase moves over the run

    @property
    def iterations(self) -> sympy.Expr:
        return sympy.Mul(*(loop.trip for loop in self.loops))

    @property
    def cycles(self) -> sympy.Expr:
        return self.iterations * self.ii


@dataclass(frozen=True)
class Buffer:
    name: str
    array: str
    elements: sympy.Expr  # per buffer (one of the two when double buffered)
    pack: sympy.Expr  # elements per word
    element_bits: int
    double_buffered: bool
    storage: str = "bram"  # bram, uram, or registers for accumulators kept in the PE

    @property
    def width_bits(self) -> sympy.Expr:
        return self.pack * self.element_bits

    @property
    def depth(self) -> sympy.Expr:
        return sympy.ceiling(self.elements / self.pack)


@dataclass(frozen=True)
class Module:
    name: str
    kind: str  # pe, io, drain
    count: sympy.Expr
    grid: tuple[sympy.Expr, ...]
    phases: tuple[Phase, ...]
    array: str | None = None
    level: int | None = None  # 1, 2, 3 for I/O modules; DRAM-facing is the highest level
    dram: bool = False
    overlapped: bool = False  # double buffered: load and feed phases overlap
    buffers: tuple[Buffer, ...] = ()
    depth: int = 1  # pipeline depth in cycles
    embedded_l1: bool = False  # exterior I/O: the L1 module lives inside the PE
    notes: str = ""


@dataclass(frozen=True)
class PackingParameter:
    """A data-packing factor: elements per word on one level of one group's I/O chain.

    Inferred (unless given) as the largest power of two <= `upper` dividing `innermost`, the extent
    of the transferred block along the array's last stored dimension, so words never straddle rows.
    A level that keeps a buffer takes the narrowest such word that still moves its data within the
    PEs' computing time (`rate`: elements per PE cycle), because a wide, shallow buffer spends block
    RAMs on width it does not need. The DRAM-facing level's factor also divides every `step` (where
    tiles, and for drains the PEs' boxes, start along that dimension: AutoSA's rule), so every box
    starts on a bus word and no word straddles two boxes: DRAM moves whole words only.
    """

    name: str
    group: str
    level: int
    innermost: sympy.Expr
    upper: int
    rate: sympy.Expr | None = None
    minimum: sympy.Expr | None = None  # a buffer feeding the PEs: at least the SIMD lanes it feeds per cycle
    steps: tuple[sympy.Expr, ...] = ()  # the DRAM-facing level: where boxes start in a row; the factor divides each
    # the DRAM-facing level: the innermost extent of the boxes its DRAM loop moves (a loader's tile box,
    # partial results read back included; a storer's PE box), the row segment of a natural-layout burst
    dram_row: sympy.Expr | None = None
    # the DRAM-facing level: the boxes its DRAM loop moves, one after another, follow the array's
    # row-major order (the PEs split at most the outermost stored dimension), so a loader of whole
    # blocks and a storer of PE boxes visit the words in one order (a read-back port can be serialized)
    in_row_order: bool = False
    # a drain's DRAM-facing level, where the storer's innermost PE loop runs along the array's
    # innermost stored dimension: the rows of a PE's box (1: the box is one row segment), the PEs
    # along that dimension and the tiles along it. Boxes of one row are written one after another
    # along the row, so a natural-layout run spans the PEs' boxes (and, with one tile along the row,
    # the whole invocation: every row of the tile is a whole row of the array)
    box_rows: sympy.Expr | None = None
    row_pes: sympy.Expr | None = None
    row_tiles: sympy.Expr | None = None


@dataclass(frozen=True)
class Fifo:
    """FIFOs of one kind between two modules. `pattern` says which instances they join:
    to_first (the single upstream module to instance 0), chain (instance k to k + 1 along the
    module's last grid dimension), to_row_heads (row r to instance (r, 0)), to_pe (each instance
    to the PE at the same grid index), to_boundary_pe (instance r to the first PE along `along`
    in line r), pe_chain (PE to the next PE along `along`). Drains use the same patterns with the
    data flowing the other way."""

    source: str
    target: str
    array: str
    count: sympy.Expr
    element_bits: int
    pack: sympy.Expr
    pattern: str
    along: str | None = None  # the space loop of to_boundary_pe / pe_chain
    reversed: bool = False  # True for drains: data flows from target-side instances to source-side

    @property
    def width_bits(self) -> sympy.Expr:
        return self.pack * self.element_bits


@dataclass(frozen=True)
class Architecture:
    """Everything the models, the topology viewer and the exporter need to know about one design."""

    design_id: str
    design_name: str
    kernel: str
    space_loops: tuple[str, ...]
    pe_grid: tuple[sympy.Expr, ...]
    simd: sympy.Expr
    modules: tuple[Module, ...]
    fifos: tuple[Fifo, ...]
    compute: dict  # operations per lane, data types, operator latency
    groups: tuple = field(default_factory=tuple)  # the IOGroups it was built from
    packing: tuple = field(default_factory=tuple)  # PackingParameter, filled by packing.py
    double_buffering: bool = True  # what build_architecture was asked for
    local_arrays: tuple = field(default_factory=tuple)  # LocalArray: arrays declared in the scop (on chip)
    # group name -> isl text of its elements' last writers, for outputs several PEs hold (owned_drain.py)
    last_writers: dict = field(default_factory=dict)
    # isl text of the PEs the array holds where it is not the whole grid (pe_set.py), else None
    pe_set: str | None = None
    # group name -> isl text of the PEs its I/O network reaches, where fewer than those held (io_reach.py)
    io_reach: dict = field(default_factory=dict)

    def module(self, name: str) -> Module:
        return next(m for m in self.modules if m.name == name)
