"""Arrays declared inside the scop -> on-chip storage and PE-to-PE channels (never DRAM ports).

A local array (`ArrayDecl.local`, e.g. LU's prev_V, U_tmp, L_tmp, V) only carries values from the
statement that writes an element to the statements that read it. Where a value goes is read off
the band distances of the array's flow dependences:

- distance 0 on every band loop: produced and consumed in the same PE iteration (a wire);
- non-zero on a space loop: the value moves to the neighbouring PE along that loop, one FIFO per
  PE pair (`pe_chain`, as an exterior I/O group's operands do);
- non-zero on a time loop of the PE: the PE keeps it until its reader runs, in a buffer holding
  `distance` x the reference's footprint over the PE's points of the loops inside the carrying one
  (band order: the PE's time loops run in band order). A distance of 1 along the innermost time
  loop is one register; along an outer loop, a whole row of the inner loops.

The buffer's storage follows its size: `registers` when it is a constant of at most 1024 bits,
otherwise `bram` (engine/models/memory.py counts no block RAM for buffers that fit in 1024 bits, so
small tiles still cost none). A value carried across a tile boundary (the carrying loop has several
tiles) is counted as one carried inside the tile: the model does not add the storage of a tile face.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl
import numpy as np
import sympy

from engine.compiler.architecture.footprint import footprint
from engine.compiler.architecture.modules import REGISTER_BITS, Buffer, Fifo
from engine.compiler.architecture.pe_set import neighbour_pairs, when_one_tile
from engine.compiler.architecture.symbols import DesignSymbols
from engine.compiler.design_space import DesignSpace
from engine.compiler.ir import Access, Affine
from engine.compiler.tuning import DTYPE_BITS


@dataclass(frozen=True)
class LocalArray:
    name: str
    dtype: str
    shape: tuple[int, ...]
    element_bits: int
    carried: tuple[tuple[str, int], ...]  # (band loop, largest distance) of its flow dependences
    fifo_along: tuple[str, ...]  # space loops its values cross from PE to PE
    elements: sympy.Expr  # kept per PE (0: only wires and FIFOs)
    storage: str  # registers, bram, or none
    channels: tuple[dict, ...] = ()  # per fifo_along loop: what crosses to the next PE, and when

    def to_json(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape),
                "element_bits": self.element_bits,
                "carried": [{"loop": l, "distance": d} for l, d in self.carried],
                "fifo_along": list(self.fifo_along), "elements_per_pe": str(self.elements),
                "storage": self.storage, "channels": list(self.channels)}


def local_arrays(space: DesignSpace, syms: DesignSymbols) -> list[LocalArray]:
    """Every local array the band's statements reference, in declaration order."""
    band, kernel = space.band, space.kernel
    compute = set(band.compute_statements)
    used = {a.array for s in band.compute_statements for a in [kernel.statement(s).target,
                                                                *kernel.statement(s).reads()]}
    result = []
    for name, decl in kernel.arrays.items():
        if not decl.local or name not in used:
            continue
        carried: dict[str, int] = {}
        elements = sympy.Integer(0)
        for dep in space.dependences.flow:
            if dep.array != name or dep.source not in compute or dep.sink not in compute:
                continue
            distances = [hi for _, hi in band.distance_ranges(dep)]
            for loop, distance in zip(band.loops, distances):
                if distance > 0:
                    carried[loop] = max(carried.get(loop, 0), distance)
            time = [(k, d) for k, (loop, d) in enumerate(zip(band.loops, distances))
                    if d > 0 and loop not in syms.design.space_loops]
            if time:
                outer, distance = time[0]
                ranges = {l: (syms.pe_range(l) if k > outer else sympy.Integer(1))
                          for k, l in enumerate(band.loops)}
                read = next(a for a in kernel.statement(dep.sink).reads() if a.array == name)
                elements = sympy.Max(elements, distance * footprint(read, ranges)) if elements != 0 \
                    else distance * footprint(read, ranges)
        bits = DTYPE_BITS[decl.dtype]
        if elements == 0:
            storage = "none"
        elif elements.is_number and elements * bits <= REGISTER_BITS:
            storage = "registers"
        else:
            storage = "bram"
        along = tuple(l for l in syms.design.space_loops if l in carried)
        channels = tuple(_channel(space, name, loop) for loop in along)
        result.append(LocalArray(name, decl.dtype, decl.shape, bits, tuple(sorted(carried.items(),
                                 key=lambda item: band.loops.index(item[0]))), along, elements, storage,
                                 channels))
    return result


