"""SearchSpace -> mixed-integer nonlinear program (pyomo) -> SCIP -> one legal configuration: the
Odyssey paper's mathematical-programming step (sec. 4.2), which seeds the evolutionary search.

The program is generated from the design's symbolic models, never written per kernel. Per band loop:
an integer array-partitioning factor t1 in 1..N, the tile count n = ceiling(N/t1) and the padded
extent p = n*t1 in N..N+t1-1 as integers; with a second level, an integer t2 (SIMD: a power of two
picked by binaries) and an integer quotient q with t1 == q*t2, so t2 divides t1. The sympy models
are rewritten (ceiling(N/t1) -> n, 1/t2 -> q/t1: a PE count t1/t2 becomes q) and translated term by
term into pyomo; in the traffic, products n*t1 become p, which keeps the degree low.

Constraints: DSP <= budget, exactly, and BRAM18K <= budget through an estimate: per buffer instance
(and per FIFO deeper than the default, engine/compiler/fifo_depths.py) an integer count of blocks
holding its bits, none for buffers of at most 1 Kbit (registers). That is a
lower bound of what engine/models/memory.py counts, which also rounds depths up to the port table
and widths to its ports (up to about twice as many blocks, more for wide, shallow buffers). So the
rounded answer is checked with `SearchSpace.evaluate`; when it is over the budget, each buffer's
estimate is scaled by its real count over the estimate at that answer and SCIP runs again.

Objectives, normalised: obj1 = -DSP / DSP budget; obj2 = off-chip bytes / compulsory bytes (every
array's footprint once); obj3 = obj2 + obj1 (traffic - computation, the one Odyssey uses).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy

from engine.compiler.architecture.modules import REGISTER_BITS
from engine.compiler.architecture.symbols import symbol
from engine.compiler.fifo_depths import (
    architecture_fifo_depth,
    architecture_row_block_depth,
)
from engine.models.memory import bram18k
from engine.search.space import Config, SearchSpace
from engine.search.strategy import SearchStrategy

OBJECTIVES = ("obj1", "obj2", "obj3")
BLOCK_BITS = 18 * 1024  # one BRAM18K
ROUNDS = 4  # SCIP runs at most (see solve_mp)


@dataclass(frozen=True)
class MPResult:
    config: dict[str, int] | None  # a legal, feasible configuration of the tunable parameters, or None
    status: str  # "optimal", "time limit", "infeasible", "error"
    message: str  # one line for users
    objective: float | None
    seconds: float


def compulsory_bytes(space: SearchSpace) -> float:
    """Every array's footprint (the bounding box of its subscripts over the loop ranges) in bytes, once."""
    extent = dict(zip(space.design.band_loops, space.design.problem_size))
    sizes: dict[str, float] = {}
    for g in space.model.architecture.groups:
        elements = math.prod(1 + sum(abs(c) * (extent[v] - 1) for v, c in index.terms) for index in g.access.index)
        sizes[g.array] = max(sizes.get(g.array, 0.0), elements * g.element_bits / 8)
    return sum(sizes.values())


def _substitution(space: SearchSpace, config: Config) -> dict:
    """Symbol -> value for every parameter of the models, inferred packing factors included."""
    values = {symbol(k): sympy.Integer(int(v)) for k, v in config.items()}
    packs = space.model.inferred_packing({k: np.asarray([v]) for k, v in config.items()})
    return values | {symbol(k): sympy.Integer(int(v[0])) for k, v in packs.items()}


def mp_objectives(space: SearchSpace, config: Config) -> dict[str, float]:
    """obj1 / obj2 / obj3 of a configuration, by the formulas the program optimises."""
    values = _substitution(space, config)
    dsp = float(space.model.symbolic.resources["DSP"].xreplace(values))
    traffic = float(space.model.symbolic.offchip_bytes.xreplace(values))
    obj1, obj2 = -dsp / space.dsp_budget, traffic / compulsory_bytes(space)
    return {"obj1": obj1, "obj2": obj2, "obj3": obj2 + obj1}


@lru_cache(maxsize=1)
def _scip_options() -> dict:
    """SCIP's feasibility emphasis with fast presolving, as the plain parameters they set (pyomo
    passes parameters only): good points early matter more here than proving optimality."""
    import pyscipopt  # only when used, like pyomo
    tuned = pyscipopt.Model()
    tuned.setEmphasis(pyscipopt.SCIP_PARAMEMPHASIS.FEASIBILITY)
    tuned.setPresolve(pyscipopt.SCIP_PARAMSETTING.FAST)
    default = pyscipopt.Model().getParams()
    return {k: v for k, v in tuned.getParams().items() if default.get(k) != v}


