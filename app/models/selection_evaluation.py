"""SelectionRequest -> Evaluation: everything the views of a selected design and configuration need,
computed off the GUI thread (DesignSelection runs it in a TaskWorker): the design's performance
model (from the model cache, which the window's model pool fills after each compile; built here,
0.1-0.5 s of sympy, and stored only when missing), the report or the constraint the values break
(about 0.1 s), the design descriptor, the topology graph of the configuration and its quick clock
estimate (engine/floorplan/clock.py without a floorplan solved: FloorplanSession solves one).
Plain Python, no Qt; the request is an immutable snapshot taken on the GUI thread."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import EngineError

if TYPE_CHECKING:  # the engine's modules (sympy, islpy, numba) are imported by the functions that use
    # them, in a worker: the window imports this module before it paints
    import networkx as nx

    from engine.compiler.design import Design
    from engine.compiler.design_space import DesignSpace
    from engine.models.cache import ModelCache
    from engine.models.device import Device
    from engine.models.evaluate import PerformanceModel

MAX_TOPOLOGY_INSTANCES = 100_000  # module instances: a graph that large is ~100 MB and seconds to build


@dataclass(frozen=True)
class SelectionRequest:
    generation: int  # DesignSelection's counter: a result of an older generation is stale
    space: DesignSpace
    design: Design
    device: Device
    values: dict[str, int]
    model: PerformanceModel | None = None  # already built for this design, if so
    descriptor: dict | None = None  # likewise
    cache: ModelCache | None = None  # where to look for the model first (None: build it)
    key: str | None = None  # the model's cache key


@dataclass(frozen=True)
class Evaluation:
    request: SelectionRequest
    model: PerformanceModel
    descriptor: dict | None
    report: dict | None  # None: `error` says why
    error: str
    graph: nx.MultiDiGraph | None  # the topology of the configuration, when it is valid
    built: bool = False  # the model had to be built (it was neither given nor cached)
    levers: dict | None = None  # module -> [Lever], see module_levers
    topology_note: str = ""  # why there is no graph for a valid configuration (too many instances)
    clock: object | None = None  # engine.floorplan.ClockEstimate, quick (no floorplan solved)


@dataclass(frozen=True)
class Lever:
    """Changing one tuning parameter of a module's term to a neighbouring value (the packing factors,
    which the window does not edit, are inferred for the changed configuration as for any other)."""

    param: str
    old: int
    new: int
    cycles: float  # the module's term with the change
    legal: bool  # the changed configuration meets every constraint
    over: tuple[str, ...] = ()  # the resources the changed configuration needs beyond the budget ("DSP 192%")

    @property
    def fits(self) -> bool:
        return self.legal and not self.over


def _neighbours(value: int, lower: int, upper: int, power_of_two: bool) -> list[int]:
    out = {value * 2, value // 2} if power_of_two else {value * 2, value // 2, value + 1, value - 1}
    return sorted(v for v in out if lower <= v <= upper and v != value)


def _over_budget(used: dict[str, float], budget: dict[str, float]) -> tuple[str, ...]:
    """The resources above their budget, each with its share of it."""
    return tuple(f"{r} {used[r] / budget[r]:.0%}" if budget[r] else f"{r} (none available)"
                 for r in budget if used[r] > budget[r])


def module_levers(model: PerformanceModel, report: dict) -> dict[str, list[Lever]]:
    """For every module, the tuning parameters its term depends on (the free symbols of its symbolic
    expression) and what the term becomes when each steps to a neighbouring value (x2, /2, +-1;
    powers of two for SIMD), evaluated with the model in one batch, with the packing factors
    inferred for each changed configuration, and checked against the constraints and against the
    device's full budget (every resource, as `fits` checks them)."""
    import numpy as np

    from engine.models.device import RESOURCE_NAMES
    from engine.models.report import evaluate_configuration

    bounds = {p.name: (p.lower, p.upper, p.role == "simd") for p in model.design.params if p.tunable}
    params = {k: v for k, v in report["params"].items() if k in bounds}
    depends = {name: sorted(str(s) for s in expr.free_symbols if str(s) in bounds)
               for name, expr in model.symbolic.module_terms.items()}
    variants = [(name, new) for name in sorted({p for names in depends.values() for p in names})
                for new in _neighbours(params[name], *bounds[name])]
    if not variants:
        return {m: [] for m in depends}
    columns = {k: np.array([new if name == k else v for name, new in variants]) for k, v in params.items()}
    ev = model.evaluate(columns)
    budget = {r: model.device.budget(r) for r in RESOURCE_NAMES}
    over = [_over_budget({r: float(np.asarray(ev[r])[k]) for r in budget}, budget) for k in range(len(variants))]
    legal = []
    for name, new in variants:
        changed = {**params, name: new}
        try:
            evaluate_configuration(model, changed)
            legal.append(True)
        except Exception:  # noqa: BLE001 (a broken constraint: the lever is shown as not legal)
            legal.append(False)
    levers = {}
    for module, names in depends.items():
        row = np.asarray(ev[f"module:{module}"])
        levers[module] = [Lever(name, params[name], new, float(row[k]), legal[k], over[k])
                          for k, (name, new) in enumerate(variants) if name in names]
    return levers


def evaluate_selection(request: SelectionRequest) -> Evaluation:
    """Raises EngineError only if the design's model cannot be built; a configuration that breaks a
    constraint (or that the models cannot evaluate) is an Evaluation with `error`."""
    from engine.compiler.descriptor import build_descriptor
    from engine.compiler.architecture.pe_set import restrict_to_pe_set, stub_pes
    from engine.compiler.topology import instance_count, topology_graph
    from engine.models.cache import cached_model
    from engine.models.evaluate import PerformanceModel
    from engine.models.report import evaluate_configuration

    model, built = request.model, False
    if model is None and request.cache is not None and request.key is not None:
        model, built = cached_model(request.cache, request.key, request.space, request.design, request.device)
    elif model is None:
        model, built = PerformanceModel(request.space, request.design, request.device), True
    try:
        report, error = evaluate_configuration(model, request.values), ""
    except EngineError as exc:
        report, error = None, str(exc)
    except Exception as exc:  # noqa: BLE001 (e.g. a zero divisor): shown, never raised
        report, error = None, f"cannot evaluate this configuration: {exc}"
    descriptor, graph, levers = request.descriptor, None, None
    if report is not None:
        levers = module_levers(model, report)
        if descriptor is None:
            descriptor = build_descriptor(request.space, request.design, model.architecture)
        count = instance_count(descriptor, dict(report["params"]))
        if count <= MAX_TOPOLOGY_INSTANCES:
            from engine.floorplan import estimate_clock

            values = dict(report["params"])
            # the PEs the array holds (LU's triangle): the grid positions outside it are dummy sinks, not drawn
            graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
            graph.remove_nodes_from([("PE", pe) for pe in stub_pes(graph, descriptor, values)])
            clock = estimate_clock(descriptor, dict(report["params"]), model.device, quick=True)
            return Evaluation(request, model, descriptor, report, error, graph, built, levers, "", clock)
        else:  # a size typed by hand (10^9 PEs) must not build a graph that fills the memory
            note = (f"{count:,} module instances: too many to draw (at most {MAX_TOPOLOGY_INSTANCES:,}); "
                    "the report is complete")
            return Evaluation(request, model, descriptor, report, error, None, built, levers, note)
    return Evaluation(request, model, descriptor, report, error, graph, built, levers)
