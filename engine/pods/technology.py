"""A technology file (JSON) -> `Technology`: clock, energy per MAC / SRAM byte / DRAM byte, DRAM
bandwidth, operand widths, the power budget and the interconnects' energy per byte at a reference pod count.

The bundled default is SOSA's 28 nm (resources/pods/sosa_28nm.json); a user replaces it with
`--technology FILE`. Every figure must be present and positive; a bad file is a `TechnologyError`
naming the file, the key and what would be accepted.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError, SourceLocation
from engine.resources import RESOURCES
from engine.validation import read_json

DEFAULT_TECHNOLOGY = RESOURCES / "pods" / "sosa_28nm.json"
INTERCONNECTS = ("butterfly-1", "butterfly-2", "butterfly-4", "butterfly-8", "benes", "crossbar")
_NUMBERS = ("clock_hz", "mac_pj", "sram_pj_per_byte", "dram_pj_per_byte", "activation_bytes",
            "weight_bytes", "psum_bytes", "tdp_w", "bank_kib", "interconnect_reference_pods", "switch_cycles",
            "array_multicast", "array_fan_in", "dram_gb_per_s")


class TechnologyError(EngineError):
    """A technology file is missing, unreadable, or has a missing, non-numeric or non-positive figure."""


@dataclass(frozen=True)
class Technology:
    name: str
    clock_hz: float
    mac_pj: float
    sram_pj_per_byte: float
    dram_pj_per_byte: float
    activation_bytes: int
    weight_bytes: int
    psum_bytes: int
    tdp_w: float
    bank_kib: int
    interconnect_reference_pods: int
    interconnect_mw_per_byte: dict[str, float]
    switch_cycles: int
    array_multicast: int  # U: PEs along a row an activation reaches per cycle (SOSA 4.1)
    array_fan_in: int     # V: PEs down a column a partial sum advances per cycle (SOSA 4.1)
    dram_gb_per_s: float  # off-chip bandwidth behind the banks (engine/pods/dram.py)

    @property
    def dram_bytes_per_cycle(self) -> float:
        return self.dram_gb_per_s * 1e9 / self.clock_hz

    def interconnect_pj_per_byte_at_reference(self, interconnect: str) -> float:
        """Table 1's mW/byte is power per byte/cycle at 1 GHz; at the technology's clock it is this
        energy per byte (mW / (byte * GHz) = pJ/byte)."""
        return self.interconnect_mw_per_byte[interconnect] * 1e9 / self.clock_hz


def load_technology(path: str | Path | None = None) -> Technology:
    path = Path(path) if path is not None else DEFAULT_TECHNOLOGY
    where = SourceLocation(str(path))
    data = read_json(path, "technology file", error=TechnologyError)
    if not isinstance(data, dict):
        raise TechnologyError("a technology file is a JSON object of named figures", where)
    values = {key: _positive(data, key, where) for key in _NUMBERS}
    for key in ("activation_bytes", "weight_bytes", "psum_bytes", "bank_kib", "interconnect_reference_pods",
                "switch_cycles", "array_multicast", "array_fan_in"):
        if values[key] != int(values[key]):
            raise TechnologyError(f"'{key}' must be a whole number, got {values[key]}", where)
        values[key] = int(values[key])
    table = data.get("interconnect_mw_per_byte")
    if not isinstance(table, dict):
        raise TechnologyError("missing 'interconnect_mw_per_byte' (an object: interconnect -> mW/byte "
                              f"for {', '.join(INTERCONNECTS)})", where)
    mw = {name: _positive(table, name, where, prefix="interconnect_mw_per_byte.") for name in INTERCONNECTS}
    return Technology(name=str(data.get("name", path.stem)), interconnect_mw_per_byte=mw, **values)


def _positive(data: dict, key: str, where: SourceLocation, *, prefix: str = "") -> float:
    if key not in data:
        raise TechnologyError(f"missing figure '{prefix}{key}' (a positive number)", where)
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TechnologyError(f"'{prefix}{key}' must be a positive number, got {json.dumps(value)}", where)
    if not value > 0:
        raise TechnologyError(f"'{prefix}{key}' must be positive, got {value}", where)
    if not math.isfinite(value):
        raise TechnologyError(f"'{prefix}{key}' must be finite, got {value}", where)
    return float(value)
