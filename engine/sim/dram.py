"""A design descriptor's DRAM-facing modules + the device's memory system -> the pace of their loops:
the cycles per word each AXI port sustains (engine/models/dram.py, the rule the model and the timed C
simulation use), and the AXI latency of a run's first read and last write."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.compiler.architecture.dram_runs import dram_pack_name
from engine.compiler.expressions import evaluate
from engine.models.device import load_device
from engine.models.dram import (DramPorts, cycles_per_beat, port_arrays, port_directions, port_layout, ports_on_bank,
                               row_ordered_arrays)


@dataclass(frozen=True)
class DramModel:
    """DRAM-facing modules: each invocation of a DRAM loop moves its words at its AXI port's cycles
    per word (engine/models/dram.py `cycles_per_beat` of the runs the descriptor's `dram_runs` give
    for the layout, capped at the burst length; the segment's pace); the first read of a run waits
    the AXI latency, the last write is acknowledged the AXI latency after it leaves. `ports`: the
    memory system (device.dram_ports(layout)), the default device's in the default layout if None."""

    ports: DramPorts | None = None

    @property
    def resolved(self) -> DramPorts:
        return self.ports if self.ports is not None else _default_ports()

    @property
    def read_latency(self) -> int:
        return self.resolved.axi.latency

    @property
    def write_latency(self) -> int:
        return self.resolved.axi.latency

    def pace(self, descriptor: dict, module: dict, values: dict[str, int]) -> float:
        """Cycles per word of a DRAM-facing module's loop (0 for other modules)."""
        if not module["dram"] or "dram_runs" not in module:
            return 0.0
        ports = self.resolved
        groups = descriptor.get("port_io_groups", descriptor["io_groups"])  # a pass's descriptor: the design's
        arrays = port_arrays((g["array"], g["kind"]) for g in groups)
        if module["array"] not in arrays:
            return 0.0
        name = dram_pack_name(module["name"], module["kind"], module["level"])
        bits = descriptor["kernel"]["arrays"][module["array"]]["element_bits"]
        word_bytes = max(1, values.get(name, 1) * bits // 8)
        directions = port_directions((g["array"], g["kind"], g["reload_events"] != "0", g["initialised_on_chip"])
                                     for g in groups)
        ordered = row_ordered_arrays((m["array"], m.get("in_row_order", False))
                                     for m in descriptor["topology"]["modules"] if m["dram"])
        layout, _ = port_layout(ports.layout, directions[module["array"]], module["array"] in ordered)
        run = evaluate(module["dram_runs"][layout], values)
        beats = max(1.0, min(ports.axi.burst_cap(word_bytes), run))
        share = ports.bank_share(word_bytes, ports_on_bank(ports, arrays, module["array"]))
        return float(cycles_per_beat(beats, ports.axi, share))


@lru_cache(maxsize=1)
def _default_ports() -> DramPorts:
    return load_device().dram_ports()
