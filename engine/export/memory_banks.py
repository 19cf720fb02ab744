"""Device + kernel interface + the ports' DRAM buffers -> the memory each port is linked to in
connectivity.cfg (`sp=kernel0_1.A:DDR[1]`, `sp=kernel0_1.A:HBM[0:1]`).

DDR4 boards: port k on bank k mod banks, in the interface's port order, the bank the models charge
it (engine/models/dram.py DramPorts.bank). HBM2 boards: each port gets its own run of consecutive
pseudo-channels, as many as its buffer needs at the device's `bank_gbytes` each (Vitis reaches a run
through the HBM switch); no two ports share one, as in the models, where each port has a bank of its
own while there are no more ports than pseudo-channels, and a port's bandwidth is one channel's.
AutoSA's `hbm_<array>[n]` (`channels`) makes that array's run at least n pseudo-channels long
(`sp=kernel0_1.A:HBM[0:1]` for hbm_A[2]); AutoSA splits the array over n ports instead, which the
export does not build. Buffers that need more pseudo-channels than the board has are an ExportError."""
from __future__ import annotations

import math

from engine.export.interface import ExportError
from engine.models.device import MEMORY_KINDS, Device


def port_memories(device: Device, interface, dram: dict[str, dict],
                  channels: dict[str, int] | None = None) -> dict[str, str]:
    """Port name -> its connectivity target; `dram`: per port `words` and `word_bytes` of its buffer
    (dram_layout's summary, design.json's "dram"); `channels`: array -> the pseudo-channels its
    port's run takes at least (AutoSA's hbm_<array>[n])."""
    channels = channels or {}
    bank = MEMORY_KINDS[device.memory_kind]
    if device.memory_kind != "HBM2":
        return {port.name: f"{bank}[{k % device.banks}]" for k, port in enumerate(interface.ports)}
    def run(port) -> int:
        size = dram[port.name]["words"] * dram[port.name]["word_bytes"]
        return max(1, math.ceil(size / device.bank_bytes), channels.get(port.array, 1) if channels else 1)

    out, start = {}, 0
    for port in interface.ports:
        length = run(port)
        if start + length > device.banks:
            need = sum(run(p) for p in interface.ports)
            raise ExportError(f"the ports' buffers need {need} HBM pseudo-channels of {device.bank_bytes / 2**20:,.0f} "
                              f"MiB; the {device.name} has {device.banks}")
        out[port.name] = f"{bank}[{start}]" if length == 1 else f"{bank}[{start}:{start + length - 1}]"
        start += length
    return out
