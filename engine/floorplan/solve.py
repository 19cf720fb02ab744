"""Netlist + device SLRs -> a floorplan: every process instance assigned to an SLR by a mixed-integer
program (pyomo + SCIP), as AutoBridge's ILP does it (Guo et al., FPGA'21;
github.com/Licheng-Guo/AutoBridge src/assign_slr.py): minimise the width of every FIFO times the
SLR boundaries it crosses, with each SLR within a utilisation cap of what it offers the kernel, the
wires crossing each boundary within its capacity, and each DRAM-facing instance in the SLR of its
DRAM bank.

The PE array is cut along one space loop: the PEs, ordered by their index along it (row by row for a
cut along the row index, with the level-1 modules joined to each PE one to one), take SLRs that run
one way along that order, so each cut falls between two rows (or inside one row, a step) and only
the PE chains cross it. Each space loop and both directions are tried; the cut with the fewest
crossing wires is kept. The PEs move in at most MAX_UNITS runs of consecutive PEs and `z[g, b]`
(group g in SLR b or below) is monotone along the order, which keeps the program small for SCIP: a
13 x 16 array solves in about ten seconds. No floorplan within the cap: the same program minimises
the cap instead, and the error names the smallest cap that works.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from engine.errors import EngineError
from engine.floorplan.netlist import Netlist, Node
from engine.models.device import RESOURCE_NAMES, Device

DEFAULT_CAP = 0.7
MAX_CAP = 1.0  # the largest cap an export without --cap relaxes to: all an SLR offers the kernel
# share of a boundary's SLLs the crossing FIFOs may take: TAPA's default --max-slr-width-limit,
# 15,000 wires (backend/python/tapa/steps/optimize.py), of the U250's 23,040
CROSSING_CAP = 15000 / 23040
TIME_LIMIT = 60.0
GAP = 0.05  # relative optimality gap SCIP may stop at


@lru_cache(maxsize=1)
def _scip_options() -> dict:
    """SCIP's feasibility emphasis with fast presolving, as the plain parameters they set (pyomo
    passes parameters only): the program's LP bound is weak, good assignments early matter more."""
    import pyscipopt
    tuned = pyscipopt.Model()
    tuned.setEmphasis(pyscipopt.SCIP_PARAMEMPHASIS.FEASIBILITY)
    tuned.setPresolve(pyscipopt.SCIP_PARAMSETTING.FAST)
    default = pyscipopt.Model().getParams()
    return {k: v for k, v in tuned.getParams().items() if default.get(k) != v}


class FloorplanError(EngineError):
    """No floorplan within the cap; `smallest_cap` is the least cap that has one (None: none at all)."""

    def __init__(self, message: str, smallest_cap: float | None):
        super().__init__(message)
        self.smallest_cap = smallest_cap


@dataclass(frozen=True)
class Boundary:
    below: int  # between SLR `below` and `below + 1`
    wires: int  # FIFO bits crossing it
    fifos: int
    capacity: int  # wires allowed (CROSSING_CAP of the SLLs)


@dataclass(frozen=True)
class Floorplan:
    slr_of: dict  # Node -> SLR
    cut_along: str | None  # the space loop whose lines move together (None: a single PE)
    cap: float
    used: tuple[dict[str, float], ...]  # per SLR
    available: tuple[dict[str, int], ...]
    boundaries: tuple[Boundary, ...]
    crossing_wires: int  # sum of width x boundaries crossed: the objective
    seconds: float

    def utilisation(self, slr: int) -> dict[str, float]:
        return {r: self.used[slr][r] / self.available[slr][r] for r in RESOURCE_NAMES}

    def most_utilised(self) -> tuple[int, str, float]:
        """(SLR, resource, share) of the fullest SLR resource."""
        return max(((s, r, u) for s in range(len(self.used)) for r, u in self.utilisation(s).items()),
                   key=lambda t: t[2])

    def instances(self, slr: int) -> list[Node]:
        return [n for n, s in self.slr_of.items() if s == slr]


MAX_UNITS = 64  # PE runs the program places: consecutive PEs in cut order move together


