"""SearchSpace -> a mixed-integer nonlinear relaxation of the design's model (pyomo) -> SCIP -> a proven
lower bound on the latency of every configuration that fits (SCIP's dual bound), and SCIP's points
evaluated by the search's own evaluator (possibly a better configuration).

The program reuses the mathematical-programming seed's pieces (engine/search/mathematical_programming.py:
the tile variables and the sympy -> pyomo translation), in its `relaxed` mode:

- per band loop, integers t1 in 1..N, the tile count n and the padded extent p = n * t1 with
  N <= p <= N + t1 - 1 (so n = ceiling(N/t1) exactly); with a second level, t2 (SIMD: a power of two
  through binaries) and the quotient q with t1 = q * t2 (t2 divides t1); in the models
  ceiling(N/t1) -> n and 1/t2 -> q/t1, products n * t1 -> p (identities under those constraints);
- each data-packing factor a variable: a power of two (binaries) between 1 and its `upper`, at
  most its innermost extent (the inferred factor divides it), nothing more of its inference rule;
- every other ceiling an integer c with x <= c <= x + 1 (ceiling(x) satisfies both);
- every max (smax, Max) an epigraph variable z >= each argument (integer where every argument is);
- a resource whose expression the translation takes (no Piecewise, no min) constrained by the
  budget as the search compares it (the count is rounded to an integer: <= floor(budget) + 0.5);
  any other resource (the block-RAM counts, with their port table in Piecewise) is left out.
  A latency with a Piecewise or a min: the route declines (`MinlpResult.declined` says why).

Why SCIP's dual bound is a lower bound of the model's latency at every configuration that fits
(the program is a relaxation). Let x be a legal configuration (bounds, divisibility, powers of two)
that fits the device, with inferred packing factors pi(x) and latency L(x, pi(x)). Build the point
X of the program: t1, t2 and the packing factors as in x and pi(x), n = ceiling(N/t1), p = n * t1,
q = t1 / t2 (an integer: t2 divides t1), each SIMD binary set at log2 t2, each packing binary at
log2 pi, each ceiling auxiliary at the ceiling's value and each epigraph variable at the max's value.
Every constraint holds at X: the tile constraints by construction; pi(x) is a power of two in
[1, upper] dividing its innermost extent, hence at most it; ceiling(x) lies in [x, x + 1]; max(a) >= a_i;
each resource kept is the model's own expression at (x, pi(x)), which fits, so it is within the budget.
The substitutions (ceiling(N/t1) = n, 1/t2 = q/t1, n * t1 = p) are identities at X, so the objective
at X is L(x, pi(x)) exactly. Hence min(program) <= min over x of L(x, pi(x)), and SCIP's dual bound
is at most min(program). SCIP works to feasibility tolerances (1e-6 absolute / relative, 1e-9 on
integrality), so the bound reported is lowered by RELATIVE_SAFETY and rounded down.

SCIP is not trusted blindly: on MM 32^3 i__i-j.k it claimed an optimal bound above a configuration of
the program (see minlp_bound), so the program is solved once per combination of SIMD lanes and a
bound above the latency of any configuration SCIP returns is dropped as a contradiction.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import sympy

from engine.compiler.architecture.symbols import symbol
from engine.models.device import RESOURCE_NAMES
from engine.search.mathematical_programming import _legal, _Program, warm_up
from engine.search.space import Config, SearchSpace

RELATIVE_SAFETY = 1e-5  # SCIP's tolerances, absorbed: the bound is lowered by this fraction


@dataclass(frozen=True)
class MinlpResult:
    lower_bound: float | None  # no configuration that fits has a lower latency (None: no bound)
    infeasible: bool  # SCIP proved the relaxation infeasible (below the cutoff, if one was given)
    config: Config | None  # SCIP's point made legal, when it fits
    latency: float | None  # its latency by the search's evaluator
    declined: str | None  # why the model cannot be written as a relaxation, or a solver failure
    status: str
    seconds: float


def _has(e: sympy.Expr, name: str) -> bool:
    return any(getattr(a.func, "__name__", "") == name or type(a).__name__ == name for a in sympy.preorder_traversal(e))


class _Relaxation(_Program):
    """The relaxation of one design's model (see the module docstring); `objective` is the latency."""

    relaxed = True

    def __init__(self, space: SearchSpace):
        self._variables(space)
        pyo, m = self.pyo, self.model
        for p in space.model.packing:  # a power of two in [1, upper], at most its innermost extent
            bits = pyo.Var(range(int(p.upper).bit_length()), domain=pyo.Binary)
            m.add_component(f"__packbits_{p.name}", bits)
            m.c.add(sum(bits.values()) == 1)
            self.terms[p.name] = sum(2 ** k * b for k, b in bits.items())
        self.packing = {}  # packing symbols are variables now, not taken at their widest
        for p in space.model.packing:
            try:
                m.c.add(self.terms[p.name] <= self.translate(sympy.sympify(p.innermost)))
            except ValueError:
                pass  # an extent the translation does not take: the factor keeps [1, upper]
        symbolic = space.model.symbolic
        self.left_out = []
        for r in RESOURCE_NAMES:
            expr = sympy.sympify(symbolic.resources[r])
            if not expr.free_symbols:
                continue
            if expr.has(sympy.Piecewise) or expr.has(sympy.Min) or _has(expr, "smin"):
                self.left_out.append(r)
                continue
            try:
                m.c.add(self.translate(expr) <= math.floor(space.device.budget(r)) + 0.5)
            except ValueError:
                self.left_out.append(r)
        latency = sympy.sympify(symbolic.latency)
        if latency.has(sympy.Piecewise):
            raise ValueError("the latency holds a Piecewise (passes)")
        if latency.has(sympy.Min) or _has(latency, "smin"):
            raise ValueError("the latency holds a min")
        self.pairing = True
        self.latency = self.translate(latency)
        m.obj = pyo.Objective(expr=self.latency)
        m.cutoff = pyo.Constraint(expr=self.latency <= 1e30)
        m.cutoff.deactivate()

    def set_cutoff(self, value: float | None) -> None:
        """Only points of objective at most `value`: SCIP prunes everything above it (an
        infeasible answer then proves that nothing that fits is below `value`)."""
        if value is None or not math.isfinite(value):
            self.model.cutoff.deactivate()
            return
        self.model.cutoff.set_value(self.latency <= value)
        self.model.cutoff.activate()