def _channel(space: DesignSpace, array: str, loop: str) -> dict:
    """What one PE sends the next along `loop` for a local array, as C over the band loops:
    `send_when` (the producer's points whose value a neighbour reads), `value` (the element it
    sends: its statements' target), `receive_when` (the consumer's points that read it), `reads`
    (the statements' references the received value stands for). `uniform` is false when a
    dependence is not a distance of exactly 1 along `loop` and 0 along every other band loop, or
    a reference is fed both from the neighbour and from the PE itself; `send_when` and
    `receive_when` are null when the points need a division to describe."""
    band, kernel = space.band, space.kernel
    compute = set(band.compute_statements)
    deps = [d for d in space.dependences.flow if d.array == array and d.source in compute and d.sink in compute]
    crossing = [d for d in deps if dict(zip(band.loops, band.distance_ranges(d)))[loop] != (0, 0)]
    uniform = True
    send = receive = None
    values, reads = set(), set()
    for dep in crossing:
        ranges = dict(zip(band.loops, band.distance_ranges(dep)))
        if any(r != ((1, 1) if l == loop else (0, 0)) for l, r in ranges.items()):
            uniform = False
            continue
        source, sink = kernel.statement(dep.source), kernel.statement(dep.sink)
        values.add(str(source.target))
        shifted = {loop: Affine.var(loop) - Affine.of({}, 1)}
        for read in sink.reads():
            if read.array == array and Access(array, tuple(e.substitute(shifted) for e in source.target.index)) == read:
                reads.add((sink.name, str(read)))
        here = dep.relation.domain().apply(band.schedules[dep.source])
        there = dep.relation.range().apply(band.schedules[dep.sink])
        send = here if send is None else send.union(here)
        receive = there if receive is None else receive.union(there)
    local_reads = {(d.sink, str(r)) for d in deps if d not in crossing
                   for r in kernel.statement(d.sink).reads() if r.array == array}
    if reads & local_reads or len(values) > 1:
        uniform = False
    return {"along": loop, "uniform": uniform,
            "send_when": c_condition(send, band.loops) if send is not None else "0",
            "receive_when": c_condition(receive, band.loops) if receive is not None else "0",
            "value": next(iter(values)) if len(values) == 1 else None,
            "reads": [{"statement": s, "reference": r} for s, r in sorted(reads)]}


def c_condition(points: isl.Set, loops: tuple[str, ...]) -> str | None:
    """A set of band points as a C condition over the band loop names (null if it needs divisions)."""
    pieces = []
    for piece in points.coalesce().get_basic_sets():
        piece = piece.remove_redundancies()
        if piece.dim(isl.dim_type.div) > 0:
            return None
        terms = []
        for constraint in piece.get_constraints():
            coeffs = {loops[d]: constraint.get_coefficient_val(isl.dim_type.set, d).to_python()
                      for d in range(len(loops))}
            text = str(Affine.of(coeffs, constraint.get_constant_val().to_python()))
            terms.append(f"{text} {'==' if constraint.is_equality() else '>='} 0")
        pieces.append(" && ".join(terms) or "1")
    return " || ".join(f"({p})" for p in pieces) if pieces else "0"


_TERM = re.compile(r"(.+?)\s*(>=|==)\s*0")


def parse_c_condition(condition: str | None) -> list[list[tuple[str, str]]]:
    """The inverse of `c_condition`, for the descriptor's readers (the model's recurrence term, the
    simulator): `||` of parenthesised `&&`-joined affine `>= 0` / `== 0` terms, or 0 / 1, as
    [[(affine text, ">=" | "=="), ...], ...]; [] holds nowhere. ValueError on anything else."""
    text = (condition or "0").strip()
    if text == "0":
        return []
    pieces = []
    for piece in text.split("||"):
        terms = []
        for term in piece.strip().removeprefix("(").removesuffix(")").split("&&"):
            term = term.strip()
            if term == "1":
                continue
            m = _TERM.fullmatch(term)
            if m is None:
                raise ValueError(f"cannot read the channel condition {condition!r} (term {term!r})")
            terms.append((m.group(1), m.group(2)))
        pieces.append(terms)
    return pieces


def condition_holds(condition: list, values: dict, shape) -> np.ndarray:
    """Where a parsed condition (`parse_c_condition`) holds, over arrays (of `shape`) of the band
    loops' values."""
    result = np.zeros(shape, dtype=bool)
    for terms in condition:
        piece = np.ones(shape, dtype=bool)
        for expr, op in terms:
            value = eval(expr, {"__builtins__": {}}, values)  # affine text over the band loop names
            piece &= (value >= 0) if op == ">=" else (value == 0)
        result |= piece
    return result


def local_buffers(arrays: list[LocalArray]) -> list[Buffer]:
    """The PE's buffers for the values it keeps across its own iterations."""
    return [Buffer(f"onchip_{a.name}", a.name, a.elements, sympy.Integer(1), a.element_bits, False,
                   "registers" if a.storage == "registers" else "bram")
            for a in arrays if a.storage != "none"]


def local_fifos(arrays: list[LocalArray], syms: DesignSymbols, space=None, pes=None) -> list[Fifo]:
    """One FIFO per neighbouring PE pair along each space loop a local array's values cross: between
    the PEs the array holds where they are not the whole grid (`pes`, pe_set.py `occupied_pes` of
    `space`), as the exporter builds them."""
    fifos = []
    for a in arrays:
        for loop in a.fifo_along:
            others = sympy.Mul(*(syms.pes(l) for l in syms.design.space_loops if l != loop))
            count = others * (syms.pes(loop) - 1)
            if pes is not None:
                count = when_one_tile(space, syms.design, syms, neighbour_pairs(pes, loop), count)
            fifos.append(Fifo("PE", "PE", a.name, count, a.element_bits, syms.simd, "pe_chain", along=loop))
    return fifos
