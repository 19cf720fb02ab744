"""Device description files (resources/devices/*.json) -> Device: resources, usable ratio, clock, the
memory system the DRAM ports see (DDR4 banks or HBM2 pseudo-channels, their capacity and bandwidth,
the pinned AXI settings), the Vitis platform an export targets and the dies (SLRs): what each offers
the kernel, which DRAM banks sit in it and the wires between neighbours.

A device file is read through engine/validation.read_json (a regular file of at most 16 MB, UTF-8,
nesting at most 64 deep) and checked against SCHEMA before use: a file that is not UTF-8 JSON, lacks
a field or has one of the wrong type or range is an EngineError naming the file, the field and what is accepted."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError
from engine.models.dram import DEFAULT_LAYOUT, LAYOUTS, AxiSettings, DramPorts
from engine.resources import RESOURCES
from engine.validation import check_clock, read_json

DEVICES = RESOURCES / "devices"
RESOURCE_NAMES = ("DSP", "BRAM18K", "URAM", "LUT", "FF")
# memory.kind -> the name Vitis gives its banks in connectivity.cfg (DDR[k], HBM[k] pseudo-channels)
MEMORY_KINDS = {"DDR4": "DDR", "HBM2": "HBM"}


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
    ("clock_mhz_max",): (_positive, "a positive number of MHz (the fastest kernel clock the platform offers)"),
    ("slrs", "sll_per_boundary"): (lambda v: type(v) is int and v > 0,
                                   "a positive integer (wires crossing between neighbouring SLRs)"),
    ("memory", "axi_bus_bits_max"): (lambda v: type(v) is int and v > 0 and v & (v - 1) == 0,
                                     "a positive power-of-two integer"),
    ("memory", "kind"): (lambda v: v in MEMORY_KINDS, f"one of {', '.join(MEMORY_KINDS)}"),
    ("memory", "banks"): (lambda v: type(v) is int and v > 0, "a positive integer (DDR or HBM banks)"),
    ("memory", "bank_gbytes"): (_positive, "a positive number of GB (one bank or HBM pseudo-channel)"),
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
    if data["clock_mhz"] > data["clock_mhz_max"]:
        raise EngineError(f"{where}: device field 'clock_mhz' is {json.dumps(data['clock_mhz'])}, above "
                          f"'clock_mhz_max' {json.dumps(data['clock_mhz_max'])}")
    _check_slrs(data, where)


def _check_slrs(data: dict, where: str) -> None:
    """slrs.dies: a non-empty list, bottom SLR first, each with positive integer `resources` (what the
    kernel may use: the platform's static region removed) adding up to at most the device's, and
    `banks`, the DRAM banks wired to it: together every bank 0..memory.banks-1 exactly once."""
    dies = data["slrs"].get("dies") if isinstance(data["slrs"], dict) else None
    if not isinstance(dies, list) or not dies:
        raise EngineError(f"{where}: device field 'slrs.dies' is {json.dumps(dies)}; expected a non-empty list "
                          f"of SLRs, bottom first")
    seen: list[int] = []
    for k, die in enumerate(dies):
        die = die if isinstance(die, dict) else {}
        resources = die.get("resources") if isinstance(die.get("resources"), dict) else {}
        for r in RESOURCE_NAMES:
            value = resources.get(r)
            if value is None:
                raise EngineError(f"{where}: device file lacks the field 'slrs.dies[{k}].resources.{r}' "
                                  f"(a positive integer: what SLR{k} offers the kernel)")
            if type(value) is not int or value <= 0:
                raise EngineError(f"{where}: device field 'slrs.dies[{k}].resources.{r}' is {json.dumps(value)}; "
                                  f"expected a positive integer")
        banks = die.get("banks")
        if not isinstance(banks, list) or not all(type(b) is int for b in banks):
            raise EngineError(f"{where}: device field 'slrs.dies[{k}].banks' is {json.dumps(banks)}; expected a "
                              f"list of DRAM bank numbers (possibly empty)")
        seen += banks
    for r in RESOURCE_NAMES:
        total = sum(die["resources"][r] for die in dies)
        if total > data["resources"][r]:
            raise EngineError(f"{where}: the SLRs' {r} add up to {total}, more than the device's "
                              f"'resources.{r}' {data['resources'][r]}")
    if sorted(seen) != list(range(data["memory"]["banks"])):
        raise EngineError(f"{where}: device field 'slrs.dies[*].banks' lists banks {sorted(seen)}; expected each "
                          f"of the {data['memory']['banks']} banks of 'memory.banks' in exactly one SLR")


@dataclass(frozen=True)
class Slr:
    """One die: what it offers the kernel and the DRAM banks wired to it."""

    resources: dict[str, int]
    banks: tuple[int, ...]


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
    slrs: tuple[Slr, ...] = ()
    sll_per_boundary: int = 0  # wires between neighbouring SLRs
    clock_mhz_max: float = 0.0
    memory_kind: str = "DDR4"  # memory.kind: DDR4 banks or HBM2 pseudo-channels
    bank_bytes: float = 16 * 2**30  # capacity of one bank (pseudo-channel)
    platform: str = ""  # vitis_platforms.default, the platform an export targets unless told

    def slr_of_bank(self, bank: int) -> int:
        """The SLR a DRAM bank is wired to."""
        return next(k for k, slr in enumerate(self.slrs) if bank in slr.banks)

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
    data = read_json(path, "device file", error=EngineError)  # size, encoding and depth checked
    check_device(data, str(path))
    if clock_mhz is not None:
        check_clock(clock_mhz, data["clock_mhz_max"], data["name"], str(path))
    return Device(data["name"], data["part"], {k: int(v) for k, v in data["resources"].items()},
                  usable_ratio if usable_ratio is not None else float(data["usable_ratio"]),
                  clock_mhz if clock_mhz is not None else float(data["clock_mhz"]),
                  int(data["memory"]["axi_bus_bits_max"]), _axi(data["memory"]["axi"]),
                  int(data["memory"]["banks"]), float(data["memory"]["bank_bandwidth_gbytes_per_s"]) * 1e9,
                  tuple(Slr({r: int(die["resources"][r]) for r in RESOURCE_NAMES}, tuple(die["banks"]))
                        for die in data["slrs"]["dies"]),
                  int(data["slrs"]["sll_per_boundary"]), float(data["clock_mhz_max"]),
                  data["memory"]["kind"], float(data["memory"]["bank_gbytes"]) * 2**30,
                  str((data.get("vitis_platforms") or {}).get("default", "")))


def _axi(data: dict) -> AxiSettings:
    return AxiSettings(int(data["max_burst_beats"]), int(data["outstanding"]), int(data["latency_cycles"]),
                       int(data["boundary_bytes"]))
