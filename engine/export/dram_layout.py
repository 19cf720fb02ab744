"""Kernel plan + DRAM layout -> each m_axi port's access nest and what follows from it: the word
address the kernel's DRAM loop uses, the port's word count (its m_axi `depth`), and the host's
gather / scatter functions (`serialize_A`, `deserialize_C` in kernel_kernel.h) that the host
program, the HLS testbench and the C-simulation harness all call. A mixin of `VitisHLSTarget`.

An access nest is the loops a port's DRAM loader (or storer) runs, outermost first (the tile loops
of its load events, pass loops included; the storer's PE loops; the rows of the box; the bus words
of a row), with the *natural* word address it touches at each iteration: the padded row-major
address `_word_address` gives (engine/export/io_modules.py).

Layouts (engine/models/dram.py `LAYOUTS`):
- `natural`: the kernel reads and writes the padded row-major array at those addresses; the
  innermost loop of every nest walks the words of one row segment, so each row segment is one burst.
- `serialized` (AutoSA's `--host-serialize`): the kernel reads (writes) the port at the iteration's
  position in its nest, one incrementing word index over the whole run, so Vitis makes maximal
  bursts; the host gathers the words from the natural buffer with the very address expression the
  natural kernel would use, in the nest's order (data read several times, once per tile that reads
  it, appears that many times), and scatters outputs back the same way.
A port whose partial results are read back (an `inout` port: reload modules, or an accumulator
without an initialisation) is serialized when its loader and its storer visit the words in one order
(the descriptor's `in_row_order`: the PEs split at most the array's outermost stored dimension, so the
PE boxes the storer writes one after another are the rows the loader reads). Its serial address is
the position in the nest of the loops the natural address depends on (the passes of a reduction
revisit the same words), the same for both loops, which the export checks word by word; the host
gathers it before the kernel and scatters it after. Otherwise it stays natural: the reload chain
below the loader takes the block row by row, so reading a buffer written PE box by PE box would need
non-consecutive addresses (bursts no longer than the natural layout's) or an on-chip reorder buffer
of a tile block (docs/export.md, DRAM layout).

Outputs in full bus words: a write-only port in the serialized layout whose storer's word is
narrower than the bus (`serialized_store_words`, engine/compiler/architecture/dram_runs.py: R storer
words to a 512-bit word) gets a bus word type of its own (`C_bus_word`, kernel_kernel.h's
`C_DRAM_WORD`); its storer writes its words into a FIFO and a serialize stage (`C_L3_out_serialize`,
AutoSA's `C_drain_IO_L3_out_serialize`) packs R consecutive ones into a bus word and writes it at
one incrementing index, the last bus word zero-filled past the run's end. The port then holds
ceil(words / R) bus words; `deserialize_C` reads the storer's words in order from it (a bus word is
R storer words side by side). Not for ports read back (inout: their loader would need the reverse
stage), last-writer storers (engine/export/owned_drain.py) or kernels that run passes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from engine.compiler.architecture.dram_runs import serialized_store_words
from engine.export.cpp import counted_for, product, total
from engine.export.interface import ExportError, element_bytes
from engine.models.dram import LAYOUTS, row_ordered_arrays
from engine.models.dram import port_layout as dram_port_layout

_KINDS = {"in": "read", "out": "write", "inout": "read and write"}


@dataclass(frozen=True)
class DramNest:
    """The loops (variable, trip count), outermost first, of one port's DRAM loop, and the natural
    word address of an iteration."""

    port: str
    word_type: str
    writes: bool
    loops: tuple[tuple[str, int], ...]
    natural: str

    @property
    def words(self) -> int:
        return math.prod(trip for _, trip in self.loops)

    def revisits_dropped(self) -> DramNest:
        """The nest without the loops its natural address does not depend on (they revisit words)."""
        used = set(re.findall(r"[A-Za-z_]\w*", self.natural))
        return replace(self, loops=tuple((v, n) for v, n in self.loops if v in used))

    def natural_sequence(self) -> np.ndarray:
        """The natural word address of every iteration, in order (numpy: the expression is affine)."""
        grids = np.meshgrid(*(np.arange(n, dtype=np.int64) for _, n in self.loops), indexing="ij")
        scope = {v: g.ravel() for (v, _), g in zip(self.loops, grids)}
        return np.broadcast_to(np.asarray(eval(self.natural, {"__builtins__": {}}, scope), dtype=np.int64),
                               (self.words,)).copy()

    def serial_address(self) -> str:
        """The iteration's position in the nest: row-major over the loops (trip-1 loops add nothing)."""
        terms, stride = [], 1
        for var, trip in reversed(self.loops):
            if trip > 1:
                terms.append(product([var, str(stride)]))
            stride *= trip
        return total(list(reversed(terms)))


