"""SearchSpace -> BoxBounds: for a batch of boxes of the tunable parameters (an integer range per
parameter), a valid lower bound of the latency and of each resource the search's feasibility checks.

- a box's lower bound on latency and on each resource (every one of RESOURCE_NAMES,
  `PerformanceModel.fits`) comes from interval evaluation of the design's symbolic model
  (engine/models/interval.py); data-packing factors, inferred from the tuning parameters, get the
  range their inference rule allows over the box;
- the latency is bounded in several forms (engine/search/latency_forms.py) and the largest bound
  kept; a product of box variables that a resource is a monomial of (the PE count times the SIMD
  lanes in DSP) is capped, per box, by every resource: c_r * product + rest_r <= budget_r with rest_r
  bounded from below over the box; where the latency divides by the product, the capped range is
  used, so the latency bound holds at the configurations of the box that fit;
- before bounding, a box is narrowed by the design's constraints (a power-of-two factor to powers of
  two, a divisor to at most what it divides, a multiple of a fixed divisor to its multiples, each
  factor of a monomial resource to what the budget leaves); a box left empty holds nothing that fits.
"""

from __future__ import annotations

import numpy as np
import sympy

from engine.compiler.architecture.symbols import symbol
from engine.models.device import RESOURCE_NAMES
from engine.models.interval import IntervalProgram, interval_program
from engine.search.space import SearchSpace
from engine.search.latency_forms import (_KEEP, _cap, _count_difference, _fractional, _linear_in, _mixture,
                                           _monomial, _pair, _push, _split_product, _submonomials, _unkeep)

RESOURCES = RESOURCE_NAMES  # every resource PerformanceModel.fits checks
ROUNDING = 1e-12  # relative float error allowed for in a latency bound (see engine/models/interval.py)


def _next_pow2(x: np.ndarray) -> np.ndarray:
    return np.exp2(np.ceil(np.log2(np.maximum(x, 1.0))))


def _prev_pow2(x: np.ndarray) -> np.ndarray:
    return np.exp2(np.floor(np.log2(np.maximum(x, 1.0))))


def _lowbit(x: np.ndarray) -> np.ndarray:
    return np.bitwise_and(x, -x)


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
