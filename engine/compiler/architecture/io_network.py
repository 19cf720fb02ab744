"""I/O groups -> I/O modules and FIFOs (AutoSA sec. 6.2-6.3): daisy chains clustered level by level
from the PEs to one DRAM-facing module per group.

For a 2-D array with space loops (s0, s1):
- interior input: L1 modules, one per PE, chained along s1 and holding the PE's tile (double
  buffered); L2 modules, one per PE row, chained along s0; one L3 module reads DRAM;
- exterior input along d: the L1 module is embedded in the PE, which forwards data along d; L2
  modules, one per PE at the boundary of d, hold the boundary slice (double buffered); one L3;
- drains mirror the inputs, from the PEs (interior) or from the last PE along d (exterior);
- an accumulated array whose partial results leave the array between tiles also gets input
  modules (`C_in`); one initialised on chip and finished within a tile gets none (pruned).
A 1-D array has one level less: its L2 module is the DRAM-facing one.
An interior network whose array is read (written) at some PEs only counts the L1 modules of those
PEs and the L2 modules of their rows (`reach`, io_reach.py).
"""
from __future__ import annotations

import sympy

from engine.compiler.architecture.footprint import footprint, innermost_extent
from engine.compiler.architecture.io_groups import IOGroup
from engine.compiler.architecture.modules import Buffer, Fifo, Loop, Module, PackingParameter, Phase
from engine.compiler.architecture.symbols import DesignSymbols, symbol
from engine.compiler.expressions import smin
from engine.compiler.tuning import WORD_BITS

AXI_BITS = WORD_BITS  # the widest bus word (engine/compiler/tuning.py, which bounds SIMD by it too)