def port_layout(layout: str, direction: str, in_row_order: bool = False) -> tuple[str, str]:
    """(the port's layout, why it differs from the export's) for a port of `direction`: the rule the
    model and the simulator charge (engine/models/dram.py), an unknown layout refused."""
    if layout not in LAYOUTS:
        raise ExportError(f"unknown DRAM layout '{layout}' (accepted: {', '.join(LAYOUTS)})")
    return dram_port_layout(layout, direction, in_row_order)


class DramLayout:
    """Mixin: DRAM addresses by layout, the ports' word counts, the host's gather / scatter."""

    def _reset_nests(self) -> None:
        self.nests: dict[str, DramNest] = {}
        self.read_back_nests: dict[str, DramNest] = {}  # an inout port's loader (its storer: `nests`)

    def _row_ordered(self) -> set[str]:
        return row_ordered_arrays((m["array"], m.get("in_row_order", False))
                                  for m in self.plan.descriptor["topology"]["modules"] if m["dram"])

    def _port_layout(self, port) -> tuple[str, str]:
        return port_layout(self.layout, port.direction, port.array in self._row_ordered())

    def _serialized(self, port) -> bool:
        return self._port_layout(port)[0] == "serialized"

    def _event_nest(self, group) -> list[tuple[str, int]]:
        """The tile loops over which a DRAM module of `group` moves one box each: the pass loops
        (the region's arguments) then its event loops inside a pass, those of more than one tile."""
        plan = self.plan
        loops = plan.pass_loops + plan.in_pass(plan.event_loops(group))
        return [(f"{l}_tile", plan.loops[l].tiles) for l in loops if plan.loops[l].tiles > 1]

    def _dram_address(self, port, loops: list[tuple[str, int]], natural: str, *, writes: bool) -> str:
        """The word index the DRAM loop over `loops` touches: `natural`, or in the serialized layout
        the iteration's position in the nest. Records the nest (one DRAM loop per port and direction)."""
        nest = DramNest(port.name, port.word_type, writes, tuple(loops), natural)
        if not self._serialized(port):
            self.nests.setdefault(port.name, nest)
            return natural
        if port.direction == "inout":
            nest = nest.revisits_dropped()
            known = (self.nests if writes else self.read_back_nests).setdefault(port.name, nest)
        else:
            known = self.nests.setdefault(port.name, nest)
        if known != nest:
            raise ExportError(f"port {port.name} is {'written' if writes else 'read'} by two different DRAM loops; "
                              f"export it with --layout natural")
        return nest.serial_address()

    def _check_read_back_order(self) -> None:
        """An inout port serialized: its loader reads the words in the order its storer wrote them."""
        for name, read in self.read_back_nests.items():
            written = self.nests.get(name)
            if written is not None and not np.array_equal(read.natural_sequence(), written.natural_sequence()):
                raise ExportError(f"port {name}: its partial results are read back in another order than they are "
                                  f"written, so it cannot be serialized; export it with --layout natural")

    def _store_words(self, port) -> int:
        """Storer words per DRAM word of `port`: more than 1 for a write-only serialized port whose
        storer's word is narrower than the bus (serialized_store_words), else 1."""
        plan = self.plan
        if (port.direction != "out" or not self._serialized(port) or plan.pass_loops
                or any(g.owners is not None for g in plan.groups if g.array == port.array)):
            return 1
        return serialized_store_words(port.word_elements, 8 * element_bytes(port.c_type))

    def dram_word_type(self, port) -> str:
        """The type of the port's DRAM words (kernel0's pointer): the bus word a serialize stage writes,
        or the port's own word."""
        return f"{port.array}_bus_word" if self._store_words(port) > 1 else port.word_type

    def dram_words(self, port) -> int:
        """Words of the port's buffer: its nest's iterations (serialized; in bus words of
        `_store_words` storer words each, the last one padded) or the padded array."""
        if not (self._serialized(port) and port.name in self.nests):
            return port.words
        return -(-self.nests[port.name].words // self._store_words(port))

    def dram_summary(self) -> dict[str, dict]:
        """Per port: layout, words of its buffer, bytes of a word, and why its layout differs."""
        out = {}
        self._check_read_back_order()
        for port in self.plan.interface.ports:
            layout, reason = self._port_layout(port)
            if layout == "serialized" and port.name not in self.nests:
                layout, reason = "natural", "no DRAM loop of this port in the kernel"
            entry = {"layout": layout, "kind": _KINDS[port.direction], "words": self.dram_words(port),
                     "word_bytes": self._store_words(port) * port.word_elements * element_bytes(port.c_type)}
            if self._store_words(port) > 1:  # a serialize stage writes the storer's words, R to a bus word
                entry["store_words"] = self._store_words(port)
                entry["access"] = f"{port.name}[n]"
            elif port.name in self.nests:  # the kernel's DRAM access, as written
                nest = self.nests[port.name]
                entry["access"] = f"{port.name}[{nest.serial_address() if layout == 'serialized' else nest.natural}]"
            if reason:
                entry["reason"] = reason
            out[port.name] = entry
        return out

    def _ports(self) -> str:
        """kernel0's parameters: a word pointer per array."""
        return ", ".join(f"{'const ' if p.direction == 'in' else ''}{self.dram_word_type(p)} *{p.name}"
                         for p in self.plan.interface.ports)

    def _interface_pragmas(self) -> None:
        """kernel0's interface: an m_axi port per array with the pinned AXI settings (the device's
        `memory.axi`, engine/models/dram.py AxiSettings) and its words as the co-simulation depth."""
        c, a = self.code, self.axi
        for p in self.plan.interface.ports:
            c.pragma(f"HLS INTERFACE m_axi port={p.name} offset=slave bundle={p.bundle} "
                     f"depth={self.dram_words(p)} max_read_burst_length={a.max_burst_beats} "
                     f"max_write_burst_length={a.max_burst_beats} num_read_outstanding={a.outstanding} "
                     f"num_write_outstanding={a.outstanding} latency={a.latency}")
        for p in self.plan.interface.ports:
            c.pragma(f"HLS INTERFACE s_axilite port={p.name} bundle=control")
        c.pragma("HLS INTERFACE s_axilite port=return bundle=control")

    def _layout_header(self, c) -> None:
        """kernel_kernel.h's part for the host: each port's layout and word count as macros, and (not
        for synthesis) the gather / scatter of the serialized ports."""
        summary = self.dram_summary()
        c.line(f"/* DRAM layout '{self.layout}' (docs/export.md, DRAM layout): per port, whether the host")
        c.line("   serializes it and the words of its buffer (the m_axi depth). */")
        for port in self.plan.interface.ports:
            entry = summary[port.name]
            c.line(f"#define {port.name}_SERIALIZED {int(entry['layout'] == 'serialized')}")
            c.line(f"#define {port.name}_DRAM_WORDS {entry['words']}L")
            c.line(f"#define {port.name}_DRAM_WORD {self.dram_word_type(port)}")
        serialized = [p for p in self.plan.interface.ports if summary[p.name]["layout"] == "serialized"]
        if not serialized:
            return
        c.line("")
        c.line("#ifndef __SYNTHESIS__")
        c.line("/* The host's side of the serialized layout: the words of the padded row-major array in the")
        c.line("   order kernel0's DRAM loop moves them (the same loops, the same natural addresses). */")
        for port in serialized:
            nests = [self.nests[port.name]]
            if port.direction == "inout":  # gathered before the kernel in its loader's order, too
                nests.insert(0, self.read_back_nests.get(port.name, replace(nests[0], writes=False)))
            for nest in nests:
                self._gather_or_scatter(c, port, nest, self.dram_word_type(port))
        c.line("#endif")

    @staticmethod
    def _gather_or_scatter(c, port, nest: DramNest, bus_word: str) -> None:
        """`serialize_<port>` (a read nest) or `deserialize_<port>` (a write nest); a port of bus words
        wider than its storer's is read as the storer's words in order."""
        if nest.writes and bus_word != port.word_type:
            head = f"static inline void deserialize_{port.name}(const {bus_word} *bus, {port.word_type} *natural)"
            body = f"natural[{nest.natural}] = serial[n++];"
        elif nest.writes:
            head = f"static inline void deserialize_{port.name}(const {port.word_type} *serial, " \
                   f"{port.word_type} *natural)"
            body = f"natural[{nest.natural}] = serial[n++];"
        else:
            head = f"static inline void serialize_{port.name}(const {port.word_type} *natural, " \
                   f"{port.word_type} *serial)"
            body = f"serial[n++] = natural[{nest.natural}];"
        with c.block(head):
            if nest.writes and bus_word != port.word_type:
                c.line(f"/* a {bus_word} holds {port.word_type}s side by side, in the storer's order */")
                c.line(f"const {port.word_type} *serial = reinterpret_cast<const {port.word_type} *>(bus);")
            c.line("long n = 0;")
            for var, trip in nest.loops:
                c.line(f"for (long {var} = 0; {var} < {trip}; {var}++)")
                c.depth += 1
            c.line(body)
            c.depth -= len(nest.loops)

    # ----------------------------------------------------------------- serialize stages
    def _storer_module(self, port) -> str:
        return next(name for name, m in self.plan.modules.items()
                    if m["array"] == port.array and m["dram"] and m["kind"] == "drain")

    def _serialized_outputs(self) -> list:
        """The ports a serialize stage writes (`_store_words` > 1)."""
        return [p for p in self.plan.interface.ports if self._store_words(p) > 1]

    @staticmethod
    def _bus_stream(port) -> str:
        return f"{port.name}_to_bus"

    def _serialize_stages(self) -> None:
        """A `<storer>_serialize` process per port of `_serialized_outputs`: the storer's words, R to
        a bus word, written at one incrementing index; the last bus word zero-filled past the end."""
        for port in self._serialized_outputs():
            pieces, lanes = self._store_words(port), port.word_elements
            words = self.nests[port.name].words
            bus, tail = -(-words // pieces), words % pieces
            word_t, bus_t = port.word_type, self.dram_word_type(port)

            def body(port=port, pieces=pieces, lanes=lanes, bus=bus, tail=tail, word_t=word_t, bus_t=bus_t):
                c = self.code
                with c.loops([("serialize_words", "n", bus)], pipeline=True, ii=pieces):
                    c.line(f"{bus_t} word;")
                    with c.block(counted_for("piece", pieces)):
                        c.pragma("HLS unroll")
                        c.line(f"{word_t} part;")
                        if tail:
                            c.line(f"if (n == {bus - 1} && piece >= {tail}) {counted_for('k', lanes)} "
                                   "part.lane[k] = 0;  /* past the run: zero */")
                            c.line("else part = from_storer.read();")
                        else:
                            c.line("part = from_storer.read();")
                        with c.block(counted_for("k", lanes)):
                            c.pragma("HLS unroll")
                            c.line(f"word.lane[piece * {lanes} + k] = part.lane[k];")
                    c.line(f"{port.name}[n] = word;")
            self._emit(f"{self._storer_module(port)}_serialize",
                       [f"{bus_t} *{port.name}", f"hls::stream<{word_t}> &from_storer"],
                       f"{port.name}'s storer words, {pieces} to a {pieces * lanes}-element bus word, written at one "
                       f"incrementing index ({words} words in {bus} bus words"
                       f"{', the last zero-filled past the end' if tail else ''}; AutoSA's serialize stage)", body)

    def _serialize_streams(self) -> None:
        """kernel0's FIFOs from the storers to their serialize stages."""
        for port in self._serialized_outputs():
            name = self._bus_stream(port)
            self.code.line(f'hls::stream<{port.word_type}> {name}("{name}");')
            self.code.pragma(f"HLS stream variable={name} depth={2 * self._store_words(port)}")

    def _serialize_calls(self) -> None:
        for port in self._serialized_outputs():
            self.code.line(f"{self._storer_module(port)}_serialize({port.name}, {self._bus_stream(port)});")

