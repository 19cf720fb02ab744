"""SelectionRequest -> Evaluation: everything the views of a selected design and configuration need,
computed off the GUI thread (DesignSelection runs it in a TaskWorker): the design's performance
model (from the model cache, which the window's model pool fills after each compile; built here,
0.1-0.5 s of sympy, and stored only when missing), the report or the constraint the values break
(about 0.1 s), the design descriptor and the topology graph of the configuration.
Plain Python, no Qt; the request is an immutable snapshot taken on the GUI thread."""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.topology import topology_graph
from engine.errors import EngineError
from engine.models.cache import ModelCache, cached_model
from engine.models.device import Device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration


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


def evaluate_selection(request: SelectionRequest) -> Evaluation:
    """Raises EngineError only if the design's model cannot be built; a configuration that breaks a
    constraint (or that the models cannot evaluate) is an Evaluation with `error`."""
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
    descriptor, graph = request.descriptor, None
    if report is not None:
        if descriptor is None:
            descriptor = build_descriptor(request.space, request.design, model.architecture)
        graph = topology_graph(descriptor, dict(report["params"]))
    return Evaluation(request, model, descriptor, report, error, graph, built)