class _GroupNetwork:
    """Builds the modules and FIFOs of one group in one direction (`in` or `out`)."""

    def __init__(self, syms: DesignSymbols, group: IOGroup, direction: str, events: sympy.Expr,
                 double_buffering: bool, reach: tuple[sympy.Expr, sympy.Expr] | None = None):
        self.syms, self.g, self.direction, self.events = syms, group, direction, events
        self.double_buffering = double_buffering
        self.space = syms.design.space_loops
        # an interior network over the PEs the group reaches (io_reach.py): its L1 instances and
        # the rows of them an L2 level serves; every PE and every row otherwise
        self.reached, self.rows = reach if reach is not None else (
            syms.pe_count, syms.pes(self.space[0]) if len(self.space) == 2 else sympy.Integer(1))
        self.top = len(self.space) + 1  # DRAM-facing level
        self.layout = (syms.design.simd.layout.get(group.array) if syms.design.simd else None)
        self.modules: list[Module] = []
        self.fifos: list[Fifo] = []
        self.packing: list[PackingParameter] = []

    # -- scopes ---------------------------------------------------------------------------------
    def ranges(self, fixed: tuple[str, ...]) -> dict[str, sympy.Expr]:
        """Loop ranges of the data one module handles: space loops in `fixed` at one PE's range."""
        return {l: (self.syms.pe_range(l) if l in fixed else self.syms.t1(l)) for l in self.syms.design.band_loops}

    def pack(self, level: int, ranges, rate: sympy.Expr | None = None, *, feeds_pes: bool = False,
             splits: tuple[str, ...] = ()) -> sympy.Symbol:
        """A level's packing factor. Drains carry results as the PEs' boxes, one after another, so
        their words must not straddle a PE's box at any level; a buffer that feeds the PEs holds
        words of at least the SIMD lanes, so that one buffer word serves one PE iteration. Partial
        results read back (an acc group's input) travel as the same PE boxes through the same DRAM
        port (one word type), so they are packed as the drain is. An input level whose instances
        each keep their own box of the block they pass on (`splits`: the space loops its chain
        runs along) moves words that divide where those boxes start (`split_steps`), as the
        exporter's loops do (engine/export/io_modules.py moves chunks dividing them): with
        overlapping boxes (a halo, `w + q`) a wider word would be counted once where the code
        moves it in pieces."""
        name = f"{self.g.name}_{self.direction}_pack_l{level}"
        if self.direction == "out" or self.g.kind == "acc":
            ranges = self.ranges(self.space)
        minimum = self.simd_pack() if feeds_pes else None
        moved = self.ranges(self.space) if self.direction == "out" else self.ranges(())
        self.packing.append(PackingParameter(name, self.g.name, level,
                                             innermost_extent(self.g.access, ranges, self.layout),
                                             AXI_BITS // self.g.element_bits, rate, minimum,
                                             self.box_steps() if level == self.top else self.split_steps(splits),
                                             innermost_extent(self.g.access, moved, self.layout)
                                             if level == self.top else None,
                                             level == self.top and self.boxes_in_row_order(),
                                             *(self.row_of_boxes(ranges) if level == self.top and self.direction == "out"
                                               else (None, None, None))))
        return symbol(name)

    def row_of_boxes(self, ranges) -> tuple:
        """(rows of a PE's box, PEs along the innermost stored dimension, tiles along it) when the
        storer's innermost PE loop runs along that dimension, else Nones. The storer walks the PEs
        of the space loops that index the array; a space loop that does not index an output sums it
        from PE to PE (a reduction chain), so the storer's innermost PE loop is the last space loop
        that indexes the array, not necessarily the design's last (docs/sim.md item 11)."""
        index = self.g.access.index
        if not index:
            return None, None, None
        last = self.layout[-1] if self.layout else len(index) - 1
        loops = [loop for loop, _ in index[last].terms]
        spatial = [loop for loop in loops if loop in self.space]
        indexing = [loop for loop in self.space if any(loop == l for subscript in index for l, _ in subscript.terms)]
        if not indexing or spatial != [indexing[-1]]:
            return None, None, None
        rows = footprint(self.g.access, ranges) / innermost_extent(self.g.access, ranges, self.layout)
        return rows, self.syms.pes(spatial[0]), sympy.Mul(*(self.syms.tiles(loop) for loop in loops))

    def boxes_in_row_order(self) -> bool:
        """Whether the PE boxes a storer writes one after another (and the block a loader reads row by
        row) follow the array's row-major order: at most one space loop indexes the array, and only
        its outermost stored dimension."""
        index = self.g.access.index
        if not index:
            return False
        order = list(self.layout) if self.layout else list(range(len(index)))
        spatial = [(d, loop) for d in order for loop, _ in index[d].terms if loop in self.space]
        return len(spatial) <= 1 and all(d == order[0] for d, _ in spatial)

    def box_steps(self) -> tuple[sympy.Expr, ...]:
        """Where the boxes DRAM moves start along the array's innermost stored dimension: a tile's
        (its loops' coefficients times their first-level factors, the subscript's constant), and
        for drains, which store the PEs' boxes one by one, a PE's inside the tile. A loop of one
        tile (or one PE) starts no other box: its step is 0, which constrains nothing."""
        if not self.g.access.index:
            return ()
        last = self.layout[-1] if self.layout else len(self.g.access.index) - 1
        subscript = self.g.access.index[last]
        steps = [smin(self.syms.tiles(loop) - 1, 1) * abs(c) * self.syms.t1(loop) for loop, c in subscript.terms]
        if self.direction == "out":
            steps += [smin(self.syms.pes(loop) - 1, 1) * abs(c) * self.syms.pe_range(loop)
                      for loop, c in subscript.terms if loop in self.space]
        if subscript.const:
            steps.append(sympy.Integer(abs(subscript.const)))
        return tuple(steps)

    def split_steps(self, loops: tuple[str, ...]) -> tuple[sympy.Expr, ...]:
        """Where, along the array's innermost stored dimension, the boxes of an input chain's
        instances along `loops` start in the block it passes on (0 for a loop of one PE)."""
        if self.direction == "out" or self.g.kind == "acc" or not self.g.access.index:
            return ()
        last = self.layout[-1] if self.layout else len(self.g.access.index) - 1
        return tuple(smin(self.syms.pes(loop) - 1, 1) * abs(c) * self.syms.pe_range(loop)
                     for loop, c in self.g.access.index[last].terms if loop in loops)

    def rate(self, data_per_event: sympy.Expr) -> sympy.Expr:
        """Elements a buffered module must move per cycle of PE computation to keep up with it."""
        return self.events * data_per_event / (self.syms.tile_count * self.syms.pe_iterations_per_tile)

    def simd_pack(self) -> sympy.Expr:
        simd_loop = self.syms.design.simd_loop
        if simd_loop is None or simd_loop in self.g.invariant:
            return sympy.Integer(1)
        return self.syms.simd

    def name(self, level: int) -> str:
        return f"{self.g.name}_L{level}_{self.direction}"

    # -- modules --------------------------------------------------------------------------------
    def transfer(self, level: int, data, pack, body: str, count, grid, *, buffer=None, feed=None) -> Module:
        phases = [Phase("load" if self.direction == "in" else "drain",
                        (Loop("events", self.events, "tile"), Loop("words", sympy.ceiling(data / pack), "transfer")),
                        body, elements=self.events * data)]
        if feed is not None:
            phases.append(feed)
        return Module(self.name(level), "io" if self.direction == "in" else "drain", count, grid, tuple(phases),
                      array=self.g.array, level=level, dram=(level == self.top),
                      overlapped=buffer is not None and buffer.double_buffered,
                      buffers=(buffer,) if buffer is not None else (), depth=2)

    def build(self) -> None:
        tile = footprint(self.g.access, self.ranges(()))
        # a 1-D array's exterior DRAM module also keeps the slice PE 0 is fed from
        dram_pack = self.pack(self.top, self.ranges(()),
                              feeds_pes=self.direction == "in" and self.g.exterior and len(self.space) == 1)
        verb = "read" if self.direction == "in" else "write"
        self.modules.append(self.transfer(self.top, tile, dram_pack, f"{verb} {self.g.array} words on DRAM",
                                          sympy.Integer(1), ()))
        if self.g.exterior:
            self.build_exterior(tile, dram_pack)
        else:
            self.build_interior(tile, dram_pack)

    def build_interior(self, tile, dram_pack) -> None:
        syms, space = self.syms, self.space
        pe_data = footprint(self.g.access, self.ranges(space))
        upstream, upstream_pack = self.name(self.top), dram_pack
        rows = self.rows
        if len(space) == 2:
            s0 = space[0]
            pack2 = self.pack(2, self.ranges((s0,)), splits=(s0,))
            self.modules.append(self.transfer(2, tile, pack2, f"pass {self.g.array} along the {s0} chain",
                                              rows, (syms.pes(s0),)))
            self.link(upstream, self.name(2), 1, upstream_pack, "to_first")
            self.link(self.name(2), self.name(2), rows - 1, pack2, "chain")
            upstream, upstream_pack = self.name(2), pack2
            chain_data = footprint(self.g.access, self.ranges((s0,)))
        else:
            chain_data = tile
        feed = self.feed_phase(pe_data)
        # words must not straddle one PE's block
        pack1 = self.pack(1, self.ranges(space), rate=self.rate(chain_data), feeds_pes=self.direction == "in",
                          splits=space[-1:])
        buffer = Buffer(f"{self.g.name}_{self.direction}_tile", self.g.array, pe_data, pack1, self.g.element_bits, self.double_buffering)
        self.modules.append(self.transfer(1, chain_data, pack1, f"keep this PE's {self.g.array} tile, pass the rest",
                                          self.reached, syms.pe_grid, buffer=buffer, feed=feed))
        self.link(upstream, self.name(1), rows, upstream_pack, "to_row_heads" if len(space) == 2 else "to_first")
        self.link(self.name(1), self.name(1), self.reached - rows, pack1, "chain")
        self.link(self.name(1), "PE", self.reached, self.simd_pack(), "to_pe")

    def build_exterior(self, tile, dram_pack) -> None:
        syms, d = self.syms, self.g.exterior_loop
        others = tuple(l for l in self.space if l != d)
        slice_data = footprint(self.g.access, self.ranges(others))
        boundary = sympy.Mul(*(syms.pes(l) for l in others))
        if len(self.space) == 2:
            feed = self.feed_phase(slice_data)
            pack2 = self.pack(2, self.ranges(others), rate=self.rate(tile), feeds_pes=self.direction == "in",
                              splits=others)
            buffer = Buffer(f"{self.g.name}_{self.direction}_slice", self.g.array, slice_data, pack2,
                            self.g.element_bits, self.double_buffering)
            self.modules.append(self.transfer(2, tile, pack2, f"keep the {self.g.array} slice of this boundary PE",
                                              boundary, (boundary,), buffer=buffer, feed=feed))
            self.link(self.name(self.top), self.name(2), 1, dram_pack, "to_first")
            self.link(self.name(2), self.name(2), boundary - 1, pack2, "chain")
            edge = self.name(2)
        elif self.direction == "out":
            # the storer writes the boundary PE's results as they arrive, a bus word per iteration
            # (engine/export/io_modules.py `_store`): no slice buffer, nothing collected first
            edge = self.name(self.top)
        else:
            top = self.modules.pop()  # the DRAM-facing module also holds the slice for PE 0
            buffer = Buffer(f"{self.g.name}_{self.direction}_slice", self.g.array, slice_data, dram_pack,
                            self.g.element_bits, self.double_buffering)
            self.modules.append(Module(top.name, top.kind, top.count, top.grid,
                                       top.phases + (self.feed_phase(slice_data),), array=top.array, level=top.level,
                                       dram=True, overlapped=self.double_buffering, buffers=(buffer,),
                                       depth=top.depth))
            edge = top.name
        self.link(edge, "PE", boundary, self.simd_pack(), "to_boundary_pe", along=d)
        if not (self.g.kind == "acc" and self.direction == "in"):
            # partial results read back enter the first PE of the chain, which adds them to the
            # chain's partial sum as it drains: nothing travels from PE to PE on the way in
            self.link("PE", "PE", boundary * (syms.pes(d) - 1), self.simd_pack(), "pe_chain", along=d)

    def feed_phase(self, local_data) -> Phase:
        """Between a buffer and the PE: one word per PE iteration in, or the finished block out."""
        if self.direction == "out" or self.g.kind == "acc":
            return Phase("feed" if self.direction == "in" else "collect",
                         (Loop("events", self.events, "tile"), Loop("elements", local_data, "transfer")),
                         f"{'send partial' if self.direction == 'in' else 'collect finished'} {self.g.array} elements")
        return Phase("feed", (Loop("tiles", self.syms.tile_count, "tile"),
                              Loop("pe_iterations", self.syms.pe_iterations_per_tile, "time")),
                     f"send {self.g.array} to the PE, one SIMD word per PE iteration")

    def link(self, source: str, target: str, count, pack, pattern: str, along: str | None = None) -> None:
        """A FIFO kind from the DRAM side (`source`) towards the PEs (`target`); drains flow back."""
        self.fifos.append(Fifo(source, target, self.g.array, count, self.g.element_bits, pack, pattern, along,
                               reversed=self.direction == "out"))


def build_io_network(syms: DesignSymbols, groups: list[IOGroup], *, double_buffering: bool = True,
                     reach: dict[str, tuple[sympy.Expr, sympy.Expr]] | None = None):
    """All I/O and drain modules, their FIFOs and their packing parameters. `reach`: group name ->
    (PEs, rows of them) its interior network reaches where not every PE (io_reach.py)."""
    modules, fifos, packing = [], [], []
    for g in groups:
        directions = []
        if g.kind == "in":
            directions.append(("in", g.loads))
        elif g.reloads != 0:
            directions.append(("in", g.reloads))
        if g.needs_drain:
            directions.append(("out", g.loads))
        for direction, events in directions:
            net = _GroupNetwork(syms, g, direction, events, double_buffering, (reach or {}).get(g.name))
            net.build()
            modules += net.modules
            fifos += net.fifos
            packing += net.packing
    return modules, fifos, packing