def _simd_cases(space: SearchSpace) -> list[dict[str, int]]:
    """Every combination of the SIMD lanes (powers of two up to each SIMD loop's cap): the relaxation
    is solved once per case with the lanes fixed (see minlp_bound)."""
    cases: list[dict[str, int]] = [{}]
    for g in space.loops:
        if g.t2 is None or not g.simd:
            continue
        upper = min(g.t2_upper, g.extent)
        lanes = [2 ** k for k in range(upper.bit_length()) if 2 ** k <= upper]
        cases = [{**case, g.loop: v} for case in cases for v in lanes]
    return cases


def _fix_lanes(program: _Relaxation, lanes: dict[str, int]) -> None:
    for loop, value in lanes.items():
        bits = program.model.component(f"__simd_{loop}")
        for k in bits:
            bits[k].fix(1 if 2 ** k == value else 0)


def minlp_bound(space: SearchSpace, *, seconds: float, cutoff: float | None = None, gap: float = 0.0) -> MinlpResult:
    """SCIP on the relaxation for about `seconds`: its proven lower bound of the latency over every
    configuration that fits (with `cutoff`: the bound is at least min(dual bound, cutoff), and an
    infeasible answer proves `cutoff` itself), and its best point, made legal and evaluated. Never raises.

    The relaxation is solved once per combination of SIMD lanes (the lanes fixed, so the case has no
    binary expansion of t2 and no product q * t2 for that loop) and the bound is the least over the
    cases. SCIP 10 on the whole program has claimed optimal bounds above configurations it contains
    (MM 32^3 i__i-j.k: 1,042 and, with other settings, 687-867 against the point at 640 that its own
    model evaluates to 640 once fixed); split by lanes, each case answered within its own optimum.
    A bound still above the latency of a configuration that fits (SCIP's own points, evaluated by the
    search's evaluator) is a solver contradiction: the bound is dropped and the result says why."""
    began = time.perf_counter()
    try:
        warm_up()
        program = _Relaxation(space)  # built once; each case fixes its lanes on it
    except ValueError as error:
        return MinlpResult(None, False, None, None, f"the MINLP route declines: {error}", "declined",
                           time.perf_counter() - began)
    except Exception as error:  # noqa: BLE001 (the certifier must not fail because of the solver)
        return MinlpResult(None, False, None, None, f"MINLP failed: {type(error).__name__}: {error}", "error",
                           time.perf_counter() - began)
    program.set_cutoff(cutoff)
    cases = _simd_cases(space)
    bounds: list[float] = []
    best: tuple[float, Config] | None = None
    statuses: list[str] = []
    for index, lanes in enumerate(cases):
        left = seconds - (time.perf_counter() - began)
        share = max(0.05, left / (len(cases) - index))
        part = _minlp_case(program, lanes, seconds=share, cutoff=cutoff, gap=gap)
        if part.declined:
            return MinlpResult(None, False, best[1] if best else None, best[0] if best else None, part.declined,
                               part.status, time.perf_counter() - began)
        statuses.append(part.status)
        if part.latency is not None and (best is None or part.latency < best[0]):
            best = (part.latency, part.config)
        bounds.append(-math.inf if part.lower_bound is None else part.lower_bound)
    spent = time.perf_counter() - began
    config, latency = (best[1], best[0]) if best else (None, None)
    bound = min(bounds) if bounds else None
    bound = None if bound is None or bound == -math.inf else bound
    infeasible = all(s == "infeasible" for s in statuses)
    if bound is not None and latency is not None and bound > latency:
        return MinlpResult(None, False, config, latency,
                           f"MINLP bound dropped: SCIP's bound {bound:,.0f} exceeds the latency {latency:,.0f} "
                           "of a configuration that fits (a solver contradiction)", "contradiction", spent)
    status = statuses[0] if len(set(statuses)) == 1 else "mixed"
    return MinlpResult(bound, infeasible, config, latency, None, status, spent)


