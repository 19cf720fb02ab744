"""Device + kernel interface + the ports' DRAM buffers -> the memory each port is linked to in
connectivity.cfg (`sp=kernel0_1.A:DDR[1]`, `sp=kernel0_1.A:HBM[0:1]`).

DDR4 boards: port k on bank k mod banks, in the interface's port order, the bank the models charge
it (engine/models/dram.py DramPorts.bank). HBM2 boards: each port gets its own run of consecutive
pseudo-channels, as many as its buffer needs at the device's `bank_gbytes` each (Vitis reaches a run
through the HBM switch); no two ports share one, as in the models, where each port has a bank of its
own while there are no more ports than pseudo-channels, and a port's bandwidth is one channel's.
Buffers that need more pseudo-channels than the board has are an ExportError."""
from __future__ import annotations

import math

from engine.export.interface import ExportError
from engine.models.device import MEMORY_KINDS, Device


def port_memories(device: Device, interface, dram: dict[str, dict]) -> dict[str, str]:
    """Port name -> its connectivity target; `dram`: per port `words` and `word_bytes` of its buffer
    (dram_layout's summary, design.json's "dram")."""
    bank = MEMORY_KINDS[device.memory_kind]
    if device.memory_kind != "HBM2":
        return {port.name: f"{bank}[{k % device.banks}]" for k, port in enumerate(interface.ports)}
    out, start = {}, 0
    for port in interface.ports:
        size = dram[port.name]["words"] * dram[port.name]["word_bytes"]
        channels = max(1, math.ceil(size / device.bank_bytes))
        if start + channels > device.banks:
            need = sum(max(1, math.ceil(dram[p.name]["words"] * dram[p.name]["word_bytes"] / device.bank_bytes))
                       for p in interface.ports)
            raise ExportError(f"the ports' buffers need {need} HBM pseudo-channels of {device.bank_bytes / 2**20:,.0f} "
                              f"MiB; the {device.name} has {device.banks}")
        out[port.name] = f"{bank}[{start}]" if channels == 1 else f"{bank}[{start}:{start + channels - 1}]"
        start += channels
    return out
