"""An export's memory system + the recorder's DRAM files -> what each DRAM loop invocation costs.

The traced kernel (engine/csim/trace.py `_dram_pointers`, engine/csim/include/systolic_trace.h)
reports every bus word it reads or writes through kernel0's m_axi ports; the recorder forms, per
pipelined loop invocation and (port, direction), the bursts an AXI adapter would issue and writes
them to dram.bin (segment, port * 2 + dir, burst length, bursts). Here they are charged with
engine/models/dram.py's port arithmetic (`cycles_per_beat`: the AXI settings' outstanding bursts
and latency, and the DDR bank's bandwidth shared by the ports placed on it, as the export's
connectivity.cfg places them): per invocation the slowest of its ports, which the timed C
simulation turns into the segment's pace (engine/sim/kernel_arrays.py PACE). The same files give
each port's totals (words, bursts, lower-bound cycles) for the report.

The AXI settings are those of the export: design.json's "axi" when the export states them, else
the device file's (engine/models/device.py `load_device`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.models.device import load_device
from engine.models.dram import AxiSettings, DramPorts, cycles_per_beat
from engine.validation import read_text

_SP = re.compile(r"^\s*sp\s*=\s*[\w.]+?\.(\w+)\s*:\s*\w+\[(\d+)\]\s*$")


@dataclass(frozen=True)
class PortTotals:
    """One DRAM port (one direction) over the whole run, pipelined loop invocations only."""

    name: str  # e.g. "A" or "C (write)"
    words: int
    bursts: int
    cycles: float  # the fewest cycles the port needs for these bursts (`cycles_per_beat` summed)

    @property
    def mean_burst(self) -> float:
        return self.words / self.bursts if self.bursts else 0.0

    def as_dict(self) -> dict:
        return {"words": self.words, "bursts": self.bursts, "mean_burst": round(self.mean_burst, 3),
                "cycles": round(self.cycles, 1)}


def export_dram_ports(project_dir: Path, design: dict) -> DramPorts:
    """The memory system the export was made for: design.json's "axi" if present, else the device
    file's AXI settings; banks, bank bandwidth from the device file; the clock of the export's report."""
    device = load_device()
    axi = device.axi
    stated = design.get("axi")
    if isinstance(stated, dict):
        get = lambda *keys: next((int(stated[k]) for k in keys if k in stated), None)  # noqa: E731
        axi = AxiSettings(get("max_burst_beats", "max_read_burst_length") or axi.max_burst_beats,
                          get("outstanding", "num_read_outstanding") or axi.outstanding,
                          get("latency", "latency_cycles") or axi.latency,
                          get("boundary_bytes") or axi.boundary_bytes)
    report = design.get("report") if isinstance(design.get("report"), dict) else {}
    clock = (report.get("device") or {}).get("clock_mhz") or device.clock_mhz
    layout = design.get("layout") if design.get("layout") in ("serialized", "natural") else "natural"
    return DramPorts(axi, device.banks, device.bank_bytes_per_s, float(clock), layout)


def port_banks(project_dir: Path, ports: list[str], memory: DramPorts) -> dict[str, int]:
    """Port name -> DDR bank, as the export's connectivity.cfg places them (`sp=cu.PORT:DDR[b]`);
    a port it does not name sits on bank k mod banks (k its position among kernel0's ports)."""
    banks = {name: memory.bank_of(k) for k, name in enumerate(ports)}
    cfg = project_dir / "connectivity.cfg"
    if cfg.is_file():
        for line in read_text(cfg, "connectivity file").splitlines():
            m = _SP.match(line)
            if m and m.group(1) in banks:
                banks[m.group(1)] = int(m.group(2))
    return banks


def read_ports(trace: Path) -> list[tuple[str, int]]:
    """ports.tsv: (name, word bytes) per port id."""
    path = trace / "ports.tsv"
    rows = [line.split("\t") for line in path.read_text().splitlines() if line] if path.is_file() else []
    ports: list[tuple[str, int]] = []
    for r in rows:
        if len(r) == 3:
            k = int(r[0])
            ports += [("", 1)] * (k + 1 - len(ports))
            ports[k] = (r[1], int(r[2]))
    return ports


def read_bursts(trace: Path) -> np.ndarray:
    """dram.bin: int64 rows (segment, port * 2 + dir, burst length, bursts of that length)."""
    path = trace / "dram.bin"
    if not path.is_file():
        return np.zeros((0, 4), dtype=np.int64)
    return np.fromfile(path, dtype=np.int64).reshape(-1, 4)


def shares(ports: list[tuple[str, int]], banks: dict[str, int], memory: DramPorts) -> np.ndarray:
    """Per port id: the cycles per beat its bank's bandwidth allows when all ports on the bank stream."""
    on_bank: dict[int, int] = {}
    for name, _ in ports:
        on_bank[banks.get(name, 0)] = on_bank.get(banks.get(name, 0), 0) + 1
    return np.array([memory.bank_share(word, on_bank[banks.get(name, 0)]) for name, word in ports] or [1.0])


def invocation_cycles(bursts: np.ndarray, n_segments: int, share: np.ndarray, axi: AxiSettings) -> np.ndarray:
    """Per trace segment: the cycles its slowest DRAM port (and direction) needs for its bursts (0
    where the segment touches no DRAM)."""
    out = np.zeros(n_segments, dtype=np.float64)
    if not len(bursts):
        return out
    seg, channel, length, count = bursts.T
    cost = count * length * cycles_per_beat(length.astype(np.float64), axi, share[channel // 2])
    keys, where = np.unique(np.stack([seg, channel], axis=1), axis=0, return_inverse=True)
    per_channel = np.zeros(len(keys))
    np.add.at(per_channel, where.reshape(-1), cost)
    np.maximum.at(out, keys[:, 0], per_channel)
    return out


def port_totals(bursts: np.ndarray, ports: list[tuple[str, int]], share: np.ndarray,
                axi: AxiSettings) -> list[PortTotals]:
    """Each (port, direction) that moved words in a pipelined loop: words, bursts and lower-bound cycles."""
    totals = []
    for channel in np.unique(bursts[:, 1]) if len(bursts) else []:
        mine = bursts[bursts[:, 1] == channel]
        length, count = mine[:, 2], mine[:, 3]
        port, direction = divmod(int(channel), 2)
        cycles = float(np.sum(count * length * cycles_per_beat(length.astype(np.float64), axi, share[port])))
        name = ports[port][0] if port < len(ports) else f"port {port}"
        totals.append(PortTotals(f"{name} ({'write' if direction else 'read'})", int(np.sum(count * length)),
                                 int(np.sum(count)), cycles))
    return totals
