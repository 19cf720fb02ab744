"""Polyhedral model + dependences -> the outermost permutable band the array is built from.

First the band as written: the loops around the deepest statement, with shallower statements
(initialisations before the inner loops, finalisations after them) pinned to the first or last
iteration of the loops they are not in, as isl's scheduler would place them. If some dependence
has a negative distance on that band, isl's scheduler is asked for a permutable band instead.
Reduction dependences never constrain the band (reductions.py says why).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from engine.compiler import isl_helpers as ih
from engine.compiler.dependences import Dependence, Dependences
from engine.compiler.ir import Affine
from engine.compiler.polyhedral import PolyhedralModel
from engine.errors import LegalityError


@dataclass(frozen=True)
class Band:
    loops: tuple[str, ...]  # member names: the loop iterator where a member is one, else c<n>
    extents: tuple[int, ...]  # problem size along each member
    schedules: dict[str, isl.Map]  # statement -> { S[...] -> [b0, ..., bn-1] }
    full_statements: tuple[str, ...]  # statements that iterate every member (the compute statements)
    origin: str  # "written" or "isl scheduler"

    def in_band(self, dep: Dependence) -> isl.Map:
        """A dependence as a relation between band points."""
        return dep.relation.apply_domain(self.schedules[dep.source]).apply_range(self.schedules[dep.sink])

    def distance_ranges(self, dep: Dependence) -> list[tuple[int, int]]:
        return ih.distance_range(self.in_band(dep))

    @property
    def compute_statements(self) -> tuple[str, ...]:
        """Every statement the PE runs at a band point: the full statements, then, in textual
        order, the statements that iterate every band member under guards (LU's `if (j == k)`
        branches, a `k == 0` initialisation inside the k loop). Statements with fewer loops (MM's
        `C[i][j] = 0` before the k loop) are not among them."""
        n = len(self.loops)
        guarded = [s for s, sched in self.schedules.items()
                   if s not in self.full_statements and sched.dim(isl.dim_type.in_) == n]
        return self.full_statements + tuple(sorted(guarded, key=lambda s: int(s[1:])))  # S<textual index>

    def index(self, loop: str) -> int:
        return self.loops.index(loop)

    def points(self, domains: dict[str, isl.Set]) -> isl.Set:
        """The band points at which some statement runs (`domains`: the model's). For a triangular
        nest such as LU this is the pyramid, not the box of the extents."""
        images = None
        for stmt, schedule in self.schedules.items():
            image = domains[stmt].apply(schedule)
            images = image if images is None else images.union(image)
        return images.coalesce()

    def point_count(self, domains: dict[str, isl.Set]) -> int:
        """Exact number of `points` (isl)."""
        return ih.count_points(self.points(domains))

    def occupied_count(self, domains: dict[str, isl.Set], loops: tuple[str, ...]) -> int:
        """How many value tuples of `loops` some band point takes (isl, exact): with those loops as
        space loops and one PE per value, the PEs that run at least one iteration. LU's triangle
        k <= j gives N (N + 1) / 2 PEs along (k, j), not N^2."""
        points = self.points(domains)
        for d in reversed(range(len(self.loops))):
            if self.loops[d] not in loops:
                points = points.project_out(isl.dim_type.set, d, 1)
        return ih.count_points(points.coalesce())


def runs_several_statements(kernel, band: Band) -> bool:
    """Does the PE run several statements (LU's guarded branches, or arrays declared inside the scop)
    rather than one update, possibly with a guarded initialisation of the same element? Such a PE keeps
    values that never cross a tile, so its designs take one tile per loop, with no latency hiding and
    no SIMD: the tuning bounds say so (tuning.py) and the exporter builds exactly that (descriptor
    `compute.several_statements`)."""
    statements = [kernel.statement(n) for n in band.compute_statements]
    plain = {str(s.target) for s in statements if not s.guards}
    used = {a.array for s in statements for a in (s.target, *s.reads())}
    return (any(s.guards and str(s.target) not in plain for s in statements)
            or any(kernel.arrays[a].local for a in used if a in kernel.arrays))


def find_band(model: PolyhedralModel, deps: Dependences) -> Band:
    band = _written_band(model)
    if band is not None and _is_permutable(band, deps.validity):
        return band
    return _scheduled_band(model, deps)


def _is_permutable(band: Band, validity: tuple[Dependence, ...]) -> bool:
    return all(lo >= 0 for dep in validity for lo, _ in band.distance_ranges(dep))


def _written_band(model: PolyhedralModel) -> Band | None:
    statements = model.kernel.statements
    deepest = max(statements, key=lambda s: len(s.loops))
    path = [loop.uid for loop in deepest.loops]
    schedules: dict[str, isl.Map] = {}
    for stmt in statements:
        if [loop.uid for loop in stmt.loops] != path[:len(stmt.loops)]:
            return None  # sibling nests: not one written band
        depth = len(stmt.loops)
        values = {name: Affine.var(name) for name in stmt.iterators}
        before = depth < len(path) and stmt.position[depth] < deepest.position[depth]
        for loop in deepest.loops[depth:]:
            bound = loop.lower if before else loop.upper - Affine.of({}, 1)
            values[loop.name] = bound.substitute(values)
        members = ", ".join(str(values[loop.name]) for loop in deepest.loops)
        text = f"{{ {stmt.name}[{', '.join(stmt.iterators)}] -> [{members}] }}"
        schedules[stmt.name] = isl.Map(text, context=ih.CTX).intersect_domain(model.domains[stmt.name])
    return _make_band(model, schedules, list(deepest.iterators), "written")


def _scheduled_band(model: PolyhedralModel, deps: Dependences) -> Band:
    validity = _union(dep.relation for dep in deps.validity)
    proximity = _union(dep.relation for dep in deps.all())
    constraints = isl.ScheduleConstraints.on_domain(model.domain)
    if validity is not None:
        constraints = constraints.set_validity(validity).set_coincidence(validity)
    if proximity is not None:
        constraints = constraints.set_proximity(proximity)
    node = constraints.compute_schedule().get_root().child(0)
    if node.get_type() != isl.schedule_node_type.band or not node.band_get_permutable():
        raise LegalityError("no permutable band of loops encloses every statement, so no systolic array "
                            "can be built (the dependences rule out tiling the loops together)",
                            model.kernel.scop_location)
    partial = isl.UnionMap.from_multi_union_pw_aff(node.band_get_partial_schedule())
    schedules = {m.get_tuple_name(isl.dim_type.in_): m.intersect_domain(
        model.domains[m.get_tuple_name(isl.dim_type.in_)]) for m in ih.maps_of(partial)}
    deepest = max(model.kernel.statements, key=lambda s: len(s.loops))
    names = [_member_name(schedules[deepest.name], m, deepest.iterators, model.domains[deepest.name])
             for m in range(node.band_n_member())]
    names = [n if names.count(n) == 1 else f"c{k}" for k, n in enumerate(names)]
    return _make_band(model, schedules, names, "isl scheduler")


def _member_name(schedule: isl.Map, member: int, iterators, domain: isl.Set) -> str:
    n_out = schedule.dim(isl.dim_type.out)
    single = schedule.project_out(isl.dim_type.out, member + 1, n_out - member - 1) \
                     .project_out(isl.dim_type.out, 0, member)
    stmt = schedule.get_tuple_name(isl.dim_type.in_)
    for name in iterators:
        plain = isl.Map(f"{{ {stmt}[{', '.join(iterators)}] -> [{name}] }}", context=ih.CTX)
        if plain.intersect_domain(domain).is_equal(single):
            return name
    return f"c{member}"


def _make_band(model: PolyhedralModel, schedules: dict[str, isl.Map], names: list[str], origin: str) -> Band:
    images = {stmt: model.domains[stmt].apply(sched) for stmt, sched in schedules.items()}
    n = len(names)
    ranges = {stmt: [(img.dim_min_val(d).to_python(), img.dim_max_val(d).to_python()) for d in range(n)]
              for stmt, img in images.items()}
    overall = [(min(r[d][0] for r in ranges.values()), max(r[d][1] for r in ranges.values())) for d in range(n)]
    full = tuple(stmt for stmt in schedules if ranges[stmt] == overall)
    extents = tuple(hi - lo + 1 for lo, hi in overall)
    return Band(tuple(names), extents, schedules, full, origin)


def _union(relations) -> isl.UnionMap | None:
    result = None
    for rel in relations:
        rel = isl.UnionMap.from_map(rel)
        result = rel if result is None else result.union(rel)
    return result
