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
gathers it before the kernel and scatters it after. Otherwise it stays natural.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from engine.export.cpp import product, total
from engine.export.interface import ExportError
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

    def dram_words(self, port) -> int:
        """Words of the port's buffer: its nest's iterations (serialized) or the padded array."""
        return self.nests[port.name].words if self._serialized(port) and port.name in self.nests else port.words

    def dram_summary(self) -> dict[str, dict]:
        """Per port: layout, words of its buffer, bytes of a word, and why its layout differs."""
        out = {}
        self._check_read_back_order()
        for port in self.plan.interface.ports:
            layout, reason = self._port_layout(port)
            if layout == "serialized" and port.name not in self.nests:
                layout, reason = "natural", "no DRAM loop of this port in the kernel"
            entry = {"layout": layout, "kind": _KINDS[port.direction], "words": self.dram_words(port),
                     "word_bytes": port.word_elements * _element_bytes(port.c_type)}
            if port.name in self.nests:  # the kernel's DRAM access, as written
                nest = self.nests[port.name]
                entry["access"] = f"{port.name}[{nest.serial_address() if layout == 'serialized' else nest.natural}]"
            if reason:
                entry["reason"] = reason
            out[port.name] = entry
        return out

    def _ports(self) -> str:
        """kernel0's parameters: a word pointer per array."""
        return ", ".join(f"{'const ' if p.direction == 'in' else ''}{p.word_type} *{p.name}"
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
                self._gather_or_scatter(c, port, nest)
        c.line("#endif")

    @staticmethod
    def _gather_or_scatter(c, port, nest: DramNest) -> None:
        """`serialize_<port>` (a read nest) or `deserialize_<port>` (a write nest)."""
        if nest.writes:
            head = f"static inline void deserialize_{port.name}(const {port.word_type} *serial, " \
                   f"{port.word_type} *natural)"
            body = f"natural[{nest.natural}] = serial[n++];"
        else:
            head = f"static inline void serialize_{port.name}(const {port.word_type} *natural, " \
                   f"{port.word_type} *serial)"
            body = f"serial[n++] = natural[{nest.natural}];"
        with c.block(head):
            c.line("long n = 0;")
            for var, trip in nest.loops:
                c.line(f"for (long {var} = 0; {var} < {trip}; {var}++)")
                c.depth += 1
            c.line(body)
            c.depth -= len(nest.loops)


def _element_bytes(c_type: str) -> int:
    return {"double": 8, "int64_t": 8, "float": 4, "int32_t": 4, "uint32_t": 4, "int16_t": 2, "uint16_t": 2,
            "int8_t": 1, "uint8_t": 1}[c_type]