def _minlp_case(program: _Relaxation, lanes: dict[str, int], *, seconds: float, cutoff: float | None,
                gap: float) -> MinlpResult:
    """One SIMD case of minlp_bound: the relaxation (its cutoff set) with `lanes` fixed."""
    began = time.perf_counter()
    space = program.space

    def result(bound=None, infeasible=False, config=None, latency=None, declined=None, status="error"):
        return MinlpResult(bound, infeasible, config, latency, declined, status, time.perf_counter() - began)

    _fix_lanes(program, lanes)
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.util import NoFeasibleSolutionError
    solver = SolverFactory("scip_direct")
    left = max(0.05, seconds - (time.perf_counter() - began))
    options = {"limits/time": left, "limits/gap": max(gap, 0.0), "display/verblevel": 0}
    try:
        answer = solver.solve(program.model, solver_options=options, load_solutions=False,
                              raise_exception_on_nonoptimal_result=False)
    except NoFeasibleSolutionError:
        answer = None
    except Exception as error:  # noqa: BLE001
        return result(declined=f"SCIP failed: {type(error).__name__}: {error}")
    condition = str(answer.termination_condition) if answer is not None else "infeasible"
    if "infeasible" in condition.lower() and "unbounded" not in condition.lower():
        # nothing below the cutoff in a relaxation: nothing that fits is below it
        bound = cutoff if cutoff is not None and math.isfinite(cutoff) else math.inf
        return result(bound=bound, infeasible=True, status="infeasible")
    dual = answer.objective_bound
    bound = None
    if dual is not None and math.isfinite(dual):
        bound = math.floor(dual * (1 - RELATIVE_SAFETY)) if dual > 0 else dual
        if cutoff is not None and math.isfinite(cutoff):
            bound = min(bound, cutoff)
    config = latency = None
    if answer.solution_loader is not None and answer.incumbent_objective is not None:
        try:
            answer.solution_loader.load_vars()
            config = _legal(space, program.values())
            batch = space.evaluate([config])
            if batch.feasible[0]:
                latency = float(batch.fitness[0])
            else:
                config = None
        except Exception:  # noqa: BLE001 (a point that cannot be read back is only a lost hint)
            config = None
    status = condition.split(".")[-1]
    return result(bound=bound, config=config, latency=latency, status=status)
