"""CompareSession: two to four pinned (design, configuration) pairs, each a frozen copy of what the
selection showed when it was pinned (report, descriptor, topology graph, levers), so the compare
view needs no engine work; one pin per design id (pinning a design again replaces its pin).
Evented: `changed`. A Pin also offers the attributes the topology view reads from a
DesignSelection, so a thumbnail is a QtTopology of the pin."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.models.design_selection import DesignSelection

MAX_PINS = 4

# (row label, report key or function, lower is better)
METRIC_ROWS = (
    ("throughput (GOP/s)", lambda r: r["throughput_gops"], False),
    ("latency (cycles)", lambda r: r["latency_cycles"], True),
    ("latency (µs)", lambda r: r["latency_cycles"] / r["device"]["clock_mhz"], True),
    ("prologue (cycles)", lambda r: r["prologue"], True),
    ("main (cycles)", lambda r: r["main"], True),
    ("epilogue (cycles)", lambda r: r["epilogue"], True),
    ("DSP", lambda r: r["dsp"], True),
    ("BRAM18K", lambda r: r["bram18k"], True),
    ("URAM", lambda r: r["uram"], True),
    ("LUT", lambda r: r["lut"], True),
    ("FF", lambda r: r["ff"], True),
    ("off-chip (MiB)", lambda r: r["offchip_bytes"] / 2**20, True),
)
RESOURCE_ROWS = {"DSP": "DSP", "BRAM18K": "BRAM18K", "URAM": "URAM", "LUT": "LUT", "FF": "FF"}  # row -> budget key


def budget_share(report: dict, row: str) -> float | None:
    """A resource row's value as a share of the device's budget (None: not a resource row)."""
    resource = RESOURCE_ROWS.get(row)
    if resource is None:
        return None
    used, budget = report[resource.lower()], report["device"]["budget"][resource]
    return used / budget if budget else (float("inf") if used else 0.0)


class Pin(QObject):
    """A frozen selection: the same read-only attributes as DesignSelection."""

    changed = Signal()  # never emitted: a pin does not change

    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.design = selection.design
        self.values = dict(selection.values)
        self.report = selection.report
        self.error, self.busy = "", False
        self.levers = dict(selection.levers)
        self._descriptor, self._graph = selection.descriptor, selection.topology()

    @property
    def descriptor(self):
        return self._descriptor

    def topology(self):
        return self._graph

    def full_values(self) -> dict:
        return dict(self.report["params"])

    @property
    def label(self) -> str:
        tunable = {p.name for p in self.design.params if p.tunable}
        return f"{self.design.id}  " + " ".join(f"{k}={v}" for k, v in self.report["params"].items() if k in tunable)


class CompareSession(QObject):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pins: list[Pin] = []

    def pin(self, selection: DesignSelection) -> str:
        """Pin the selection's configuration; '' or what became of it: refused (invalid, the same
        configuration pinned, no room) or merged (a design pinned already takes the new
        configuration in its column: one column per design id)."""
        if selection.report is None or selection.design is None:
            return "select a design with a valid configuration to pin it"
        same = next((k for k, p in enumerate(self.pins) if p.design.id == selection.design.id), None)
        if same is not None and self.pins[same].report["params"] == selection.report["params"]:
            return "this configuration is pinned already"
        if same is not None:
            self.pins[same].deleteLater()
            self.pins[same] = Pin(selection, self)
            self.changed.emit()
            return f"{selection.design.id} was pinned already: its column now shows this configuration"
        if len(self.pins) >= MAX_PINS:
            return f"at most {MAX_PINS} configurations can be compared: unpin one first"
        self.pins.append(Pin(selection, self))
        self.changed.emit()
        return ""

    def unpin(self, index: int) -> None:
        if 0 <= index < len(self.pins):
            self.pins.pop(index).deleteLater()
            self.changed.emit()

    def clear(self) -> None:
        for pin in self.pins:
            pin.deleteLater()
        self.pins = []
        self.changed.emit()

    def table(self) -> list[tuple[str, list[float], int]]:
        """(row label, value per pin, index of the best pin) for every metric row."""
        rows = []
        for label, value, lower in METRIC_ROWS:
            values = [float(value(p.report)) for p in self.pins]
            best = (min if lower else max)(range(len(values)), key=values.__getitem__) if values else -1
            rows.append((label, values, best))
        return rows