def warm_up() -> dict:
    """Import pyomo and SCIP (about a second the first time in a process; only when used) and
    return the SCIP options."""
    import pyomo.environ  # noqa: F401
    return _scip_options()


class _Program:
    """The pyomo model of one design; `values()` reads the solver's point back per parameter."""

    relaxed = False  # a relaxation of the model (engine/search/certify_minlp.py): ceilings closed

    def __init__(self, space: SearchSpace, objective: str):
        self._variables(space)
        pyo, m = self.pyo, self.model
        symbolic = space.model.symbolic
        dsp = self.translate(symbolic.resources["DSP"])
        m.c.add(dsp <= space.dsp_budget)
        for resource in ("LUT", "FF"):  # the rest of the model's `fits` (URAM: BRAM's block rule below)
            m.c.add(self.translate(symbolic.resources[resource]) <= space.device.budget(resource))
        self.buffers, self.bram = [], 0.0  # per buffer: (buffer, blocks per instance, correction factor)
        for module in space.model.architecture.modules:
            for b in (b for b in module.buffers if b.storage == "bram"):
                # at least the blocks holding its bits; none in registers (at most REGISTER_BITS)
                blocks = self._int(f"__bram_{module.name}_{b.name}", 0, None)
                m.c.add(BLOCK_BITS * blocks >= self.translate(b.elements) * b.element_bits - REGISTER_BITS)
                factor = pyo.Param(mutable=True, initialize=1.0)
                m.add_component(f"__factor_{module.name}_{b.name}", factor)
                self.buffers.append((b, blocks, factor))
                self.bram += factor * blocks * self.translate(module.count) * (2 if b.double_buffered else 1)
        arch = space.model.architecture
        modules = {mod.name: mod for mod in arch.modules}
        self.fifos = []  # FIFOs deeper than the default: (fifo, its depth, blocks per FIFO, correction factor)
        for f in arch.fifos:
            depth = architecture_row_block_depth(f, modules)
            if depth is None:
                continue
            # a FIFO is wide and shallow: ceil(width / 36) columns of blocks 512 words deep (the packing
            # factor taken at its widest, as everywhere in the program), none in registers
            name = f"{f.source}_{f.target}_{f.array}"
            width = self.translate(f.width_bits)
            rows = self._int(f"__bram_fifo_{name}", 0, None)
            m.c.add(512 * rows >= self.translate(depth) - REGISTER_BITS / width)
            factor = pyo.Param(mutable=True, initialize=1.0)
            m.add_component(f"__factor_fifo_{name}", factor)
            columns = math.ceil(width / 36) if isinstance(width, float) else 1  # a packing expression: bits only
            blocks = columns * rows
            self.fifos.append((f, architecture_fifo_depth(f, modules), blocks, factor))
            self.bram += factor * blocks * self.translate(f.count)
        m.bram_cap = pyo.Param(mutable=True, initialize=space.bram_budget)
        m.c.add(self.bram <= m.bram_cap)
        self.pairing = True  # in the traffic (only there) a product n*t1 becomes the padded extent
        traffic = self.translate(symbolic.offchip_bytes)
        obj1, obj2 = -dsp / space.dsp_budget, traffic / compulsory_bytes(space)
        m.obj = pyo.Objective(expr={"obj1": obj1, "obj2": obj2, "obj3": obj2 + obj1}[objective])

    def _variables(self, space: SearchSpace) -> None:
        """The tile variables of every band loop: t1, its tile count n and padded extent p = n * t1
        (N <= p <= N + t1 - 1, so n = ceiling(N/t1) exactly); with a second level, t2 and the quotient
        q = t1 / t2 (SIMD: t2 a power of two through binaries)."""
        import pyomo.environ as pyo
        self.pyo, self.space = pyo, space
        m = self.model = pyo.ConcreteModel()
        m.c = pyo.ConstraintList()
        self.terms: dict[str, object] = {}  # symbol name -> pyomo variable or expression
        self.memo: dict[tuple, object] = {}
        self.subs: dict[sympy.Expr, sympy.Expr] = {}
        self.packing = {symbol(p.name): p for p in space.model.packing}
        self.padded: list[tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol]] = []  # (t1, n, p)
        self.pairing = False
        for g in space.loops:
            N, t1s, ns, ps = g.extent, symbol(g.t1), symbol(f"__n_{g.loop}"), symbol(f"__p_{g.loop}")
            t1, n, padded = self._int(g.t1, 1, N), self._int(ns.name, 1, N), self._int(ps.name, N, 2 * N - 1)
            m.c.add(padded == n * t1)
            m.c.add(padded <= N + t1 - 1)
            self.subs[sympy.ceiling(sympy.Integer(N) / t1s)] = ns
            self.padded.append((t1s, ns, ps))
            if g.t2 is None:
                continue
            upper, q = min(g.t2_upper, N), self._int(f"__q_{g.loop}", 1, N)
            if g.simd:
                bits = pyo.Var(range(upper.bit_length()), domain=pyo.Binary)  # t2 = 2**k for the one set
                m.add_component(f"__simd_{g.loop}", bits)
                m.c.add(sum(bits.values()) == 1)
                t2 = self.terms[g.t2] = sum(2 ** k * b for k, b in bits.items())
            else:
                t2 = self._int(g.t2, 1, upper)
            m.c.add(t1 == q * t2)
            self.subs[symbol(g.t2) ** -1] = symbol(f"__q_{g.loop}") / t1s

    def _range(self, x) -> tuple[float, float]:
        """Bounds of a translated term from its variables' bounds (numbers: themselves)."""
        if isinstance(x, (int, float)):
            return float(x), float(x)
        from pyomo.contrib.fbbt.fbbt import compute_bounds_on_expr
        lower, upper = compute_bounds_on_expr(x)
        return (-math.inf if lower is None else lower), (math.inf if upper is None else upper)

    def _real(self, name: str, lower: float = -math.inf, upper: float = math.inf):
        v = self.pyo.Var(domain=self.pyo.Reals, bounds=(None if math.isinf(lower) else lower,
                                                        None if math.isinf(upper) else upper))
        self.model.add_component(name, v)
        return v

    def _int(self, name: str, lower: int | None, upper: int | None):
        v = self.pyo.Var(domain=self.pyo.Integers, bounds=(lower, upper), initialize=lower)
        self.model.add_component(name, v)
        self.terms[name] = v
        return v

    def translate(self, expr: sympy.Expr):
        return self._tr(expr.xreplace(self.subs))

    def _tr(self, e: sympy.Expr):
        key = (e, self.pairing)
        if key in self.memo:
            return self.memo[key]
        if e.is_Number:
            out = float(e)
        elif e.is_Symbol:
            if e in self.packing:  # DSP and traffic should not depend on packing; if they do, take the widest
                out = float(self.packing[e].upper)
            elif e.name in self.terms:
                out = self.terms[e.name]
            else:
                raise ValueError(f"unknown symbol {e} in the model")
        elif e.is_Add:
            out = sum(self._tr(a) for a in e.args)
        elif e.is_Mul or e.is_Pow:
            powers = dict(e.as_powers_dict())
            for t1, n, padded in self.padded if self.pairing else ():
                k = min(powers.get(t1, 0), powers.get(n, 0))
                if k > 0:
                    powers[t1], powers[n], powers[padded] = powers[t1] - k, powers[n] - k, k
            out = 1.0
            for base, exp in powers.items():
                if exp == 0:
                    continue
                if not exp.is_Integer:
                    raise ValueError(f"cannot translate the power {base}**{exp} into the program")
                b = self._tr(base)
                out = out * (b ** int(exp) if exp > 0 else 1.0 / b ** int(-exp))
        elif (isinstance(e, sympy.Min) or getattr(e.func, "__name__", "") == "smin") and not self.relaxed:
            # only in resource use (the depth of a skew FIFO, engine/compiler/fifo_depths.py: the lag,
            # capped at a tile): the cap, an upper bound of the minimum, so the answers still fit
            out = self._tr(e.args[-1])
        elif isinstance(e, sympy.ceiling):
            x = self._tr(e.args[0])  # a ceiling not of the tile-count form: its own integer
            lower, upper = self._range(x) if self.relaxed else (None, None)  # SCIP bounds products of bounded terms
            c = self._int(f"__ceil_{len(self.memo)}", _finite(math.floor, lower), _finite(math.ceil, upper))
            self.model.c.add(c >= x)
            self.model.c.add(c <= x + (1 if self.relaxed else 1 - 1e-6))  # relaxed: ceiling(x) always in
            out = c
        elif self.relaxed and (isinstance(e, sympy.Max) or getattr(e.func, "__name__", "") == "smax"):
            args = [self._tr(a) for a in e.args]
            ranges = [self._range(a) for a in args]
            lower, upper = max(r[0] for r in ranges), max(r[1] for r in ranges)
            z = self._int(f"__max_{len(self.memo)}", _finite(math.floor, lower), _finite(math.ceil, upper)) \
                if all(_integral(a) for a in e.args) else self._real(f"__max_{len(self.memo)}", lower, upper)
            for a in args:  # an epigraph: z = max(args) is one of z's values
                self.model.c.add(z >= a)
            out = z
        else:
            raise ValueError(f"cannot translate {type(e).__name__} ({e}) into the program")
        self.memo[key] = out
        return out

    def calibrate(self, config: Config, bram: float) -> None:
        """After an answer over the BRAM budget: raise each buffer's factor to its real blocks over
        the estimate's (the port table rounds depths up to powers of two and widths to its ports);
        when no factor moves, shrink the cap by the excess instead."""
        values, moved = _substitution(self.space, config), False
        shapes = [(b.width_bits, b.depth, blocks, factor) for b, blocks, factor in self.buffers]
        shapes += [(f.width_bits, depth, blocks, factor) for f, depth, blocks, factor in self.fifos]
        for width, depth, blocks, factor in shapes:
            real, estimate = float(bram18k(width, depth).xreplace(values)), self.pyo.value(blocks)
            if estimate >= 1 and real > factor.value * estimate:
                factor.set_value(real / estimate)
                moved = True
        if not moved:
            cap = self.model.bram_cap
            cap.set_value(max(0.0, min(cap.value, self.pyo.value(self.bram)) * self.space.bram_budget / bram - 1))

    def values(self) -> dict[str, float]:
        return {name: self.pyo.value(self.terms[name]) for name in self.space.names}


