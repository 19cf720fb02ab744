"""Device description files (resources/devices/*.json) -> Device: resources, usable ratio, clock."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError
from engine.resources import RESOURCES

DEVICES = RESOURCES / "devices"
RESOURCE_NAMES = ("DSP", "BRAM18K", "URAM", "LUT", "FF")


@dataclass(frozen=True)
class Device:
    name: str
    part: str
    resources: dict[str, int]
    usable_ratio: float
    clock_mhz: float
    axi_bits: int

    def budget(self, resource: str) -> float:
        return self.resources[resource] * self.usable_ratio


def load_device(name_or_path: str = "u250", *, usable_ratio: float | None = None,
                clock_mhz: float | None = None) -> Device:
    path = Path(name_or_path)
    if not path.suffix:
        path = DEVICES / f"{name_or_path}.json"
    if not path.is_file():
        known = ", ".join(p.stem for p in DEVICES.glob("*.json"))
        raise EngineError(f"unknown device '{name_or_path}' (known: {known}, or a path to a device JSON file)")
    data = json.loads(path.read_text())
    return Device(data["name"], data["part"], {k: int(v) for k, v in data["resources"].items()},
                  usable_ratio if usable_ratio is not None else float(data["usable_ratio"]),
                  clock_mhz if clock_mhz is not None else float(data["clock_mhz"]),
                  int(data["memory"]["axi_bus_bits_max"]))
