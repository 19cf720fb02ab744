"""SearchSpace + a configuration -> Certificate: a proven lower bound on the latency of every feasible
configuration of the design, hence how far the configuration can be from the optimum (the gap), or
a better configuration; or a proof that no configuration fits the device.

Branch and bound over boxes of the tunable parameters (an integer range per parameter):
- a box's lower bounds on latency and on every resource come from the design's own symbolic model
  (engine/search/box_bounds.py, with the latency forms of engine/search/latency_forms.py);
- a box is pruned when its resource lower bounds, rounded as the evaluator rounds counts, fail
  `PerformanceModel.fits` itself (nothing in it fits: the test is the search's own) or when
  its latency bound is within the target gap of the incumbent (nothing in it is better by more);
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

from engine.errors import EngineError
from engine.models.constraints import feasible_mask
from engine.search.box_bounds import RESOURCES, BoxBounds
from engine.search.space import Config, SearchSpace

PSEUDO_WEIGHT = 8.0  # splits of weight the mean of all variables has in a variable's pseudo-cost


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