def _groups(net: Netlist, axis: int | None) -> tuple[dict[Node, tuple], list[tuple]]:
    """Instance -> its group, and the PE groups in cut order. The PEs are ordered along `axis` first
    (rows, then the PEs within a row, for a cut along the row index) and split into runs of
    consecutive PEs (one PE each unless there are more than MAX_UNITS), each with the instances
    joined to its PEs one to one (`to_pe`); every other instance is its own group."""
    partner = {}
    for f in net.fifos:
        if f.pattern == "to_pe":
            pe, other = (f.target, f.source) if f.target[0] == "PE" else (f.source, f.target)
            if other not in net.pinned:
                partner[other] = pe
    pes = sorted((n for n in net.instances if net.kinds[n] == "pe"),
                 key=lambda n: (n[1][axis],) + n[1] if axis is not None and n[1] else n[1])
    run = max(1, math.ceil(len(pes) / MAX_UNITS))
    unit = {pe: ("pes", k // run) for k, pe in enumerate(pes)}
    group = {}
    for node in net.instances:
        pe = node if net.kinds[node] == "pe" else partner.get(node)
        group[node] = unit[pe] if pe is not None else ("one", node)
    return group, sorted(set(unit.values()), key=lambda g: g[1])


def _program(net: Netlist, device: Device, axis: int | None, up: bool, cap: float | None, crossing_cap: float):
    """The pyomo model for one cut; `cap` None: minimise the cap instead of the crossings."""
    import pyomo.environ as pyo

    group, ordered = _groups(net, axis)
    names = sorted(set(group.values()), key=repr)
    slrs = range(len(device.slrs))
    bounds = range(len(device.slrs) - 1)
    use = {g: dict.fromkeys(RESOURCE_NAMES, 0.0) for g in names}
    for node, r in net.instances.items():
        for k in RESOURCE_NAMES:
            use[group[node]][k] += r[k]
    wires: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for f in net.fifos:
        a, b = group[f.source], group[f.target]
        if a != b:
            key = (a, b) if repr(a) < repr(b) else (b, a)
            wires[key][0] += f.width_bits
            wires[key][1] += 1
    edges = sorted(wires, key=repr)
    index = {g: k for k, g in enumerate(names)}
    top = len(device.slrs) - 1
    m = pyo.ConcreteModel()
    # z[g, b] = 1: group g sits in SLR b or below (monotone in b); its SLR is top - sum_b z[g, b]
    m.z = pyo.Var(range(len(names)), bounds, within=pyo.Binary)
    m.y = pyo.Var(range(len(edges)), bounds, bounds=(0, 1))
    m.c = pyo.ConstraintList()
    for g in range(len(names)):
        for b in range(top - 1):
            m.c.add(m.z[g, b] <= m.z[g, b + 1])
    for node, slr in net.pinned.items():
        for b in bounds:
            m.z[index[group[node]], b].fix(1 if b >= slr else 0)

    def below(g, b):  # 1 when group g sits in SLR b or lower
        return m.z[index[g], b]

    def x(g, s):  # 1 when group g sits in SLR s
        return (m.z[g, s] if s < top else 1) - (m.z[g, s - 1] if s > 0 else 0)

    for e, (a, b2) in enumerate(edges):
        for b in bounds:
            m.c.add(m.y[e, b] >= below(a, b) - below(b2, b))
            m.c.add(m.y[e, b] >= below(b2, b) - below(a, b))
    capacity = int(crossing_cap * device.sll_per_boundary)
    for b in bounds:
        m.c.add(sum(wires[edges[e]][0] * m.y[e, b] for e in range(len(edges))) <= capacity)
    if cap is None:
        m.u = pyo.Var(bounds=(0, None))
    limit = m.u if cap is None else cap
    for s in slrs:
        for k in RESOURCE_NAMES:
            if any(use[g][k] for g in names):
                m.c.add(sum(use[g][k] * x(index[g], s) for g in names) <= limit * device.slrs[s].resources[k])
    for g, h in zip(ordered, ordered[1:]):  # the PEs' SLRs rise (up) or fall along the cut order
        for b in bounds:
            m.c.add(below(h, b) <= below(g, b) if up else below(h, b) >= below(g, b))
    crossing = sum(wires[edges[e]][0] * m.y[e, b] for e in range(len(edges)) for b in bounds)
    # minimising the cap, the crossings break ties (scaled below one cap step of 1e-4)
    total = max(1.0, sum(w for w, _ in wires.values()) * max(1, len(device.slrs) - 1))
    m.obj = pyo.Objective(expr=m.u + 1e-5 * crossing / total if cap is None else crossing, sense=pyo.minimize)
    return pyo, m, names, index, group, edges, wires


def _solve(net: Netlist, device: Device, axis: int | None, up: bool, cap: float | None, crossing_cap: float,
           time_limit: float):
    """(assignment group -> SLR, minimised value) or None when infeasible."""
    from pyomo.contrib.solver.common.util import NoFeasibleSolutionError

    pyo, m, names, index, group, edges, wires = _program(net, device, axis, up, cap, crossing_cap)
    solver = pyo.SolverFactory("scip_direct")
    try:
        solver.solve(m, options={**_scip_options(), "limits/time": time_limit, "limits/gap": GAP})
    except NoFeasibleSolutionError:
        return None
    top = len(device.slrs) - 1
    slr = {g: top - round(sum(pyo.value(m.z[index[g], b]) for b in range(top))) for g in names}
    return {node: slr[group[node]] for node in net.instances}, pyo.value(m.u) if cap is None else None


def _cuts(net: Netlist) -> list[tuple[int | None, bool]]:
    """(space loop index, whether the PEs' SLRs rise along it) of every cut tried."""
    axes = [d for d, n in enumerate(net.pe_grid) if n > 1] or [None]
    return [(axis, up) for axis in axes for up in (True, False)]


def _evaluate(net: Netlist, device: Device, slr_of: dict, axis, cap: float, crossing_cap: float,
              seconds: float) -> Floorplan:
    used = [dict.fromkeys(RESOURCE_NAMES, 0.0) for _ in device.slrs]
    for node, r in net.instances.items():
        for k in RESOURCE_NAMES:
            used[slr_of[node]][k] += r[k]
    wires = [0] * (len(device.slrs) - 1)
    fifos = [0] * (len(device.slrs) - 1)
    total = 0
    for f in net.fifos:
        lo, hi = sorted((slr_of[f.source], slr_of[f.target]))
        for b in range(lo, hi):
            wires[b] += f.width_bits
            fifos[b] += 1
        total += f.width_bits * (hi - lo)
    capacity = int(crossing_cap * device.sll_per_boundary)
    return Floorplan(slr_of, None if axis is None else net.space_loops[axis], cap, tuple(used),
                     tuple(s.resources for s in device.slrs),
                     tuple(Boundary(b, wires[b], fifos[b], capacity) for b in range(len(wires))), total, seconds)


def floorplan(net: Netlist, device: Device, *, cap: float = DEFAULT_CAP, crossing_cap: float = CROSSING_CAP,
              time_limit: float = TIME_LIMIT) -> Floorplan:
    """The floorplan with the fewest crossing wires within `cap` (a share of each SLR's resources);
    FloorplanError naming the smallest cap that works when there is none."""
    if not 0 < cap <= 1:
        raise EngineError(f"--cap {cap:g} is not a share of an SLR's resources: expected a number in (0, 1]")
    if not 0 < crossing_cap <= 1:
        raise EngineError(f"--crossing-cap {crossing_cap:g}: expected a number in (0, 1]")
    start = time.perf_counter()
    best = None
    cuts = _cuts(net) if cap >= least_cap(net, device) else []  # below the bound no cut can work
    for k, (axis, up) in enumerate(cuts):
        left = max(1.0, (time_limit - (time.perf_counter() - start)) / (len(cuts) - k))
        found = _solve(net, device, axis, up, cap, crossing_cap, left)
        if found is None:
            continue
        plan = _evaluate(net, device, found[0], axis, cap, crossing_cap, 0.0)
        if best is None or plan.crossing_wires < best[0].crossing_wires:
            best = (plan, axis)
    if best is not None:
        return _evaluate(net, device, best[0].slr_of, best[1], cap, crossing_cap, time.perf_counter() - start)
    smallest = smallest_cap(net, device, crossing_cap=crossing_cap, time_limit=time_limit)
    if smallest is None:
        raise FloorplanError(f"no floorplan keeps the FIFOs crossing each SLR boundary within "
                             f"{int(crossing_cap * device.sll_per_boundary)} wires, at any cap", None)
    if smallest > 1:
        raise FloorplanError(f"the design does not fit the SLRs: the best floorplan fills one to {smallest:.0%} of "
                             f"a resource (--cap is at most 1)", smallest)
    bound, resource = max((net.total(r) / sum(s.resources[r] for s in device.slrs), r) for r in RESOURCE_NAMES)
    why = (f": the design takes {bound:.1%} of the {resource} all SLRs offer the kernel, and no split into SLRs "
           f"is more even than that" if _hundredths(bound) >= smallest else "")
    raise FloorplanError(f"no floorplan keeps every SLR within --cap {cap:g}; the smallest cap that works is "
                         f"{smallest:.2f}{why}", smallest)


def export_floorplan(net: Netlist, device: Device, *, cap: float = DEFAULT_CAP, relax: bool = True) -> Floorplan:
    """The floorplan an export applies, the one rule the export and every clock estimate read: within
    `cap` or, when no floorplan meets it and `relax` (an export without --cap), at the smallest cap
    that works up to MAX_CAP (the plan's `cap` says which; AutoBridge relaxes its cap the same way,
    docs/floorplan.md). Otherwise FloorplanError naming the smallest cap; a design no floorplan fits
    within MAX_CAP does not fit the SLRs and will not route. `floorplans_within_max_cap` is the same
    rule's test without a solve, for a tuner."""
    try:
        return floorplan(net, device, cap=cap)
    except FloorplanError as exc:
        if not relax or exc.smallest_cap is None or exc.smallest_cap > MAX_CAP:
            raise
        return floorplan(net, device, cap=exc.smallest_cap)


def floorplans_within_max_cap(bound):
    """Whether an export can floorplan a design whose arithmetic bound (`least_cap`, a number or a
    numpy array) is `bound`: necessary, not sufficient (PEs come whole; block RAM and crossings
    constrain a split too). Beyond it no floorplan exists at any cap the export takes."""
    return bound <= MAX_CAP


def crossing_fifos(net: Netlist, plan: Floorplan) -> list[tuple]:
    """(FIFO, its source's SLR, its target's SLR) for every FIFO between two SLRs: those the export
    pipelines, a relay stage per boundary crossed."""
    return [(f, plan.slr_of[f.source], plan.slr_of[f.target]) for f in net.fifos
            if plan.slr_of[f.source] != plan.slr_of[f.target]]


def least_cap(net: Netlist, device: Device) -> float:
    """A lower bound on any floorplan's cap, from arithmetic alone: each resource's total over what all
    the SLRs offer the kernel (MM 13x16x8: 8,320 DSP of the U250's 11,508, 0.723; no split into SLRs
    does better than an even one)."""
    return max(net.total(r) / sum(s.resources[r] for s in device.slrs) for r in RESOURCE_NAMES)


def smallest_cap(net: Netlist, device: Device, *, crossing_cap: float = CROSSING_CAP,
                 time_limit: float = TIME_LIMIT) -> float | None:
    """The least share of every SLR's resources some floorplan stays within (rounded up to 0.01), with
    the crossings within capacity; None when the crossings alone cannot be met."""
    best, start = None, time.perf_counter()
    cuts = _cuts(net)
    for k, (axis, up) in enumerate(cuts):
        left = max(1.0, (time_limit - (time.perf_counter() - start)) / (len(cuts) - k))
        found = _solve(net, device, axis, up, None, crossing_cap, left)
        if found is not None and (best is None or found[1] < best):
            best = found[1]
        if best is not None and _hundredths(best) <= _hundredths(least_cap(net, device)):
            break  # at the resource bound already: no other cut does better
    return None if best is None else _hundredths(best)


def _hundredths(share: float) -> float:
    return math.ceil(share * 100 - 1e-6) / 100
