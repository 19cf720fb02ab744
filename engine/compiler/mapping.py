"""Design space + an explicit space-time matrix (T2S-Tensor / PolySA style) -> legality and the array.

A space-time transformation is an invertible integer matrix T over the band loops: the first rows
give the PE coordinates of an iteration, the others its time step (compared lexicographically).
`--space "i,j" --time "i+j+k"` is T = [[1,0,0],[0,1,0],[1,1,1]]. With d a dependence distance:
- flow (a value produced in one iteration, used in another): every space component of T d is in
  {-1, 0, 1} (the value moves to a neighbouring PE or stays) and the time part is lexicographically
  positive (it arrives later). d = 0 (inside one iteration) is always fine;
- read (reuse of an element of a read-only array): the same space condition; reuse has no direction,
  so the time part only must not be zero (d and -d reuse the same element);
- anti / output: the time part is lexicographically positive (the order of the accesses is kept);
- reduction: the accumulation follows the new order, so its chain is recomputed under T's schedule
  (as space_time.py does for loop choices) and checked like a flow. Where another statement writes
  the accumulator first or reads it after (C = 0 before the k loop, a final store), the chain must
  still start and end at the iterations it starts and ends at in the source.
Every condition is checked over all distance vectors of a dependence with isl, so non-uniform
pieces (a reduction wrapping around two loops) are covered exactly.

The array it implies: the PEs are the image of the band's points under the space rows (counted
exactly; a skewed or diagonal T gives a non-rectangular array), the time steps the range of the
time rows, and per array the space step of its dependences: where its data move, or that they stay.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import islpy as isl
import sympy

from engine.compiler import isl_helpers as ih
from engine.compiler.dependences import Dependence
from engine.compiler.design_space import DesignSpace
from engine.errors import DesignError, LegalityError
from engine.validation import json_depth

@dataclass(frozen=True)
class Movement:
    array: str
    kind: str  # flow, read, reduction
    space_step: tuple[int, ...] | None  # None: the step varies between iterations
    time_step: tuple[int, ...] | None
    dependence: str  # readable relation

    @property
    def stays(self) -> bool:
        return self.space_step is not None and not any(self.space_step)


@dataclass(frozen=True)
class Mapping:
    loops: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]
    space_dims: int
    pe_count: int
    pe_box: tuple[tuple[int, int], ...]  # (min, max) of each PE coordinate
    time_range: tuple[tuple[int, int], ...]  # (min, max) of each time row
    movements: tuple[Movement, ...]
    equals: tuple[str, ...] = ()  # ids of the listed designs with the same array

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(hi - lo + 1 for lo, hi in self.pe_box)

    def stationary_arrays(self) -> list[str]:
        """Arrays none of whose data move between PEs."""
        arrays = dict.fromkeys(m.array for m in self.movements)
        return [a for a in arrays if all(m.stays for m in self.movements if m.array == a)]

    def row_text(self, row: int) -> str:
        return affine_text(self.matrix[row], self.loops)

    def to_json(self) -> dict:
        return {
            "loops": list(self.loops), "matrix": [list(r) for r in self.matrix], "space_dims": self.space_dims,
            "space": [self.row_text(r) for r in range(self.space_dims)],
            "time": [self.row_text(r) for r in range(self.space_dims, len(self.matrix))],
            "pe_count": self.pe_count, "pe_shape": list(self.shape),
            "time_steps": [hi - lo + 1 for lo, hi in self.time_range],
            "movements": [{"array": m.array, "kind": m.kind,
                           "space_step": list(m.space_step) if m.space_step is not None else None,
                           "time_step": list(m.time_step) if m.time_step is not None else None,
                           "stays": m.stays, "dependence": m.dependence} for m in self.movements],
            "stationary_arrays": self.stationary_arrays(),
            "equals_designs": list(self.equals),
        }


def affine_text(row, loops) -> str:
    parts = []
    for coeff, loop in zip(row, loops):
        if coeff:
            term = loop if abs(coeff) == 1 else f"{abs(coeff)}*{loop}"
            parts.append(("-" if coeff < 0 else "+") + term)
    text = "".join(parts) or "0"
    return text[1:] if text.startswith("+") else text


def parse_rows(text: str, loops: tuple[str, ...], what: str) -> list[tuple[int, ...]]:
    """`"i,j"` or `"i+j+k"` -> integer rows over the band loops."""
    rows = []
    for expr in text.split(","):
        coeffs = dict.fromkeys(loops, 0)
        body = expr.replace(" ", "")
        if not body:
            raise DesignError(f"--{what} '{text}' has an empty row: expected loop expressions such as i+j+k "
                              f"separated by commas, over the band loops {','.join(loops)}")
        pos = 0
        for match in re.finditer(r"([+-]?)(?:(\d+)\*?)?([A-Za-z_]\w*)|([+-]?\d+)", body):
            if match.start() != pos:
                break
            pos = match.end()
            if match.group(4) is not None:
                raise DesignError(f"--{what} '{expr.strip()}' has a constant term: a space-time matrix row is "
                                  f"a sum of loops times integers")
            sign, number, name = match.group(1), match.group(2), match.group(3)
            if name not in coeffs:
                raise DesignError(f"--{what} '{expr.strip()}' uses '{name}', which is not a band loop "
                                  f"({','.join(loops)})")
            coeffs[name] += (-1 if sign == "-" else 1) * (int(number) if number else 1)
        if pos != len(body):
            raise DesignError(f"--{what} '{expr.strip()}' does not parse: expected a sum of integer multiples "
                              f"of the band loops ({','.join(loops)}), e.g. i+j+k or 2*i-j")
        rows.append(tuple(coeffs[loop] for loop in loops))
    return rows


def parse_matrix(text: str, n: int, loops: tuple[str, ...]) -> list[tuple[int, ...]]:
    """`"[[1,0,0],[0,1,0],[1,1,1]]"` -> rows; non-integers and wrong sizes are one-line errors."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    try:
        if json_depth(text) > 2:  # a matrix nests two deep; deeper would only recurse in the json module
            raise ValueError("nested too deep")
        value = json.loads(text)
    except ValueError:
        raise DesignError(f"--stt '{shown}' does not parse: expected a JSON list of {n} rows of {n} integers, "
                          f"e.g. {_identity_text(n)}") from None
    if not isinstance(value, list) or not all(isinstance(r, list) for r in value):
        raise DesignError(f"--stt '{shown}' is not a list of rows: expected e.g. {_identity_text(n)}")
    if len(value) != n or any(len(r) != n for r in value):
        sizes = "x".join([str(len(value)), str(len(value[0]) if value else 0)])
        raise DesignError(f"--stt is {sizes} (or ragged); expected {n}x{n}, one column per band loop "
                          f"({','.join(loops)})")
    for r in value:
        for v in r:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
                raise DesignError(f"--stt entry {v!r} is not an integer: a space-time matrix has integer entries")
    return [tuple(int(v) for v in r) for r in value]


