"""DesignSelection: the chosen design and configuration -> its performance report, descriptor and
topology graph, or the constraint it breaks. Evented: every view follows `changed`.

Models (sympy lambdified per design) are built once per design and device and cached.
"""
from __future__ import annotations

import networkx as nx
from PySide6.QtCore import QObject, Signal

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.topology import topology_graph
from engine.errors import EngineError
from engine.models.device import Device, load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration

DEFAULT_T1 = 8  # PEs per space loop of a design nobody has tuned yet


def default_values(design: Design) -> dict[str, int]:
    """A small legal configuration: t1 = min(8, bound), latency hiding 1, SIMD the largest legal."""
    values = {}
    for p in design.params:
        if p.tunable and p.role == "array_partition":
            values[p.name] = max(p.lower, min(DEFAULT_T1, p.upper))
    for p in design.params:
        if p.tunable and p.role != "array_partition":
            t1 = values.get(f"{p.loop}_t1", 1)
            choices = [d for d in range(p.lower, p.upper + 1) if t1 % d == 0
                       and (p.role != "simd" or d & (d - 1) == 0)]
            values[p.name] = (max(choices) if p.role == "simd" else min(choices)) if choices else p.lower
    return values


class DesignSelection(QObject):
    changed = Signal()  # design, values, report or error changed

    def __init__(self, parent=None):
        super().__init__(parent)
        self.space: DesignSpace | None = None
        self.device_name = "u250"
        self.device: Device = load_device(self.device_name)
        self.design: Design | None = None
        self.values: dict[str, int] = {}
        self.report: dict | None = None
        self.error = ""
        self._models: dict[str, PerformanceModel] = {}
        self._descriptors: dict[str, dict] = {}
        self._graph: tuple[tuple, nx.MultiDiGraph] | None = None

    def set_space(self, space: DesignSpace | None, device: str = "u250") -> None:
        self.space, self.device, self.device_name = space, load_device(device), device
        self._models, self._descriptors, self._graph = {}, {}, None
        self.design, self.values, self.report, self.error = None, {}, None, ""
        self.changed.emit()

    @property
    def model(self) -> PerformanceModel | None:
        if self.design is None:
            return None
        if self.design.id not in self._models:
            self._models[self.design.id] = PerformanceModel(self.space, self.design, self.device)
        return self._models[self.design.id]

    @property
    def descriptor(self) -> dict | None:
        if self.design is None:
            return None
        if self.design.id not in self._descriptors:
            self._descriptors[self.design.id] = build_descriptor(self.space, self.design, self.model.architecture)
        return self._descriptors[self.design.id]

    def select(self, design_id: str | None, values: dict[str, int] | None = None) -> None:
        if self.space is None or design_id is None:
            self.design, self.values, self.report, self.error = None, {}, None, ""
            self.changed.emit()
            return
        self.design = self.space.design(design_id)
        tunable = {p.name for p in self.design.params if p.tunable}
        given = {k: int(v) for k, v in (values or {}).items() if k in tunable}
        self.values = given if set(given) == tunable else default_values(self.design)
        self._evaluate()

    def set_value(self, name: str, text: str) -> None:
        """A value as typed: anything not a whole number, or breaking a constraint, becomes `error`."""
        try:
            value = int(str(text).strip())
        except ValueError:
            self.report, self.error = None, f"{name}: '{text}' is not a whole number"
            self.changed.emit()
            return
        self.values = {**self.values, name: value}
        self._evaluate()

    def _evaluate(self) -> None:
        try:
            self.report = evaluate_configuration(self.model, self.values)
            self.error = ""
        except EngineError as exc:
            self.report, self.error = None, str(exc)
        except Exception as exc:  # noqa: BLE001 (e.g. a zero divisor): shown, never raised
            self.report, self.error = None, f"cannot evaluate this configuration: {exc}"
        self.changed.emit()

    def full_values(self) -> dict[str, int] | None:
        """Tuning parameters plus the data-packing factors the report inferred (None if invalid)."""
        return dict(self.report["params"]) if self.report else None

    def topology(self) -> nx.MultiDiGraph | None:
        values = self.full_values()
        if values is None:
            return None
        key = (self.design.id, tuple(sorted(values.items())))
        if self._graph is None or self._graph[0] != key:
            self._graph = (key, topology_graph(self.descriptor, values))
        return self._graph[1]
