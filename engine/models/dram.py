"""Device memory + export layout -> what a DRAM port costs: the AXI settings every m_axi interface
states, the bursts a port's address sequence forms, and the cycles per beat a port sustains.

This module is the one place those facts live. The exporter writes `AxiSettings` into every
`#pragma HLS INTERFACE m_axi`, the symbolic model charges `cycles_per_beat` of its bursts to every
DRAM-facing loop, the cycle simulator paces its DRAM segments with the same number, and the timed C
simulation forms bursts from the addresses the exported code really touches (`burst_lengths`) and
charges them with `port_cycles`.

The port model (AXI4 as Vitis HLS's m_axi adapter drives it):
- a burst of n beats moves n bus words, one a cycle at best; bursts are cut at the 4 KB boundary
  and at `max_burst_beats`, and a loop invocation's accesses never join the next invocation's
  (Vitis infers bursts per loop nest);
- at most `outstanding` bursts are in flight, each waits `latency` cycles for its first beat, so a
  port sustains min(1, outstanding * n / (latency + n)) beats a cycle with bursts of n beats:
  single-beat bursts at 16 outstanding and a 64-cycle latency move one word every ~4 cycles;
- a port cannot exceed its DDR bank's bandwidth at the kernel clock, shared with the other ports
  placed on the same bank (connectivity.cfg: port k on bank k mod banks).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where used: the window reads device files before it paints
    import numpy as np

LAYOUTS = ("serialized", "natural")
DEFAULT_LAYOUT = "serialized"


@dataclass(frozen=True)
class AxiSettings:
    """What every m_axi interface of an export states (the device file's `memory.axi`)."""

    max_burst_beats: int = 64  # max_read_burst_length and max_write_burst_length
    outstanding: int = 16  # num_read_outstanding and num_write_outstanding
    latency: int = 64  # cycles from a burst's request to its first beat (the pragma's `latency`)
    boundary_bytes: int = 4096  # no AXI burst crosses a 4 KB boundary

    def burst_cap(self, word_bytes: int) -> int:
        """The longest burst of `word_bytes`-byte beats: the burst length, and 4 KB."""
        return max(1, min(self.max_burst_beats, self.boundary_bytes // max(1, word_bytes)))


@dataclass(frozen=True)
class DramPorts:
    """The memory system one design's ports see: AXI settings, DDR banks and the export layout."""

    axi: AxiSettings
    banks: int
    bank_bytes_per_s: float
    clock_mhz: float
    layout: str = DEFAULT_LAYOUT

    def bank_of(self, port_index: int) -> int:
        """The bank port k is placed on (connectivity.cfg's round robin)."""
        return port_index % self.banks

    def bank_share(self, word_bytes: int, ports_on_bank: int = 1) -> float:
        """Cycles per beat the bank's bandwidth allows a port of `word_bytes`-byte words when
        `ports_on_bank` ports share it (all streaming at once: the conservative case)."""
        bytes_per_cycle = self.bank_bytes_per_s / (self.clock_mhz * 1e6)
        return ports_on_bank * word_bytes / bytes_per_cycle


def cycles_per_beat(beats, axi: AxiSettings, share=1.0, *, maximum=None):
    """Cycles a port spends per bus word with bursts of `beats` beats (numbers, numpy arrays or sympy
    expressions; pass `maximum=sympy.Max` or smax for symbolic arguments)."""
    if maximum is None:
        if hasattr(beats, "shape"):
            import numpy as np

            maximum = np.maximum
        else:
            maximum = max
    return maximum(maximum(1, (axi.latency + beats) / (axi.outstanding * beats)), share)


def burst_lengths(addresses: np.ndarray, word_bytes: int, axi: AxiSettings,
                  breaks: np.ndarray | None = None) -> np.ndarray:
    """Word addresses (in access order, one port) -> the lengths of the bursts they form (as a
    multiset: the cap's cuts come first, not in access order): a burst
    goes on while each address is the previous one + 1, does not start a new 4 KB page, is not at
    an index in `breaks` (where a loop invocation starts) and is shorter than the burst cap."""
    import numpy as np

    addresses = np.asarray(addresses, dtype=np.int64)
    if addresses.size == 0:
        return np.zeros(0, dtype=np.int64)
    words_per_page = max(1, axi.boundary_bytes // max(1, word_bytes))
    start = np.ones(addresses.size, dtype=bool)
    start[1:] = (np.diff(addresses) != 1) | (addresses[1:] % words_per_page == 0)
    if breaks is not None:
        start[np.asarray(breaks, dtype=np.int64)] = True
    runs = np.diff(np.append(np.flatnonzero(start), addresses.size))
    cap = axi.burst_cap(word_bytes)
    # a run longer than the cap is cut into full bursts and a remainder
    full, rest = np.divmod(runs, cap)
    lengths = np.repeat(np.full(runs.size, cap), full)
    return np.concatenate([lengths, rest[rest > 0]]) if lengths.size else rest[rest > 0]


def port_cycles(bursts: np.ndarray, axi: AxiSettings, share: float = 1.0) -> float:
    """The fewest cycles a port needs to move these bursts: each burst at its own cycles per beat."""
    import numpy as np

    bursts = np.asarray(bursts, dtype=np.float64)
    if bursts.size == 0:
        return 0.0
    return float(np.sum(bursts * cycles_per_beat(bursts, axi, share)))


INOUT_REASON = ("partial results are read back through this port, and its storer writes PE boxes across the rows "
                "its loader reads (no one order for both)")


def port_directions(groups) -> dict[str, str]:
    """Array -> its port's direction, "in", "out" or "inout" (partial results read back, or an
    accumulator without an initialisation, whose first value comes from DRAM). `groups`: (array,
    kind, reloads (True when partial results come back), initialised on chip) per I/O group."""
    kinds: dict[str, list[tuple]] = {}
    for array, kind, reloads, initialised in groups:
        kinds.setdefault(array, []).append((kind, reloads, initialised))
    directions = {}
    for array, gs in kinds.items():
        if all(k == "in" for k, _, _ in gs):
            directions[array] = "in"
        elif any(k == "in" for k, _, _ in gs) or any(k == "acc" and (r or not i) for k, r, i in gs):
            directions[array] = "inout"
        else:
            directions[array] = "out"
    return directions


def port_layout(layout: str, direction: str, in_row_order: bool = False) -> tuple[str, str]:
    """(the layout a port of `direction` gets in an export in `layout`, why it differs). An inout port
    is serialized only when its loader and its storer visit the words in one order (`in_row_order`:
    the PE boxes the storer writes follow the rows the loader reads, engine/compiler/architecture/
    dram_runs.py); otherwise it stays natural (the storer writes PE box by PE box, across the rows)."""
    if layout == "serialized" and direction == "inout" and not in_row_order:
        return "natural", INOUT_REASON
    return layout, ""


def row_ordered_arrays(modules) -> set[str]:
    """Arrays every DRAM-facing module of which moves its boxes in row-major order. `modules`:
    (array, in_row_order) per DRAM-facing module."""
    arrays: dict[str, bool] = {}
    for array, ordered in modules:
        arrays[array] = arrays.get(array, True) and bool(ordered)
    return {a for a, ordered in arrays.items() if ordered}


def port_arrays(groups) -> list[str]:
    """The arrays in kernel0's port order (engine/export/interface.py kernel_interface): arrays only
    read first, then the arrays written, each in the order of their I/O groups. `groups`: (array,
    kind) pairs in I/O-group order."""
    kinds: dict[str, list[str]] = {}
    for array, kind in groups:
        kinds.setdefault(array, []).append(kind)
    inputs = [a for a, ks in kinds.items() if all(k == "in" for k in ks)]
    return inputs + [a for a in kinds if a not in inputs]


def ports_on_bank(ports: DramPorts, arrays: list[str], array: str) -> int:
    """How many ports share the bank of `array`'s port (itself included)."""
    k = arrays.index(array)
    return sum(1 for j in range(len(arrays)) if ports.bank_of(j) == ports.bank_of(k))


def cycles_per_word_expr(run, word_bytes, ports: DramPorts, sharing: int, *, widest_word_bytes: int, maximum):
    """`cycles_per_beat(min(burst cap, run), ...)` as an expression without a min (so the tuner's
    mathematical programs take it): with b = min(cap, run), (latency + b) / (outstanding * b) is
    latency / (outstanding * b) + 1 / outstanding, and latency / b = max(latency / cap,
    latency / run). Arguments that can never exceed 1 (the cap's term, the bank's share when even the
    widest word leaves bandwidth to spare) are left out."""
    axi = ports.axi
    args = [1, axi.latency / (axi.outstanding * run) + 1.0 / axi.outstanding]
    capped = axi.latency / (axi.outstanding * axi.burst_cap(widest_word_bytes)) + 1.0 / axi.outstanding
    if capped > 1:
        args.append(capped)
    if ports.bank_share(widest_word_bytes, sharing) > 1:
        args.append(ports.bank_share(1, sharing) * word_bytes)
    return maximum(*args)