def _identity_text(n: int) -> str:
    return "[" + ",".join("[" + ",".join("1" if r == c else "0" for c in range(n)) + "]" for r in range(n)) + "]"


def check_matrix(rows: list[tuple[int, ...]], loops: tuple[str, ...], space_dims: int) -> None:
    n = len(loops)
    if len(rows) != n or any(len(r) != n for r in rows):
        raise DesignError(f"the space-time matrix has {len(rows)} rows ({space_dims} space + "
                          f"{len(rows) - space_dims} time); expected {n}, one per band loop ({','.join(loops)}): "
                          f"give {n - space_dims} time row(s)")
    if not 1 <= space_dims < n:
        raise DesignError(f"{space_dims} space rows for {n} band loops: expected 1..{n - 1}")
    if sympy.Matrix(rows).det() == 0:
        raise DesignError("the space-time matrix is singular (its rows are linearly dependent): two "
                          "iterations would run on the same PE at the same time step; give an invertible matrix")


def map_space_time(space: DesignSpace, rows: list[tuple[int, ...]], space_dims: int) -> Mapping:
    """Check T against the dependences (LegalityError naming the one it breaks) and describe the array."""
    band = space.band
    check_matrix(rows, band.loops, space_dims)
    n = len(band.loops)
    transform = _linear_map(rows)
    movements: list[Movement] = []
    deps = space.dependences
    for dep in deps.flow + deps.read + deps.anti + deps.output:
        movements += _check(space, dep, band.in_band(dep).deltas(), transform, space_dims, rows)
    chains = _reduction_chains(space, rows, space_dims)
    _check_chain_ends(space, chains, rows)
    for dep in chains:
        movements += _check(space, dep, band.in_band(dep).deltas(), transform, space_dims, rows, kind="reduction")
    points = band.points(space.model.domains)
    image = points.apply(transform)
    pe = image.project_out(isl.dim_type.set, space_dims, n - space_dims)
    box = tuple((pe.dim_min_val(d).to_python(), pe.dim_max_val(d).to_python()) for d in range(space_dims))
    times = tuple((image.dim_min_val(d).to_python(), image.dim_max_val(d).to_python()) for d in range(space_dims, n))
    return Mapping(band.loops, tuple(rows), space_dims, ih.count_points(pe.coalesce()), box, times,
                   tuple(_dedupe(movements)), _listed_designs(space, rows, space_dims))