def _finite(rounding, x: float | None) -> int | None:
    return None if x is None or not math.isfinite(x) else int(rounding(x))


def _integral(e: sympy.Expr) -> bool:
    """e is integer-valued at every configuration: sums and products of integers, parameters and ceilings."""
    if e.is_Integer or e.is_Symbol or isinstance(e, sympy.ceiling):
        return True
    if e.is_Add or e.is_Mul:
        return all(_integral(a) for a in e.args)
    if e.is_Pow:
        return e.exp.is_Integer and e.exp >= 0 and _integral(e.base)
    if getattr(e.func, "__name__", "") == "smax" or isinstance(e, sympy.Max):
        return all(_integral(a) for a in e.args)
    return False


def _legal(space: SearchSpace, values: dict[str, float]) -> Config:
    """Round the solver's point onto the grid: t1 in bounds, t2 a divisor (SIMD: a power of two) of t1."""
    config = {}
    for g in space.loops:
        t1 = min(max(1, round(values[g.t1])), g.extent)
        config[g.t1] = t1
        if g.t2 is not None:
            t2 = min(max(1, round(values[g.t2])), g.t2_upper, t1)
            while t1 % t2 or (g.simd and t2 & (t2 - 1)):
                t2 -= 1
            config[g.t2] = t2
    return {name: config[name] for name in space.names}


