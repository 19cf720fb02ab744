"""Device description files (resources/devices/*.json) -> Device: resources, usable ratio, clock, and
the memory system the DRAM ports see (DDR banks and their bandwidth, the pinned AXI settings).

A device file is checked against SCHEMA before use: a file that is not UTF-8 JSON, lacks a field or
has one of the wrong type or range is an EngineError naming the file, the field and what is accepted."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError
from engine.models.dram import DEFAULT_LAYOUT, LAYOUTS, AxiSettings, DramPorts
from engine.resources import RESOURCES

DEVICES = RESOURCES / "devices"
RESOURCE_NAMES = ("DSP", "BRAM18K", "URAM", "LUT", "FF")


def _text(v) -> bool:
    return isinstance(v, str) and v.strip() != ""


def _count(v) -> bool:
    return type(v) is int and v >= 0


def _positive(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v) and v > 0


# field path -> (check, what is accepted); other fields (memory kind, platforms, ...) are free
SCHEMA = {
    ("name",): (_text, "a non-empty string"),
    ("part",): (_text, "a non-empty string (the FPGA part number)"),
    **{("resources", r): (_count, "a non-negative integer") for r in RESOURCE_NAMES},
    ("usable_ratio",): (lambda v: _positive(v) and v <= 1, "a number in (0, 1]"),
    ("clock_mhz",): (_positive, "a positive number"),
    ("memory", "axi_bus_bits_max"): (lambda v: type(v) is int and v > 0 and v & (v - 1) == 0,
                                     "a positive power-of-two integer"),
    ("memory", "banks"): (lambda v: type(v) is int and v > 0, "a positive integer (DDR or HBM banks)"),
    ("memory", "bank_bandwidth_gbytes_per_s"): (_positive, "a positive number of GB/s"),
    ("memory", "axi", "max_burst_beats"): (lambda v: type(v) is int and 1 <= v <= 256, "an integer in 1..256"),
    ("memory", "axi", "outstanding"): (lambda v: type(v) is int and 1 <= v <= 512, "an integer in 1..512"),
    ("memory", "axi", "latency_cycles"): (lambda v: type(v) is int and 1 <= v <= 100000, "an integer in 1..100000"),
    ("memory", "axi", "boundary_bytes"): (lambda v: type(v) is int and v > 0 and v & (v - 1) == 0,
                                          "a positive power-of-two integer (4096 for AXI4)"),
}


def check_device(data, where: str) -> None:
    """Raise an EngineError naming the first field of `data` that SCHEMA refuses."""
    if not isinstance(data, dict):
        raise EngineError(f"{where}: a device file holds a JSON object, not {type(data).__name__}")
    for path, (ok, accepted) in SCHEMA.items():
        value, name = data, ".".join(path)
        for key in path:
            if not isinstance(value, dict) or key not in value:
                raise EngineError(f"{where}: device file lacks the field '{name}' ({accepted})")
            value = value[key]
        if not ok(value):
            raise EngineError(f"{where}: device field '{name}' is {json.dumps(value)}; expected {accepted}")


@dataclass(frozen=True)
class Device:
    name: str
    part: str
    resources: dict[str, int]
    usable_ratio: float
    clock_mhz: float
    axi_bits: int
    axi: AxiSettings = AxiSettings()
    banks: int = 4
    bank_bytes_per_s: float = 19.2e9

    def budget(self, resource: str) -> float:
        return self.resources[resource] * self.usable_ratio

    def dram_ports(self, layout: str = DEFAULT_LAYOUT) -> DramPorts:
        """The memory system of this device at its clock, for an export in `layout`."""
        if layout not in LAYOUTS:
            raise EngineError(f"unknown DRAM layout '{layout}' (accepted: {', '.join(LAYOUTS)})")
        return DramPorts(self.axi, self.banks, self.bank_bytes_per_s, self.clock_mhz, layout)


def load_device(name_or_path: str = "u250", *, usable_ratio: float | None = None,
                clock_mhz: float | None = None) -> Device:
    path = Path(name_or_path)
    if not path.suffix:
        path = DEVICES / f"{name_or_path}.json"
    if not path.is_file():
        known = ", ".join(p.stem for p in DEVICES.glob("*.json"))
        raise EngineError(f"unknown device '{name_or_path}' (known: {known}, or a path to a device JSON file)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EngineError(f"cannot read device file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise EngineError(f"{path}: device file is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise EngineError(f"{path}:{exc.lineno}:{exc.colno}: device file is not JSON: {exc.msg}") from None
    check_device(data, str(path))
    return Device(data["name"], data["part"], {k: int(v) for k, v in data["resources"].items()},
                  usable_ratio if usable_ratio is not None else float(data["usable_ratio"]),
                  clock_mhz if clock_mhz is not None else float(data["clock_mhz"]),
                  int(data["memory"]["axi_bus_bits_max"]), _axi(data["memory"]["axi"]),
                  int(data["memory"]["banks"]), float(data["memory"]["bank_bandwidth_gbytes_per_s"]) * 1e9)


def _axi(data: dict) -> AxiSettings:
    return AxiSettings(int(data["max_burst_beats"]), int(data["outstanding"]), int(data["latency_cycles"]),
                       int(data["boundary_bytes"]))
