"""SearchSpace + a configuration -> Certificate: a proven lower bound on the latency of every feasible
configuration of the design, hence how far the configuration can be from the optimum (the gap), or
a better configuration; or a proof that no configuration fits the device.

Branch and bound over boxes of the tunable parameters (an integer range per parameter):
- a box's lower bound on latency and on each resource the search's feasibility checks (every one
  of RESOURCE_NAMES, `PerformanceModel.fits`) comes from interval evaluation of the design's symbolic model
  (engine/models/interval.py); data-packing factors, inferred from the tuning parameters, get the
  range their inference rule allows over the box;
- a box is pruned when its resource lower bounds, rounded as the evaluator rounds counts, fail
  `PerformanceModel.fits` itself (nothing in it fits: the test is the search's own) or when
  its latency bound is within the target gap of the incumbent (nothing in it is better by more);
- the latency is bounded in three forms and the largest bound kept (BoxBounds says which and why); a
  product of box variables that a resource is a monomial of (the PE count times the SIMD lanes in
  DSP) is capped, per box, by every resource: c_r * product + rest_r <= budget_r with rest_r bounded
  from below over the box; where the latency divides by the product, the capped range is used, so
  the latency bound holds at the configurations of the box that fit;
- before bounding, a box is narrowed by the design's constraints (a power-of-two factor to powers of
  two, a divisor to at most what it divides, a multiple of a fixed divisor to its multiples, each
  factor of a monomial resource to what the budget leaves); a box left empty holds nothing that fits;
- further latency forms write each ceiling that is not a tile count as its argument plus a fraction in
  [0, 1] (ceiling(u) - u always is one) and distribute tile counts into the maxima they multiply,
  expanded: a pass design's count x ceiling(h*o*w/pack) drain becomes the padded extents over the
  packing factor, where interval arithmetic took each factor at its own end;
- the root box is first cut at each value of its variables of at most 4 values (filter sizes, small
  SIMD factors); then boxes are taken lowest bound first, a batch at a time, and split in two along
  the parameter of largest hi/lo weighted by its pseudo-cost (how much splitting it raised bounds so
  far, per unit of log(hi/lo)), at the geometric middle (latency is a product of such factors), moved
  for a tile size to where its tile count changes (a box of fixed tile counts has exact padded extents);
- a box of at most `leaf` points is enumerated: every point is evaluated exactly by the search's own
  evaluator (the model and the legality and feasibility rules), which may improve the incumbent;
  a box left open has its top corner and a random point evaluated the same way (a poor start is
  improved long before the boxes get small).

The proven bound is the smallest of: the incumbent, the bounds of boxes pruned by bound, the bounds
of boxes still open when time runs out. gap = incumbent / bound - 1: the incumbent's latency is at
most that fraction above the optimum's (its throughput at most that fraction below).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy

from engine.compiler.architecture.symbols import smin, symbol
from engine.errors import EngineError
from engine.models.constraints import feasible_mask
from engine.models.device import RESOURCE_NAMES
from engine.models.interval import IntervalProgram, interval_program
from engine.search.space import Config, SearchSpace

RESOURCES = RESOURCE_NAMES  # every resource PerformanceModel.fits checks
PSEUDO_WEIGHT = 8.0  # splits of weight the mean of all variables has in a variable's pseudo-cost
ROUNDING = 1e-12  # relative float error allowed for in a latency bound (see engine/models/interval.py)


@dataclass(frozen=True)
class Certificate:
    design: str
    params: dict[str, int] | None  # the incumbent (the best configuration known at the end)
    latency_cycles: float | None
    lower_bound_cycles: float | None  # no feasible configuration has a lower latency
    gap: float | None  # latency_cycles / lower_bound_cycles - 1
    proven: bool  # the gap is within the target (or: proven that nothing fits)
    boxes_explored: int
    boxes_pruned: int
    seconds: float
    target_gap: float
    fits: bool = True  # False: proven that no configuration fits the device
    tightest: str | None = None  # when nothing fits: the resource that comes closest to proving it alone
    improved: bool = False  # the branch and bound found a better configuration than the one given
    notes: tuple[str, ...] = field(default=())

    @property
    def status(self) -> str:
        if not self.fits:
            return "no configuration fits (proven)"
        if self.latency_cycles is None:
            return "no feasible configuration found"
        if self.gap is None:
            return "no gap proven yet (the bound is not positive)"
        if self.gap is not None and self.gap <= 1e-12:
            return "optimal (proven)"
        within = f"within {100 * self.gap:.2f}% of optimal"
        return f"{within} (proven)" if self.proven else f"{within} (proof not closed)"

    def to_json(self) -> dict:
        return {"design": self.design, "params": self.params, "latency_cycles": self.latency_cycles,
                "lower_bound_cycles": self.lower_bound_cycles, "gap": self.gap, "proven": self.proven,
                "boxes_explored": self.boxes_explored, "boxes_pruned": self.boxes_pruned,
                "seconds": self.seconds, "target_gap": self.target_gap, "fits": self.fits,
                "tightest": self.tightest, "improved": self.improved, "status": self.status,
                "notes": list(self.notes)}


def _next_pow2(x: np.ndarray) -> np.ndarray:
    return np.exp2(np.ceil(np.log2(np.maximum(x, 1.0))))


def _prev_pow2(x: np.ndarray) -> np.ndarray:
    return np.exp2(np.floor(np.log2(np.maximum(x, 1.0))))


class BoxBounds:
    """Lower bounds of latency and resources over batches of boxes of one SearchSpace.

    A box ranges over the tunable parameters and, for each divisor `d` of `m` that need not be a
    power of two (a latency-hiding factor), over the quotient `q = m / d` as well (`d_q`): in the
    models `1/d` becomes `q/m`, so a PE count `m/d` is `q` and the DSP count is a product of
    quotients, bounded tightly by the quotients' ranges, where `m/d` over ranges of m and d would
    span from the box's fewest PEs to its most. Contraction keeps d * q = m consistent."""

    def __init__(self, space: SearchSpace):
        self.space = space
        model = space.model
        self.params = list(space.names)
        params = {p.name: p for p in space.design.params if p.tunable}
        position = {n: k for k, n in enumerate(self.params)}
        self.quotients: list[tuple[int, int, int]] = []  # (divisor, multiple, quotient) column indices
        self.names = list(self.params)
        subs = {}
        for n in self.params:
            pow2 = any(c.kind == "power_of_two" for c in params[n].constraints)
            of = next((c.other for c in params[n].constraints if c.kind == "divides" and c.other in position), None)
            if of is None or pow2:
                continue
            self.quotients.append((position[n], position[of], len(self.names)))
            self.names.append(f"{n}_q")
            subs[symbol(n) ** -1] = symbol(f"{n}_q") / symbol(of)
        self.lower = np.array([params[n].lower for n in self.params] + [1] * len(self.quotients), dtype=np.int64)
        self.upper = np.array([params[n].upper for n in self.params]
                              + [params[self.params[m]].upper for _, m, _ in self.quotients], dtype=np.int64)
        self.pow2 = [position[n] for n in self.params if any(c.kind == "power_of_two" for c in params[n].constraints)]
        self.divides = [(position[n], position[c.other]) for n in self.params for c in params[n].constraints
                        if c.kind == "divides" and c.other in position]  # d divides m
        self.divides += [(q, m) for _, m, q in self.quotients]  # so does q
        self.packing = list(model.packing)
        pack_exprs = []
        for p in self.packing:
            pack_exprs += [p.innermost, p.rate if p.rate is not None else 0, p.minimum if p.minimum is not None else 0]
        self.step_slots = []  # per packing factor: where its steps (engine/models/evaluate.infer_packing) are
        for p in self.packing:
            self.step_slots.append(range(len(pack_exprs), len(pack_exprs) + len(p.steps)))
            pack_exprs += list(p.steps)
        pack_exprs = [sympy.sympify(e).xreplace(subs) for e in pack_exprs]
        # extents that are monomials of box variables: powers of two surely dividing them bound the
        # inferred factor from below (a multiple of a fixed SIMD factor has at least its low bit)
        self.extent_monomials = [_monomial(pack_exprs[3 * k], self.names, 1.0) for k in range(len(self.packing))]
        self._packs = interval_program(pack_exprs, self.names, nonnegative=self.names) if self.packing else None
        symbolic = model.symbolic
        exprs = [sympy.sympify(e).xreplace(subs) for e in [symbolic.latency] + [symbolic.resources[r] for r in RESOURCES]]
        # a second form of the latency, bounded too (the larger lower bound holds): each tile count
        # ceiling(N/m) written as p/m with p the padded extent, each divisor d as m/q, expanded, so that
        # a tile count meets its tile size in one product (N^3/(PEs x lanes) appears as such)
        self.padded = [(position[g.t1], g.extent) for g in space.loops]
        self.extents = np.zeros(len(self.names), dtype=np.int64)  # per column: the loop extent of a tile size
        for k, extent in self.padded:
            self.extents[k] = extent
        tiles = {sympy.ceiling(sympy.Integer(g.extent) / symbol(g.t1)): symbol(f"{g.t1}_p") / symbol(g.t1)
                 for g in space.loops}
        divisors = {symbol(self.params[d]): symbol(self.params[m]) / symbol(self.names[q])
                    for d, m, q in self.quotients}
        # the model with common factors pulled out of sums (a difference of tile-count products, as
        # in a pass structure's all tiles minus the output blocks, becomes a product with a factor
        # (count - 1) >= 0) and those differences kept whole through the expansions below
        factored = sympy.factor_terms(symbolic.latency)
        count_set = {sympy.ceiling(sympy.Integer(g.extent) / symbol(g.t1)) for g in space.loops}
        kept = factored.replace(lambda t: _count_difference(t, count_set), lambda t: _KEEP(t))
        # a fifth form, a lower bound: where a sum mixes one expression weighted by a tile count with
        # others weighted by (count - 1) and the like (the first pass and the passes that read back),
        # the sum is at least the weights' total times the least expression: min(count * first,
        # count * later) expands with every tile count meeting its tile size
        lower_params = {symbol(n): (int(params[n].lower), int(params[n].upper)) for n in self.params}
        mixed = kept.replace(lambda t: _mixture(t, count_set, lower_params) is not None,
                             lambda t: _mixture(t, count_set, lower_params))
        sources = [kept] + ([_push(mixed, count_set)] if mixed != kept else [])
        seconds = [sympy.expand(e.xreplace(tiles).xreplace(divisors)) for e in sources]
        # a subtracted term's upper bound is tighter over the tile counts themselves (p/m over-estimates)
        counts = {symbol(f"{g.t1}_p"): sympy.ceiling(sympy.Integer(g.extent) / symbol(g.t1)) * symbol(g.t1)
                  for g in space.loops}
        # ... except where the count meets its tile size: m * ceiling(N/m) is the padded extent p,
        # whose range is much tighter than the product of the two ranges
        pairs = [(symbol(g.t1), sympy.ceiling(sympy.Integer(g.extent) / symbol(g.t1)), symbol(f"{g.t1}_p"))
                 for g in space.loops]
        seconds = [second.replace(lambda t: t.is_Add, lambda t: sympy.Add(
            *(_pair(a.xreplace(counts), pairs) if a.could_extract_minus_sign() else a for a in t.args)))
            for second in seconds]
        # a resource that is a monomial of box variables caps that product at every configuration that
        # fits (5 q_i q_j k_t2 <= DSP budget), and so does every resource holding the product in a term
        # (LUT = 430 q_i q_j k_t2 + rest <= LUT budget, rest bounded below over the box); where the
        # latency divides by the product, the product is one input whose range is capped so, instead
        # of the product of its factors' ranges
        budgets = np.array([space.device.budget(r) for r in RESOURCES])
        limits = np.floor(budgets) + 0.5
        self.capped = []  # (input name, [(column, exponent)], [(resource, coefficient, rest output)])
        rests = []
        for r, e in enumerate(exprs[1:len(RESOURCES) + 1]):
            monomial = _monomial(e, self.names, limits[r])
            if monomial is None or any(x <= 0 for _, x in monomial[1]):
                continue
            name = f"__product_{RESOURCES[r]}"
            product = sympy.Mul(*(symbol(self.names[k]) ** x for k, x in monomial[1]))
            seconds = [second.replace(lambda t: t.is_Mul, lambda t: _cap(t, product, symbol(name)))
                       for second in seconds]
            caps = []
            for s, resource in enumerate(exprs[1:len(RESOURCES) + 1]):
                coefficient, rest = _split_product(resource, product)
                if coefficient > 0:
                    # terms that are the product less some of its factors (a per-PE term beside a
                    # per-lane one) are at least c * product / (those factors' upper ends)
                    parts, others = _submonomials(rest, monomial[1], self.names)
                    caps.append((s, coefficient, len(rests), parts, len(rests) + 1))
                    rests += [rest, others]
            self.capped.append((name, monomial[1], caps))
        self.forms = [0, len(exprs)]
        exprs.append(_unkeep(seconds[0]))
        # a third form: the model itself expanded, each m * ceiling(N/m) paired into p, each divisor
        # kept (a 1-D array whose tile count times its latency-hiding factor is exact stays exact)
        third = sympy.expand(kept.xreplace(subs))
        third = third.replace(lambda t: t.is_Add, lambda t: sympy.Add(*(_pair(a, pairs) for a in t.args)))
        self.forms.append(len(exprs))
        exprs.append(_unkeep(third))
        self.forms.append(len(exprs))
        exprs.append(factored.xreplace(subs))  # a fourth: the model with its common factors pulled out
        for second in seconds[1:]:
            self.forms.append(len(exprs))
            exprs.append(_unkeep(second))
        # more forms: each ceiling other than a tile count written as its argument plus a fraction in
        # [0, 1) (an identity), expanded, so that a tile count outside meets the tile size inside
        # (ceiling(224/h) * ceiling(h*o*w/pack) becomes p_h*o*w/pack + ceiling(224/h)*fraction)
        self.fractions: dict = {}
        self.fraction_forms = []  # (which of self.forms they are: each is tested alone for soundness)
        for second in seconds:
            fractional = _fractional(second, count_set, self.fractions)
            if fractional is not None:
                self.fraction_forms.append(len(self.forms))
                self.forms.append(len(exprs))
                exprs.append(_unkeep(fractional))
        # a resource's terms that depend on one packing factor are bounded at each power of two the
        # factor can take and the least is kept: a buffer's width and depth both follow the factor,
        # which interval arithmetic would take at opposite ends
        self.parts: list[list[tuple[int, str | None, int]]] = []  # per resource: (output, packing, value)
        packs = {symbol(p.name): p for p in self.packing}
        for e in exprs[1:len(RESOURCES) + 1]:
            groups: dict = {}
            for term in sympy.Add.make_args(e):
                used = term.free_symbols & set(packs)
                key = next(iter(used)) if len(used) == 1 else None
                groups[key] = groups.get(key, sympy.Integer(0)) + term
            parts = []
            for key, total in groups.items():
                if key is None or _linear_in(total, key):  # linear in the factor: split would gain little
                    parts.append((len(exprs), None, 0))
                    exprs.append(total)
                    continue
                for k in range(packs[key].upper.bit_length()):
                    parts.append((len(exprs), key.name, 2 ** k))
                    exprs.append(total.xreplace({key: sympy.Integer(2 ** k)}))
            self.parts.append(parts)
        inputs = (self.names + [p.name for p in self.packing] + [f"{g.t1}_p" for g in space.loops]
                  + [name for name, _, _ in self.capped] + [f.name for f in self.fractions.values()])
        self._rests = interval_program(rests, inputs[:len(inputs) - len(self.capped) - len(self.fractions)],
                                       nonnegative=inputs) if rests else None
        # factors, packing, extents: integers >= 1; the fractions: reals in [0, 1]
        fractions = {f.name for f in self.fractions.values()}
        self._model = IntervalProgram(exprs, inputs, integer_names=[n for n in inputs if n not in fractions],
                                      nonnegative=inputs)
        self.budgets = np.array([space.device.budget(r) for r in RESOURCES])
        # the search rounds a resource count to an integer before comparing it with the budget
        self.limits = np.floor(self.budgets) + 0.5
        self.monomials = [m for m in (_monomial(e, self.names, b) for e, b in zip(exprs[1:len(RESOURCES) + 1],
                                                                               self.limits)) if m is not None]

    def columns(self, points: np.ndarray) -> dict[str, np.ndarray]:
        """Parameter points (rows, without quotient columns) -> parameter columns."""
        return {n: points[:, k] for k, n in enumerate(self.params)}

    def contract(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Narrow boxes (rows) by bounds and constraints; returns (lo, hi, nonempty)."""
        lo, hi = np.maximum(lo, self.lower), np.minimum(hi, self.upper)
        for _ in range(6):  # to a fixed point (a cap found late narrows what was narrowed before)
            before_lo, before_hi = lo.copy(), hi.copy()
            for d, m, q in self.quotients:  # d * q = m
                lo[:, q] = np.maximum(lo[:, q], -(-lo[:, m] // np.maximum(hi[:, d], 1)))
                hi[:, q] = np.minimum(hi[:, q], hi[:, m] // np.maximum(lo[:, d], 1))
                lo[:, d] = np.maximum(lo[:, d], -(-lo[:, m] // np.maximum(hi[:, q], 1)))
                hi[:, d] = np.minimum(hi[:, d], hi[:, m] // np.maximum(lo[:, q], 1))
                lo[:, m] = np.maximum(lo[:, m], lo[:, d] * lo[:, q])
                hi[:, m] = np.minimum(hi[:, m], hi[:, d] * hi[:, q])
            for limit, powers in self.monomials:  # c * prod v^e <= budget: each v at most what the others leave
                for k, e in powers:
                    rest = np.ones(len(lo))
                    for j, f in powers:
                        if j != k:
                            rest *= np.where(f > 0, lo[:, j], hi[:, j]).astype(np.float64) ** f
                    if e > 0:
                        hi[:, k] = np.minimum(hi[:, k], np.floor((limit / rest) ** (1 / e) * (1 + 1e-12)))
                    else:
                        lo[:, k] = np.maximum(lo[:, k], np.ceil((rest / limit) ** (1 / -e) * (1 - 1e-12)))
            for k in self.pow2:
                lo[:, k] = _next_pow2(lo[:, k]).astype(np.int64)
                hi[:, k] = _prev_pow2(hi[:, k]).astype(np.int64)
            for d, m in self.divides:  # d divides m: d <= m, and m is a multiple of a fixed d
                hi[:, d] = np.minimum(hi[:, d], hi[:, m])
                lo[:, m] = np.maximum(lo[:, m], lo[:, d])
                fixed = (lo[:, d] == hi[:, d]) & (lo[:, d] > 0)
                step = np.where(fixed, lo[:, d], 1)
                lo[:, m] = np.where(fixed, -(-lo[:, m] // step) * step, lo[:, m])
                hi[:, m] = np.where(fixed, hi[:, m] // step * step, hi[:, m])
            if np.array_equal(lo, before_lo) and np.array_equal(hi, before_hi):
                break
        return lo, hi, np.all(lo <= hi, axis=1)

    def sample(self, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Parameter points (rows, without quotient columns) drawn in boxes: the top corner of each box
        and one point at random (log-uniform), made legal where it is cheap (powers of two, m = d * q,
        m a multiple of d); whatever is still illegal is refused by the evaluator."""
        u = rng.random(lo.shape)
        drawn = np.floor(np.exp(np.log(lo) + u * (np.log(hi + 1.0) - np.log(lo)))).astype(np.int64)
        points = np.concatenate([hi, np.clip(drawn, lo, hi)])
        for k in self.pow2:
            points[:, k] = _prev_pow2(points[:, k]).astype(np.int64)
        for d, m, q in self.quotients:
            points[:, m] = points[:, d] * points[:, q]
        for d, m in self.divides:
            points[:, m] = np.maximum(points[:, d], points[:, m] // np.maximum(points[:, d], 1) * points[:, d])
        p = len(self.params)
        ok = np.all((points[:, :p] >= self.lower[:p]) & (points[:, :p] <= self.upper[:p]), axis=1)
        return points[ok, :p]

    def inside(self, box: np.ndarray, points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which parameter points (rows; `box` is each one's box) have their quotients in the box."""
        ok = np.ones(len(points), dtype=bool)
        for d, m, q in self.quotients:
            quotient = points[:, m] // np.maximum(points[:, d], 1)
            ok &= (quotient >= lo[box, q]) & (quotient <= hi[box, q])
        return ok

    def _surely_dividing(self, pack: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per box, a power of two dividing the packing factor's extent at every legal point (or 1)."""
        monomial = self.extent_monomials[pack]
        if monomial is None:
            return np.ones(len(lo))
        inverse_coefficient, powers = monomial
        coefficient = 1.0 / inverse_coefficient
        if any(e < 0 for _, e in powers) or coefficient != int(coefficient):
            return np.ones(len(lo))
        out = np.full(len(lo), float(_lowbit(np.int64(coefficient))))
        for k, e in powers:
            low = np.ones(len(lo), dtype=np.int64)
            for d, m in self.divides:  # a fixed divisor's low bit divides every legal value
                if m == k:
                    low = np.maximum(low, np.where(lo[:, d] == hi[:, d], _lowbit(lo[:, d]), 1))
            low = np.where(lo[:, k] == hi[:, k], _lowbit(lo[:, k]), low)
            out *= low.astype(np.float64) ** e
        return out

    def bound(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(latency lower bound per box, resource lower bounds per box x RESOURCES)."""
        los = {n: lo[:, k].astype(np.float64) for k, n in enumerate(self.names)}
        his = {n: hi[:, k].astype(np.float64) for k, n in enumerate(self.names)}
        if self._packs is not None:
            ranges = self._packs(los, his)
            for k, p in enumerate(self.packing):
                elo, ehi = (np.rint(np.broadcast_to(x, lo.shape[:1])) for x in ranges[3 * k])
                point = (elo == ehi) & (elo >= 1)
                lowbit = np.bitwise_and(elo.astype(np.int64), -elo.astype(np.int64)).astype(np.float64)
                plo = np.where(point, lowbit, self._surely_dividing(k, lo, hi))
                phi = np.where(point, lowbit, _prev_pow2(ehi))
                plo, phi = np.minimum(plo, p.upper), np.minimum(phi, p.upper)
                for slot in self.step_slots[k]:  # the DRAM level divides where boxes start, too
                    slo, shi = (np.rint(np.broadcast_to(x, lo.shape[:1])) for x in ranges[slot])
                    # a step of 0 (one tile) constrains nothing: only a surely positive step caps the factor
                    at = (slo == shi) & (slo >= 1)
                    low = np.bitwise_and(slo.astype(np.int64), -slo.astype(np.int64)).astype(np.float64)
                    plo = np.minimum(plo, np.where(at, low, np.where(shi >= 1, 1.0, plo)))
                    phi = np.minimum(phi, np.where(at, low, np.where(slo >= 1, _prev_pow2(np.maximum(shi, 1.0)), phi)))
                widest_lo, widest_hi = plo, phi
                if p.rate is not None:  # no wider than the rate needs (engine/models/evaluate.infer_packing)
                    rlo, rhi = (np.broadcast_to(x, lo.shape[:1]) for x in ranges[3 * k + 1])
                    plo = np.minimum(plo, _next_pow2(rlo * (1 - 1e-9)))
                    phi = np.minimum(phi, _next_pow2(rhi * (1 + 1e-9)))
                if p.minimum is not None:  # but no narrower than the SIMD lanes it feeds (infer_packing)
                    mlo, mhi = (np.rint(np.broadcast_to(x, lo.shape[:1])) for x in ranges[3 * k + 2])
                    plo = np.maximum(plo, np.minimum(mlo, widest_lo))
                    phi = np.maximum(phi, np.minimum(mhi, widest_hi))
                los[p.name], his[p.name] = np.maximum(plo, 1.0), np.maximum(phi, 1.0)
        for (k, extent), g in zip(self.padded, self.space.loops):  # p = ceiling(N/m) * m over m's range
            mlo, mhi = los[self.names[k]], his[self.names[k]]
            los[f"{g.t1}_p"] = np.maximum(extent, np.ceil(extent / mhi) * mlo)
            his[f"{g.t1}_p"] = np.minimum(extent + mhi - 1, np.ceil(extent / mlo) * mhi)
        n = lo.shape[0]
        split = np.zeros((n, len(RESOURCES)))  # c_r * product + rest_r: a lower bound of resource r too
        rests = self._rests(los, his) if self._rests is not None else []
        for name, powers, caps in self.capped:
            los[name] = np.prod([lo[:, k].astype(np.float64) ** e for k, e in powers], axis=0)
            cap = np.prod([hi[:, k].astype(np.float64) ** e for k, e in powers], axis=0)
            for r, coefficient, rest, parts, others in caps:
                rest_lo = np.broadcast_to(rests[rest][0], (n,))
                split[:, r] = np.maximum(split[:, r], coefficient * los[name] + rest_lo)
                cap = np.minimum(cap, np.floor((self.limits[r] - rest_lo) / coefficient * (1 + ROUNDING)))
                if parts:
                    per = np.full(n, float(coefficient))
                    for c, powers_left in parts:  # each v^d at its least over the box (v >= 1)
                        per = per + c * np.prod([np.where(d > 0, lo[:, k], hi[:, k]).astype(np.float64) ** d
                                                 for k, d in powers_left] or [np.ones(n)], axis=0)
                    others_lo = np.broadcast_to(rests[others][0], (n,))
                    cap = np.minimum(cap, np.floor((self.limits[r] - others_lo) / per * (1 + ROUNDING)))
            # a cap below the least product: that resource's split bound is over the budget already
            his[name] = np.maximum(los[name], cap)
        for f in self.fractions.values():
            los[f.name], his[f.name] = np.zeros(n), np.ones(n)
        out = self._model(los, his)
        latency = np.maximum.reduce([np.broadcast_to(out[k][0], (n,)) for k in self.forms])
        latency = np.floor(latency * (1 - ROUNDING))
        resources = np.empty((n, len(RESOURCES)))
        for r, parts in enumerate(self.parts):
            whole = np.broadcast_to(out[1 + r][0], (n,))
            total, least = np.zeros(n), {}
            for index, pack, value in parts:
                bound = np.broadcast_to(out[index][0], (n,))
                if pack is None:
                    total = total + bound
                else:  # only the values the factor can take in this box
                    bound = np.where((los[pack] <= value) & (value <= his[pack]), bound, np.inf)
                    least[pack] = np.minimum(least.get(pack, np.inf), bound)
            total = total + sum(least.values(), np.zeros(n))
            resources[:, r] = np.maximum(np.maximum(whole, total), split[:, r]) * (1 - ROUNDING)
        return latency, resources


_KEEP = sympy.Function("__keep")  # an expression kept whole by sympy.expand (removed before bounding)


def _count_difference(t: sympy.Expr, counts: set) -> bool:
    """t is a sum of numbers and products of tile counts with a negative term (a count product - 1)."""
    if not t.is_Add or not any(a.could_extract_minus_sign() for a in t.args):
        return False
    return all(a.is_Number or all((f.base if f.is_Pow else f) in counts for f in sympy.Mul.make_args(a)
                                  if not f.is_Number) for a in t.args)


def _mixture(t: sympy.Expr, counts: set, bounds: dict) -> sympy.Expr | None:
    """For a sum a_1 X_1 + ... + a_k X_k whose weights a_i are products of tile counts and count
    differences, all >= 0 over the parameters' bounds, at least one a count difference and no two
    alike: min_i((a_1 + ... + a_k) X_i), a lower bound of the sum (a_i X_i >= a_i min X with a_i >= 0);
    else None."""
    if not t.is_Add or len(t.args) < 2:
        return None
    weights, rests = [], []
    for a in t.args:
        w = [f for f in sympy.Mul.make_args(a) if f in counts or (f.is_Pow and f.base in counts and f.exp > 0)
             or f.func == _KEEP]
        rest = sympy.Mul(*[f for f in sympy.Mul.make_args(a) if f not in w])
        if rest.is_Number:  # a constant term is no mixture
            return None
        weights.append(sympy.Mul(*w))
        rests.append(rest)
    if len(set(weights)) < len(weights) or not any(w.has(_KEEP) for w in weights):
        return None
    total = _unkeep(sympy.Add(*weights))
    names = sorted({s.name for w in weights for s in _unkeep(w).free_symbols})
    try:
        ranges = interval_program([_unkeep(w) for w in weights], names)(
            {n: np.array(float(bounds[symbol(n)][0])) for n in names},
            {n: np.array(float(bounds[symbol(n)][1])) for n in names})
    except Exception:  # noqa: BLE001 (a weight the interval program does not take: no mixture)
        return None
    if any(float(np.min(lo)) < 0 for lo, _ in ranges):
        return None
    return smin(*(total * r for r in rests))


def _push(e: sympy.Expr, counts: set) -> sympy.Expr:
    """Factors that are >= 0 (numbers > 0, parameters, tile counts, kept count differences) moved into
    the one max or min they multiply: c * max(a, b) = max(c a, c b) for c >= 0, so that a tile count
    outside meets the tile size inside."""
    def extreme(f):
        return getattr(f.func, "__name__", "") in ("smax", "smin")

    def nonnegative(f):
        base = f.base if f.is_Pow and f.exp.is_Integer and f.exp > 0 else f
        return (base.is_Number and base > 0) or base.is_Symbol or base in counts or base.func == _KEEP

    def pushable(t):
        if not t.is_Mul:
            return False
        inner = [f for f in t.args if extreme(f)]
        return len(inner) == 1 and all(nonnegative(f) for f in t.args if not extreme(f))

    def pushed(t):
        inner = next(f for f in t.args if extreme(f))
        outside = sympy.Mul(*(f for f in t.args if f is not inner))
        return inner.func(*(outside * a for a in inner.args))

    for _ in range(8):
        new = e.replace(pushable, pushed)
        if new == e:
            break
        e = new
    return e


def _fractional(e: sympy.Expr, counts: set, fractions: dict) -> sympy.Expr | None:
    """e with each ceiling(u) that is not a tile count written u + f, f a fraction symbol in [0, 1]
    (one per distinct u, recorded in `fractions`), expanded; None when e holds no such ceiling.
    ceiling(u) - u is in [0, 1) for every real u, so the form equals e wherever f takes that value."""
    def replaced(t):
        u = t.args[0]
        if u not in fractions:
            fractions[u] = symbol(f"__fraction_{len(fractions)}")
        return u + fractions[u]

    found = e.replace(lambda t: isinstance(t, sympy.ceiling) and t not in counts, replaced)
    if found == e:
        return None
    return _distribute(found, counts)


def _distribute(e: sympy.Expr, counts: set, rounds: int = 6) -> sympy.Expr:
    """e expanded, with every product of non-negative factors and one max or min moved inside it
    (c * max(a, b) = max(c a, c b) for c >= 0), expanded again, to a fixed point: a tile count that
    multiplies a sum holding a max reaches the max's arguments and meets their tile sizes there."""
    def extreme(f):
        return getattr(f.func, "__name__", "") in ("smax", "smin")

    def nonnegative(f):
        base = f.base if f.is_Pow and f.exp.is_Integer else f
        return (base.is_Number and base > 0) or base.is_Symbol or base in counts or base.func == _KEEP

    def pushable(t):
        if not t.is_Mul:
            return False
        inner = [f for f in t.args if extreme(f)]
        return len(inner) == 1 and all(nonnegative(f) for f in t.args if not extreme(f))

    def pushed(t):
        inner = next(f for f in t.args if extreme(f))
        outside = sympy.Mul(*(f for f in t.args if f is not inner))
        return inner.func(*(sympy.expand_mul(outside * a) for a in inner.args))

    e = sympy.expand_mul(e)
    for _ in range(rounds):
        new = e.replace(pushable, pushed)
        if new == e:
            break
        e = new
    return e


def _unkeep(e: sympy.Expr) -> sympy.Expr:
    return e.replace(lambda t: t.func == _KEEP, lambda t: t.args[0])


def _cap(term: sympy.Expr, product: sympy.Expr, capped: sympy.Symbol) -> sympy.Expr:
    """A product term dividing by `product` (or a power of it) rewritten over the capped symbol."""
    powers = term.as_powers_dict()
    factors = product.as_powers_dict()
    k = min((-powers.get(v, 0)) // e for v, e in factors.items())
    if k <= 0:
        return term
    for v, e in factors.items():
        powers[v] = powers.get(v, 0) + k * e
    powers[capped] = -k
    return sympy.Mul(*(b ** e for b, e in powers.items()))


def _pair(term: sympy.Expr, pairs: list[tuple[sympy.Expr, sympy.Expr, sympy.Symbol]]) -> sympy.Expr:
    """A product term with each m^a * ceiling(N/m)^b written p^min(a, b) * (what is left)."""
    coefficient, factors = term.as_coeff_mul()
    powers: dict = {}
    for f in factors:
        base, e = f.as_base_exp()
        powers[base] = powers.get(base, 0) + e
    changed = False
    for m, count, padded in pairs:
        a, b = sympy.sympify(powers.get(m, 0)), sympy.sympify(powers.get(count, 0))
        k = min(int(a), int(b)) if a.is_Integer and b.is_Integer else 0
        if k > 0:
            powers[m], powers[count], powers[padded] = a - k, b - k, powers.get(padded, 0) + k
            changed = True
    if not changed:
        return term
    return coefficient * sympy.Mul(*(base ** e for base, e in powers.items()))


def _linear_in(expr: sympy.Expr, x: sympy.Symbol) -> bool:
    """expr is a polynomial of degree at most 1 in x (x nowhere inside a function or a power)."""
    if not expr.is_polynomial(x):
        return False
    return all(sympy.degree(term, x) <= 1 for term in sympy.Add.make_args(sympy.expand(expr, deep=False))
               if term.is_polynomial(x))


def _submonomials(rest: sympy.Expr, powers: list[tuple[int, int]], names: list[str]):
    """The terms of `rest` that are c * prod v^f over box variables with c > 0, written c * product *
    prod v^(f - e) (e: the variable's exponent in the product, 0 if it has none), as [(c, [(column,
    f - e)])], and the sum of the other terms. Over a box such a term is at least c * product times
    each v^(f - e) at its lower end (f > e) or upper end (f < e): a per-PE term beside a per-lane one
    and a per-lane term beside a per-PE product both cap the product."""
    exponent = dict(powers)
    parts, others = [], []
    for term in sympy.Add.make_args(sympy.expand(rest, deep=False)):
        coefficient, factors = term.as_coeff_mul()
        found: dict[int, int] = {}
        ok = coefficient > 0
        for f in factors if ok else ():
            base, e = f.as_base_exp()
            k = names.index(base.name) if base.is_Symbol and base.name in names else None
            if k is None or not e.is_Integer:
                ok = False
                break
            found[k] = found.get(k, 0) + int(e)
        if ok:
            keys = set(found) | set(exponent)
            parts.append((float(coefficient), [(k, found.get(k, 0) - exponent.get(k, 0)) for k in sorted(keys)
                                               if found.get(k, 0) != exponent.get(k, 0)]))
        else:
            others.append(term)
    return parts, sympy.Add(*others)


def _split_product(expr: sympy.Expr, product: sympy.Expr) -> tuple[float, sympy.Expr]:
    """expr written c * product + rest with c a constant (0 when no term is a constant times it)."""
    coefficient, rest = 0.0, []
    for term in sympy.Add.make_args(sympy.expand(expr, deep=False)):
        ratio = term / product
        if ratio.is_Number:
            coefficient += float(ratio)
        else:
            rest.append(term)
    return coefficient, sympy.Add(*rest)


def _lowbit(x: np.ndarray) -> np.ndarray:
    return np.bitwise_and(x, -x)


def _monomial(expr: sympy.Expr, names: list[str], budget: float) -> tuple[float, list[tuple[int, int]]] | None:
    """A resource written c * prod v^e over box variables, as (budget / c, [(column, e)]), else None."""
    coefficient, factors = sympy.sympify(expr).as_coeff_mul()
    powers = []
    for f in factors:
        base, e = f.as_base_exp()
        if not (base.is_Symbol and base.name in names and e.is_Integer):
            return None
        powers.append((names.index(base.name), int(e)))
    if coefficient <= 0 or not powers:
        return None
    return budget / float(coefficient), powers


def _split(lo: np.ndarray, hi: np.ndarray, extents: np.ndarray | None = None,
           k: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each box in two along its parameter `k` (default: of largest hi/lo), at the geometric middle; for a tile size
    m of a loop of extent N (`extents[k]` = N, 0 for other columns), at the nearer end of the run of
    sizes around the middle that share its tile count ceiling(N/m), where that end is inside the box:
    a box whose tile counts are fixed has its padded extents exact (p = count * m)."""
    if k is None:
        k = np.argmax(_log_ratio(lo, hi), axis=1)
    rows = np.arange(lo.shape[0])
    a, b = lo[rows, k], hi[rows, k]
    mid = np.floor(np.sqrt(np.maximum(a, 1) * b.astype(np.float64))).astype(np.int64)
    mid = np.clip(mid, a, b - 1)
    if extents is not None:
        n = extents[k]
        tiled = n > 0
        c = -(-n // np.maximum(mid, 1))  # the tile count at the middle
        first = -(-n // np.maximum(c, 1))  # the least size with that count
        last = np.where(c > 1, -(-n // np.maximum(c - 1, 1)) - 1, n)  # the largest
        below, above = first - 1, last  # split after these: the run's ends
        use_below = tiled & (below >= a) & (below <= b - 1)
        use_above = tiled & (above >= a) & (above <= b - 1)
        closer_below = np.abs(np.log(np.maximum(below, 1) + 0.5) - np.log(mid + 0.5)) <= \
            np.abs(np.log(above + 0.5) - np.log(mid + 0.5))
        snapped = np.where(use_below & (closer_below | ~use_above), below, np.where(use_above, above, mid))
        mid = np.clip(snapped, a, b - 1)
    left_hi, right_lo = hi.copy(), lo.copy()
    left_hi[rows, k] = mid
    right_lo[rows, k] = mid + 1
    return np.concatenate([lo, right_lo]), np.concatenate([left_hi, hi])


def _log_ratio(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per box and variable, log(hi / lo) (a variable of one value: -1, never split)."""
    return np.where(hi > lo, np.log((hi + 0.5) / np.maximum(lo, 0.5)), -1.0)


def _small_variables_split(lower: np.ndarray, upper: np.ndarray, *, values: int = 4,
                           boxes: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """The root box cut at every value of its variables of at most `values` values (a filter size,
    a SIMD factor of 1 or 2), as long as that makes at most `boxes` boxes: interval arithmetic
    loses most where such a variable occurs twice (padded extent over SIMD lanes), and splitting
    by the widest ratio would come to them last."""
    lo, hi = lower[None, :].copy(), upper[None, :].copy()
    for k in np.argsort(upper - lower, kind="stable"):
        count = int(upper[k] - lower[k] + 1)
        if count < 2 or count > values or len(lo) * count > boxes:
            continue
        points = np.arange(lower[k], upper[k] + 1)
        lo, hi = np.repeat(lo, count, axis=0), np.repeat(hi, count, axis=0)
        lo[:, k] = hi[:, k] = np.tile(points, len(lo) // count)
    return lo, hi


def _points(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.prod((hi - lo + 1).astype(np.float64), axis=1)


def _enumerate(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every integer point of every box, as rows, and the box of each."""
    widths = hi - lo + 1
    counts = np.prod(widths, axis=1)
    box = np.repeat(np.arange(lo.shape[0]), counts)
    local = np.arange(box.size) - np.repeat(np.cumsum(counts) - counts, counts)
    points = np.empty((box.size, lo.shape[1]), dtype=np.int64)
    for k in range(lo.shape[1]):
        w = widths[box, k]
        points[:, k] = lo[box, k] + local % w
        local = local // w
    return points, box


class Certifier:
    """Branch and bound over one SearchSpace; `run()` returns the Certificate."""

    def __init__(self, space: SearchSpace, *, gap: float = 0.01, seconds: float = 60.0, leaf: int = 512,
                 batch: int = 2048, stop: Callable[[], bool] | None = None, minlp: float = 0.1,
                 search: float = 0.1):
        """`stop`: asked between batches; True ends the proof early (as if out of time). `minlp`: the
        share of the time kept for the MINLP route (engine/search/certify_minlp.py) when the branch
        and bound has not closed by then (0: never; the larger of the two bounds is kept). `search`: the
        share of the time given, once a third of it has passed without closing, to the search's hybrid
        method (a better incumbent prunes more; the branch and bound then goes on)."""
        if not 0 <= minlp < 1:
            raise EngineError(f"the MINLP share of the time must be in [0, 1) (got {minlp})")
        if not 0 <= search < 1 or minlp + search >= 1:
            raise EngineError(f"the search share of the time must be in [0, 1 - minlp) (got {search})")
        self.created = time.perf_counter()  # the time budget counts the bounds' compilation too
        self.minlp, self.search = minlp, search
        self.notes: list[str] = []
        if gap < 0:
            raise EngineError(f"the target gap must be >= 0 (got {gap})")
        if seconds <= 0:
            raise EngineError(f"the time budget must be positive (got {seconds} s)")
        self.space, self.gap, self.seconds, self.leaf, self.batch = space, gap, seconds, leaf, batch
        self.rng = np.random.default_rng(0)
        self.stop = stop or (lambda: False)
        self.bounds = BoxBounds(space)
        self.incumbent: tuple[float, Config] | None = None
        self.explored = self.pruned = 0
        self.pruned_bound = np.inf  # smallest latency bound among boxes pruned by bound
        # per resource, the least any closed box may need: proves "nothing fits" when over the budget
        self.need = np.full(len(RESOURCES), np.inf)
        # pseudo-costs of the split variables (see _choose)
        self.gain_sum = np.zeros(len(self.bounds.names))
        self.gain_count = np.zeros(len(self.bounds.names))
        self.child_bounds = np.zeros(0)

    def _threshold(self) -> float:
        return np.inf if self.incumbent is None else self.incumbent[0] / (1 + self.gap)

    def _offer(self, columns: dict[str, np.ndarray]) -> None:
        batch = self.space.evaluate(columns)
        legal = feasible_mask(self.space.design, columns)
        if legal.any():
            self.need = np.minimum(self.need, [batch.resources[r][legal].min() for r in RESOURCES])
        fitness = batch.fitness
        if fitness.size and np.isfinite(fitness.min()):
            k = int(np.argmin(fitness))
            if self.incumbent is None or fitness[k] < self.incumbent[0]:
                self.incumbent = (float(fitness[k]), {n: int(columns[n][k]) for n in self.space.names})

    def _search(self, seconds: float) -> None:
        """The hybrid search for `seconds` (seed 1: a start found by seed 0 is not searched again)."""
        from engine.search.methods import strategy_class  # the search imports much; only when used
        from engine.search.run import SearchRun
        before = self.incumbent[0] if self.incumbent else np.inf
        best = SearchRun(self.space, strategy_class("hybrid")(self.space, seed=1), seconds=seconds).run().best
        if best is not None:
            self._offer({n: np.array([int(best.params[n])]) for n in self.space.names})
        if self.incumbent is not None and self.incumbent[0] < before:
            self.notes.append(f"the hybrid search ({seconds:.1f} s) improved the incumbent to {self.incumbent[0]:,.0f}")
            self._polish()

    def _polish(self, rounds: int = 30) -> None:
        """Descend from the incumbent: each round evaluates every neighbour (one parameter moved by
        +-1, doubled or halved; or a divisor pair scaled together) and moves to the best while it
        improves. Illegal neighbours are refused by the evaluator."""
        names = self.space.names
        pairs = [(self.bounds.params[d], self.bounds.params[m]) for d, m in self.bounds.divides
                 if d < len(self.bounds.params) and m < len(self.bounds.params)]
        for _ in range(rounds):
            if self.incumbent is None:
                return
            latency, centre = self.incumbent
            moves = []
            for n in names:
                for v in {centre[n] - 1, centre[n] + 1, centre[n] * 2, centre[n] // 2}:
                    if v >= 1:
                        moves.append({**centre, n: v})
            for d, m in pairs:  # the PEs kept, the tile and the hiding factor moved together
                for f in (2, 3):
                    moves.append({**centre, d: centre[d] * f, m: centre[m] * f})
                    if centre[d] % f == 0 and centre[m] % f == 0:
                        moves.append({**centre, d: centre[d] // f, m: centre[m] // f})
            self._offer({n: np.array([c[n] for c in moves]) for n in names})
            if self.incumbent[0] >= latency:
                return

    def _dive(self, lo: np.ndarray, hi: np.ndarray, lb: np.ndarray, boxes: int = 16, points: int = 64) -> None:
        """Random points in the open boxes of lowest bound, where a better configuration would be."""
        if not len(lb):
            return
        take = np.argsort(lb)[:boxes]
        rows = np.repeat(take, points)
        before = self.incumbent[0] if self.incumbent else np.inf
        self._offer(self.bounds.columns(self.bounds.sample(lo[rows], hi[rows], self.rng)))
        if self.incumbent is not None and self.incumbent[0] < before:
            self._polish()

    def _leaves(self, lo: np.ndarray, hi: np.ndarray) -> None:
        p = len(self.bounds.params)
        counts = np.prod(hi[:, :p] - lo[:, :p] + 1, axis=1)
        start = 0
        while start < len(lo):  # chunks of about 64k points
            end = start + 1 + int(np.searchsorted(np.cumsum(counts[start:]), 1 << 16))
            points, box = _enumerate(lo[start:end, :p], hi[start:end, :p])
            inside = self.bounds.inside(box, points, lo[start:end], hi[start:end])
            if inside.any():
                self._offer(self.bounds.columns(points[inside]))
            start = end

    def run(self, start: Config | None = None) -> "Certificate":
        began = self.created
        given = None
        if start is not None:
            self._offer({n: np.array([int(start[n])]) for n in self.space.names})
            given = self.incumbent
        self._polish()
        lo, hi = _small_variables_split(self.bounds.lower, self.bounds.upper)
        open_lo, open_hi, open_lb = self._process(lo, hi)
        share = self.minlp if self.minlp and _minlp_takes(self.space) else 0.0
        if self.minlp and not share:
            self.notes.append("MINLP route: the latency holds a Piecewise or a min (declined)")
        until = self.seconds * (1 - share)
        searched = not self.search
        while len(open_lb) and time.perf_counter() - began < until and not self.stop():
            if not searched and time.perf_counter() - began > self.seconds / 3:
                searched = True
                self._search(self.search * self.seconds)
            keep = open_lb < self._threshold()
            self._prune_by_bound(open_lb[~keep])
            open_lo, open_hi, open_lb = open_lo[keep], open_hi[keep], open_lb[keep]
            if not len(open_lb):
                break
            take = min(self.batch, len(open_lb))
            chosen = np.argpartition(open_lb, take - 1)[:take] if take < len(open_lb) else np.arange(len(open_lb))
            rest = np.ones(len(open_lb), dtype=bool)
            rest[chosen] = False
            parent_lb = open_lb[chosen]
            variable = self._choose(open_lo[chosen], open_hi[chosen])
            child_lo, child_hi = _split(open_lo[chosen], open_hi[chosen], self.bounds.extents, variable)
            new_lo, new_hi, new_lb = self._process(child_lo, child_hi)
            self._learn(variable, open_lo[chosen], open_hi[chosen], parent_lb, self.child_bounds)
            open_lo = np.concatenate([open_lo[rest], new_lo])
            open_hi = np.concatenate([open_hi[rest], new_hi])
            open_lb = np.concatenate([open_lb[rest], new_lb])
            self._dive(open_lo, open_hi, open_lb)
        keep = open_lb < self._threshold()
        self._prune_by_bound(open_lb[~keep])
        open_lo, open_hi, open_lb = open_lo[keep], open_hi[keep], open_lb[keep]
        self.open_boxes = (open_lo, open_hi, open_lb)  # what is left to prove, for diagnostics
        self.minlp_bound = -np.inf  # SCIP's proven bound on the relaxation (certify_minlp.py)
        left = self.seconds - (time.perf_counter() - began)
        if share and len(open_lb) and left > 0.5 and not self.stop():
            from engine.search.certify_minlp import minlp_bound
            result = minlp_bound(self.space, seconds=left, cutoff=self._threshold(), gap=self.gap)
            if result.latency is not None and (self.incumbent is None or result.latency < self.incumbent[0]):
                self.incumbent = (result.latency, dict(result.config))
            if result.lower_bound is not None:
                self.minlp_bound = float(result.lower_bound)
            self.notes.append(result.declined or f"MINLP route: SCIP {result.status} in {result.seconds:.1f} s, "
                              f"bound {result.lower_bound}")
        return self._certificate(open_lb, given, time.perf_counter() - began)

    def _choose(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per box, the variable to split: the largest log(hi/lo) times the variable's pseudo-cost,
        the average relative rise of the bound per unit of log(hi/lo) its past splits gave (the
        children's lesser bound over the parent's; smoothed towards the mean of all variables, so
        that a variable not yet split is split by its width alone)."""
        ratio = _log_ratio(lo, hi)
        tried = self.gain_count > 0
        prior = self.gain_sum[tried].sum() / self.gain_count[tried].sum() if tried.any() else 1.0
        prior = max(prior, 1e-9)
        cost = (self.gain_sum + PSEUDO_WEIGHT * prior) / (self.gain_count + PSEUDO_WEIGHT)
        return np.argmax(np.where(ratio > 0, ratio * cost, -1.0), axis=1)

    def _learn(self, variable: np.ndarray, lo: np.ndarray, hi: np.ndarray, parent: np.ndarray,
               children: np.ndarray) -> None:
        """Pseudo-costs from one batch of splits: `children` holds the bounds of the left children
        then the right ones (inf where a child holds nothing that fits or was enumerated)."""
        n = len(parent)
        least = np.minimum(np.minimum(children[:n], children[n:]), self._threshold())
        with np.errstate(divide="ignore", invalid="ignore"):
            rise = np.where(parent > 0, (least - parent) / parent, 0.0)
        rows = np.arange(n)
        width = _log_ratio(lo, hi)[rows, variable]
        ok = np.isfinite(rise) & (width > 0)
        np.add.at(self.gain_sum, variable[ok], np.maximum(rise[ok], 0.0) / width[ok])
        np.add.at(self.gain_count, variable[ok], 1)

    def _prune_by_bound(self, lbs: np.ndarray) -> None:
        if len(lbs):
            self.pruned += len(lbs)
            self.pruned_bound = min(self.pruned_bound, float(lbs.min()))

    def _process(self, lo: np.ndarray, hi: np.ndarray):
        """Contract, enumerate the small boxes, bound the others; returns the boxes left open."""
        lo, hi, nonempty = self.bounds.contract(lo, hi)
        # each given box's latency bound (inf: empty, enumerated, or nothing in it fits): for pseudo-costs
        self.child_bounds = np.full(len(lo), np.inf)
        where = np.flatnonzero(nonempty)
        self.explored += len(lo)
        self.pruned += int(np.count_nonzero(~nonempty))
        lo, hi = lo[nonempty], hi[nonempty]
        small = _points(lo[:, :len(self.bounds.params)], hi[:, :len(self.bounds.params)]) <= self.leaf
        if small.any():
            self._leaves(lo[small], hi[small])
        lo, hi, where = lo[~small], hi[~small], where[~small]
        latency, resources = self.bounds.bound(lo, hi)
        # the search's own test, on the bounds rounded as the evaluator rounds counts: rint is monotone,
        # so a box whose rounded bounds do not fit holds no configuration that fits
        fits = self.space.model.fits({r: np.rint(resources[:, k]) for k, r in enumerate(RESOURCES)})
        if (~fits).any():
            self.need = np.minimum(self.need, resources[~fits].min(axis=0))
        self.pruned += int(np.count_nonzero(~fits))
        lo, hi, latency = lo[fits], hi[fits], latency[fits]
        self.child_bounds[where[fits]] = latency
        by_bound = latency >= self._threshold()
        self._prune_by_bound(latency[by_bound])
        lo, hi, latency = lo[~by_bound], hi[~by_bound], latency[~by_bound]
        if len(lo):
            self._offer(self.bounds.columns(self.bounds.sample(lo, hi, self.rng)))
        return lo, hi, latency

    def _certificate(self, open_lb: np.ndarray, given, seconds: float) -> Certificate:
        design = self.space.design.id
        common = dict(boxes_explored=self.explored, boxes_pruned=self.pruned, seconds=seconds, target_gap=self.gap)
        open_min = float(open_lb.min()) if len(open_lb) else np.inf
        if self.incumbent is None:
            if len(open_lb):  # out of time before finding any feasible configuration
                return Certificate(design, None, None, open_min, None, False, **common)
            budgets = self.bounds.budgets
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = np.where(budgets > 0, self.need / budgets, np.where(self.need > 0, np.inf, 0.0))
            tight = int(np.argmax(ratios))
            name = RESOURCES[tight]
            alone = (f"every configuration needs at least {self.need[tight]:.0f} {name}, over the budget of "
                     f"{self.bounds.budgets[tight]:.0f}" if ratios[tight] > 1 else
                     f"the resources together rule out every configuration; {name} comes closest alone "
                     f"(at least {self.need[tight]:.0f} of {self.bounds.budgets[tight]:.0f})")
            return Certificate(design, None, None, None, None, True, fits=False, tightest=name,
                               notes=(alone,), **common)
        latency, params = self.incumbent
        bound = min(latency, max(min(self.pruned_bound, open_min), getattr(self, "minlp_bound", -np.inf)))
        gap = latency / bound - 1 if bound > 0 else None  # a bound <= 0 proves nothing about the gap
        improved = given is None or latency < given[0]
        return Certificate(design, params, latency, bound, gap, gap is not None and gap <= self.gap + 1e-12,
                           improved=improved, notes=tuple(self.notes), **common)


def _minlp_takes(space: SearchSpace) -> bool:
    """The MINLP route can write this design's latency as a relaxation (no Piecewise, no min) and
    pyomo with SCIP is installed."""
    latency = sympy.sympify(space.model.symbolic.latency)
    if latency.has(sympy.Piecewise) or latency.has(sympy.Min) or any(
            getattr(a.func, "__name__", "") == "smin" for a in sympy.preorder_traversal(latency)):
        return False
    try:
        import pyomo.environ  # noqa: F401
        import pyscipopt  # noqa: F401
    except ImportError:
        return False
    return True


def certify(space: SearchSpace, start: Config | None = None, *, gap: float = 0.01, seconds: float = 60.0,
            leaf: int = 512, batch: int = 2048, stop: Callable[[], bool] | None = None,
            minlp: float = 0.1, search: float = 0.1) -> Certificate:
    """Prove `start` (or the best configuration found on the way) within `gap` of the optimum: the
    branch and bound for the time, but the last `minlp` share of it, then, if it has not closed, the
    MINLP relaxation solved by SCIP for the rest (the larger proven bound holds)."""
    return Certifier(space, gap=gap, seconds=seconds, leaf=leaf, batch=batch, stop=stop, minlp=minlp,
                     search=search).run(start)