def solve_mp(space: SearchSpace, *, objective: str = "obj3", time_limit: float = 1.0,
             node_limit: int | None = None) -> MPResult:
    """Build and solve the program within about `time_limit` seconds (the first call also imports
    pyomo and SCIP, about half a second, not counted). SCIP runs up to ROUNDS times: after an answer
    over the real BRAM budget, with the estimate corrected; after a feasible answer at its time limit,
    from that answer with the time left. `node_limit` also bounds each SCIP run by its branch-and-bound
    nodes: SCIP is deterministic given its limits, so with a node limit reached before the time limit the
    answer does not depend on the machine's speed or load (sample-budget runs rely on it). With a node
    limit the time limit counts CPU seconds (SCIP's timing/clocktype 1 and the rounds' own clock): in wall
    seconds a loaded machine reached it first (MM 32^3 at a sample budget: solves of up to 0.9 s CPU
    against a first round's limit of under 3 s; where the limit binds, 20 of its 27 designs get another
    answer) and the seed, hence the run, changed with the load (the window's demo, tests/app/test_demo.py,
    failed once in four). Never raises: failures come back as config None, a message."""
    clock = time.process_time if node_limit is not None else time.perf_counter
    start = clock()

    def result(config, status, message, value=None):
        return MPResult(config, status, message, value, clock() - start)

    if objective not in OBJECTIVES:
        return result(None, "error", f"unknown MP objective '{objective}' (known: {', '.join(OBJECTIVES)})")
    best, tightened, batch = None, 0, None  # best = (objective value, config, proven optimal)
    try:
        options = warm_up()
        from pyomo.contrib.solver.common.util import NoFeasibleSolutionError
        start = clock()
        program = _Program(space, objective)
        solver = program.pyo.SolverFactory("scip_direct")
        for run in range(ROUNDS):
            left = time_limit - (clock() - start)
            if run and left < 0.05 * time_limit:
                break
            limit = max(1e-3, left * (0.6 if run == 0 else 1.0 if run == ROUNDS - 1 else 0.5))
            began = clock()
            try:
                limits = {"limits/time": limit}
                if node_limit is not None:
                    limits["limits/totalnodes"] = node_limit
                    limits["timing/clocktype"] = 1  # CPU seconds: see the docstring
                answer = solver.solve(program.model, options={**options, **limits})
            except NoFeasibleSolutionError:
                if run:
                    break
                if clock() - began >= 0.9 * limit:
                    return result(None, "time limit", f"SCIP found no feasible point within {time_limit:.3g} s")
                if node_limit is not None:
                    return result(None, "node limit", f"SCIP found no feasible point within {node_limit} nodes "
                                                      f"({clock() - start:.2f} s)")
                return result(None, "infeasible", "SCIP: no configuration fits the device "
                                                  f"({clock() - start:.2f} s)")
            solver.config.warmstart_discrete_vars = True  # later runs start from this answer
            optimal = str(answer.solver.termination_condition) == "optimal"
            config = _legal(space, program.values())
            batch = space.evaluate([config])
            if batch.feasible[0]:
                value = mp_objectives(space, config)[objective]
                if best is None or value < best[0]:
                    best = (value, config, optimal)
                if optimal:
                    break
            elif batch.bram[0] > space.bram_budget:
                program.calibrate(config, batch.bram[0])
                tightened += 1
            else:
                break
    except Exception as error:  # noqa: BLE001 (the caller must never crash because of the solver)
        return result(None, "error", f"MP failed: {type(error).__name__}: {error}")
    seconds = clock() - start
    if best is not None:
        value, config, optimal = best
        note = f", BRAM estimate corrected {tightened}x" if tightened else ""
        return result(config, "optimal" if optimal else "time limit", f"SCIP {'optimal' if optimal else 'best point'}"
                      f" in {seconds:.2f} s ({objective} = {value:.3g}){note}", value)
    used = f"DSP {batch.dsp[0]:.0f}/{space.dsp_budget:.0f}, BRAM18K {batch.bram[0]:.0f}/{space.bram_budget:.0f}"
    return result(None, "time limit", f"SCIP's answers do not fit the device after rounding ({used}), {seconds:.2f} s")


class MPSearch(SearchStrategy):
    """Mathematical programming alone (a baseline): one solve, one proposal."""

    name = "mp"

    def __init__(self, space: SearchSpace, *, seed: int = 0, objective: str = "obj3", max_seconds: float = 30.0):
        super().__init__(space, seed=seed)
        self.objective, self.max_seconds = objective, max_seconds
        self.result: MPResult | None = None
        self.proposed = False

    @classmethod
    def warm_up(cls) -> None:
        warm_up()

    def start(self, *, time_limit: float, designs: int = 1) -> None:
        # most of the run, capped, so that the run still has time to evaluate the answer
        self.result = solve_mp(self.space, objective=self.objective,
                               time_limit=min(self.max_seconds, 0.8 * time_limit))
        self.notes.append(f"MP: {self.result.message}")

    def propose(self, n: int) -> list[Config] | None:
        if self.proposed or self.result is None or self.result.config is None:
            return None
        self.proposed = True
        return [dict(self.result.config)]

    def tell(self, configs: list[Config], fitness: np.ndarray) -> None:
        pass
