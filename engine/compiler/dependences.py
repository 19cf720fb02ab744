"""Polyhedral model -> dependences: flow, anti, output (isl dataflow analysis), read and reduction.

- flow / anti / output: exact, last-access dependences from isl on the original schedule;
- reduction: a reduction statement's dependences on itself through its accumulator (they do not
  constrain permutation; see reductions.py);
- read: read-after-read on the same element of a read-only array, one uniform dependence per basis
  vector of the reference's reuse space (the null space of its subscripts), each oriented forward in
  the original execution order. `A[i][k]` in MM is reused along j: `S[i,j,k] -> S[i,j+1,k]`;
  `fi[i][h+p][w+q]` in CNN along o, along (h+1, p-1) and along (w+1, q-1).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import reduce
from math import gcd

import islpy as isl
import sympy

from engine.compiler import isl_helpers as ih
from engine.compiler.ir import Access, Statement
from engine.compiler.polyhedral import PolyhedralModel
from engine.compiler.reductions import Reduction, find_reductions


@dataclass(frozen=True)
class Dependence:
    kind: str  # flow, anti, output, read, reduction
    array: str
    source: str
    sink: str
    relation: isl.Map  # one piece: { S[...] -> T[...] }
    reference: Access | None = None  # the reused reference, for read dependences

    def __str__(self) -> str:
        return ih.readable_relation(self.relation)

    def __reduce__(self):
        # islpy pickles a map through its text and refuses one whose input and output dimensions
        # share names (S[o, h] -> T[o' = o, ...]): the text, then the names set back one by one
        return _dependence, (self.kind, self.array, self.source, self.sink, *ih.map_to_text(self.relation),
                             self.reference)


def _dependence(kind, array, source, sink, text, names, reference) -> Dependence:
    return Dependence(kind, array, source, sink, ih.map_from_text(text, names), reference)


@dataclass(frozen=True)
class Dependences:
    flow: tuple[Dependence, ...]
    anti: tuple[Dependence, ...]
    output: tuple[Dependence, ...]
    read: tuple[Dependence, ...]
    reduction: tuple[Dependence, ...]
    reductions: dict[str, Reduction]

    @property
    def validity(self) -> tuple[Dependence, ...]:
        """The dependences every schedule must respect (reduction ones excepted)."""
        return self.flow + self.anti + self.output

    def all(self) -> tuple[Dependence, ...]:
        return self.flow + self.anti + self.output + self.read + self.reduction


def analyze_dependences(model: PolyhedralModel) -> Dependences:
    reductions = find_reductions(model.kernel)
    kinds: dict[str, list[Dependence]] = {k: [] for k in ("flow", "anti", "output", "reduction")}
    for array in sorted(model.written_arrays()):
        reads = model.accesses(writes=False, array=array)
        writes = model.accesses(writes=True, array=array)
        found = {
            "flow": ih.compute_dependences(reads, model.schedule, must=writes),
            "output": ih.compute_dependences(writes, model.schedule, must=writes),
            "anti": ih.compute_dependences(writes, model.schedule, may=reads, kill=writes),
        }
        for kind, relation in found.items():
            for dep in _pieces(kind, array, relation):
                if _is_reduction_dependence(dep, reductions):
                    dep = replace(dep, kind="reduction")
                kinds[dep.kind].append(dep)
    read = tuple(_read_dependences(model))
    return Dependences(tuple(kinds["flow"]), tuple(kinds["anti"]), tuple(kinds["output"]), read,
                       tuple(kinds["reduction"]), reductions)


def _pieces(kind: str, array: str, relation: isl.UnionMap):
    for m in ih.maps_of(relation.coalesce()):
        source = m.get_tuple_name(isl.dim_type.in_)
        sink = m.get_tuple_name(isl.dim_type.out)
        for piece in m.get_basic_maps():
            yield Dependence(kind, array, source, sink, isl.Map.from_basic_map(piece))


def _is_reduction_dependence(dep: Dependence, reductions: dict[str, Reduction]) -> bool:
    red = reductions.get(dep.source)
    if red is None or dep.source != dep.sink or red.array != dep.array:
        return False
    iterators = dep.relation.get_space().domain().get_var_names(isl.dim_type.set)
    ranges = ih.distance_range(dep.relation)
    return all(lo == hi == 0 for name, (lo, hi) in zip(iterators, ranges) if name not in red.loops)


def _read_dependences(model: PolyhedralModel):
    written = model.written_arrays()
    kernel = model.kernel
    for ref in model.references:
        if ref.is_write or ref.access.array in written:
            continue
        stmt = kernel.statement(ref.statement)
        domain = model.domains[stmt.name]
        for vector in reuse_vectors(stmt, ref.access):
            names = ", ".join(stmt.iterators)
            shifted = ", ".join(f"{n} + {d}" if d else n for n, d in zip(stmt.iterators, vector))
            relation = isl.Map(f"{{ {stmt.name}[{names}] -> {stmt.name}[{shifted}] }}", context=ih.CTX)
            relation = relation.intersect_domain(domain).intersect_range(domain)
            if not relation.is_empty():
                yield Dependence("read", ref.access.array, stmt.name, stmt.name, relation, ref.access)


def reuse_vectors(stmt: Statement, access: Access) -> list[tuple[int, ...]]:
    """Integer basis of the null space of the access's subscripts over the statement's loops,
    each vector primitive and lexicographically positive in the original loop order."""
    iterators = stmt.iterators
    if not access.index:
        return [tuple(int(k == d) for k in range(len(iterators))) for d in range(len(iterators))]
    matrix = sympy.Matrix([[index.coeff(name) for name in iterators] for index in access.index])
    vectors = []
    for column in matrix.nullspace():
        entries = [Fraction(int(sympy.fraction(x)[0]), int(sympy.fraction(x)[1])) for x in column]
        scale = reduce(lambda a, b: a * b // gcd(a, b), (e.denominator for e in entries), 1)
        ints = [int(e * scale) for e in entries]
        divisor = reduce(gcd, (abs(v) for v in ints if v), 0) or 1
        ints = [v // divisor for v in ints]
        first = next(v for v in ints if v)
        vectors.append(tuple(v if first > 0 else -v for v in ints))
    return vectors