def _linear_map(rows) -> isl.Map:
    n = len(rows)
    ins = [f"d{c}" for c in range(n)]
    outs = [affine_text(r, ins) for r in rows]
    return isl.Map(f"{{ [{', '.join(ins)}] -> [{', '.join(outs)}] }}", context=ih.CTX)


def _lex_positive(n: int, space_dims: int, *, negative: bool = False) -> isl.Set:
    """Vectors (space part free) whose time part is lexicographically positive (or negative)."""
    names = [f"e{c}" for c in range(n)]
    pieces = []
    for m in range(space_dims, n):
        zeros = [f"{names[t]} = 0" for t in range(space_dims, m)]
        pieces.append(" and ".join(zeros + [f"{names[m]} {'<= -1' if negative else '>= 1'}"]))
    return isl.Set(f"{{ [{', '.join(names)}] : {' or '.join(f'({p})' for p in pieces)} }}", context=ih.CTX)


def _check(space: DesignSpace, dep: Dependence, steps: isl.Set, transform: isl.Map, space_dims: int, rows,
           kind: str | None = None) -> list[Movement]:
    n = len(rows)
    kind = kind or dep.kind
    zero = isl.Set(f"{{ [{', '.join('0' for _ in range(n))}] }}", context=ih.CTX)
    steps = steps.subtract(zero)  # distance 0: inside one iteration, in textual order
    if steps.is_empty():
        return []
    mapped = steps.apply(transform)
    what = f"{dep.kind} dependence {dep} on '{dep.array}'"
    forward = _lex_positive(n, space_dims)
    if kind == "read":
        if not mapped.is_subset(forward.union(_lex_positive(n, space_dims, negative=True))):
            raise LegalityError(f"{what}: reuse at the same time step on different PEs (a broadcast, not a "
                                f"systolic transfer) under space-time matrix {_matrix_text(rows)}")
    elif not mapped.is_subset(forward):
        raise LegalityError(f"{what}: the time step {_range_text(mapped, range(space_dims, n))} is not positive "
                            f"under space-time matrix {_matrix_text(rows)}: the sink would run before or with "
                            f"its source")
    if kind in ("anti", "output"):
        return []
    for d in range(space_dims):
        lo, hi = mapped.dim_min_val(d).to_python(), mapped.dim_max_val(d).to_python()
        if lo < -1 or hi > 1:
            raise LegalityError(f"{what}: space step {_range_text(mapped, range(space_dims))} along PE dimension "
                                f"{d + 1} is more than one PE under space-time matrix {_matrix_text(rows)}: data "
                                f"would skip PEs")
    space_step = _fixed(mapped, range(space_dims))
    time_step = _fixed(mapped, range(space_dims, n))
    if kind == "read" and time_step is not None and time_step < tuple([0] * len(time_step)):
        space_step = tuple(-s for s in space_step) if space_step is not None else None
        time_step = tuple(-t for t in time_step)
    return [Movement(dep.array, kind, space_step, time_step, str(dep))]


def _fixed(mapped: isl.Set, dims) -> tuple[int, ...] | None:
    values = [(mapped.dim_min_val(d).to_python(), mapped.dim_max_val(d).to_python()) for d in dims]
    return tuple(lo for lo, _ in values) if all(lo == hi for lo, hi in values) else None


def _range_text(mapped: isl.Set, dims) -> str:
    parts = []
    for d in dims:
        lo, hi = mapped.dim_min_val(d).to_python(), mapped.dim_max_val(d).to_python()
        parts.append(str(lo) if lo == hi else f"{lo}..{hi}")
    return "(" + ", ".join(parts) + ")"


def _matrix_text(rows) -> str:
    return "[" + ",".join("[" + ",".join(str(v) for v in r) + "]" for r in rows) + "]"


def _reduction_chains(space: DesignSpace, rows, space_dims: int) -> list[Dependence]:
    """Accumulation chains when the band runs in T's order: time rows first, then the PE."""
    band, model = space.band, space.model
    order_rows = list(rows[space_dims:]) + list(rows[:space_dims])
    reorder = _linear_map(order_rows)
    chains: list[Dependence] = []
    for red in space.dependences.reductions.values():
        refs = [r for r in model.references if r.statement == red.statement and r.access.array == red.array]
        writes = _union(r.relation for r in refs if r.is_write)
        reads = _union(r.relation for r in refs if not r.is_write)
        schedule = isl.UnionMap.from_map(band.schedules[red.statement].apply_range(reorder))
        found = ih.compute_dependences(reads, schedule, must=writes)
        for m in ih.maps_of(found):
            for piece in m.get_basic_maps():
                chains.append(Dependence("reduction", red.array, red.statement, red.statement,
                                         isl.Map.from_basic_map(piece)))
    return chains


def _check_chain_ends(space: DesignSpace, chains: list[Dependence], rows) -> None:
    """A reordered accumulation must start where the initialisation feeds it and end where the
    result is read: the same first and last updates as in the source order."""
    deps = space.dependences
    for red in deps.reductions.values():
        stmt = red.statement
        domain = space.model.domains[stmt]
        feeds = [d for d in deps.flow if d.sink == stmt and d.source != stmt and d.array == red.array]
        drains = [d for d in deps.flow if d.source == stmt and d.sink != stmt and d.array == red.array]
        if not feeds and not drains:
            continue
        old = [d.relation for d in deps.reduction if d.source == stmt]
        new = [d.relation for d in chains if d.source == stmt]
        for end, what, users in (("range", "first", feeds), ("domain", "last", drains)):
            if not users:
                continue
            before = _chain_end(domain, old, end)
            after = _chain_end(domain, new, end)
            if not before.is_equal(after):
                moved = after.subtract(before).union(before.subtract(after))
                user, example = users[0], str(moved.sample_point()).strip("{} ")
                raise LegalityError(
                    f"reduction on '{red.array}' ({space.kernel.statement(stmt).text}) would take its {what} "
                    f"update at another iteration (e.g. {example}) under "
                    f"space-time matrix {_matrix_text(rows)}, but {user.kind} dependence {user} ties it to "
                    f"the {what} one of the source order")


def _chain_end(domain: isl.Set, relations: list[isl.Map], end: str) -> isl.Set:
    """Iterations with no predecessor (end = "range") or no successor (end = "domain") in the chain."""
    linked = isl.Set.empty(domain.get_space())
    for rel in relations:
        linked = linked.union(rel.range() if end == "range" else rel.domain())
    return domain.subtract(linked)


def _union(relations) -> isl.UnionMap:
    result = isl.UnionMap.empty(isl.Space.params_alloc(ih.CTX, 0))
    for rel in relations:
        result = result.union(isl.UnionMap.from_map(rel))
    return result


def _dedupe(movements: list[Movement]) -> list[Movement]:
    seen, result = set(), []
    for m in movements:
        key = (m.array, m.kind, m.space_step, m.time_step)
        if key not in seen:
            seen.add(key)
            result.append(m)
    return result


def _listed_designs(space: DesignSpace, rows, space_dims: int) -> tuple[str, ...]:
    """Designs whose space loops are T's space rows (unit vectors, either sign): the same PEs and the
    same data movement; T's time rows only skew when each PE runs its iterations."""
    loops = []
    for row in rows[:space_dims]:
        nonzero = [c for c, v in enumerate(row) if v]
        if len(nonzero) != 1 or abs(row[nonzero[0]]) != 1:
            return ()
        loops.append(space.band.loops[nonzero[0]])
    chosen = tuple(sorted(loops, key=space.band.index))
    return tuple(d.id for d in space.designs if d.space_loops == chosen)


def stt_from_loops(space: DesignSpace, space_text: str, time_text: str | None) -> tuple[list[tuple[int, ...]], int]:
    loops = space.band.loops
    space_rows = parse_rows(space_text, loops, "space")
    if time_text is None:
        raise DesignError(f"--space needs --time: {len(loops) - len(space_rows)} time row(s) over "
                          f"{','.join(loops)}, e.g. --time {'+'.join(loops)}")
    time_rows = parse_rows(time_text, loops, "time")
    return space_rows + time_rows, len(space_rows)

