"""Array shape + pod count + interconnect + technology -> `PodSystem`: peak throughput, peak power, the
time slice, the bytes a busy pod moves per cycle, and the pod count that fits a power budget.

A pod is SOSA's weight-stationary r x c array (Fig. 3): weights stay in the PEs (double-buffered, r
cycles to load the next tile row by row), activations enter at the left column (r bytes a cycle),
partial sums at the top row and leave at the bottom (c in and c out a cycle). Banks: as many as
pods for each operand (X, W, P), each on its own interconnect. A SIMD post-processor sums the partial
sums and applies the activation; it reads the partial sums a pod wrote, so at full rate each pod
costs r + 5c SRAM bytes a cycle (X: r, W: r*c every r cycles = c, P written 2c, P read back 2c) and
r + 3c interconnect bytes (X, W in, P out). With SOSA's 0.4 pJ/MAC and 2.7 pJ/byte this gives its
Table 2 peak power to 0.1 W for the monolithic 512x512 array.

A tile operation of m rows holds its pod for max(m, r) + f cycles: it streams m rows, at least the r
cycles of buffering the next weights (double-buffered, SOSA 3.1), and pays the array's pipeline fill
and drain f, which SOSA says leaves "idle processing elements between tasks" (4.1). With activation
multicast U (a row's activation reaches U PEs a cycle) and partial-sum fan-in V (a partial sum
advances V rows a cycle), the last of m rows leaves the array m + ceil(c/U) + ceil(r/V) - 2 cycles
after the first enters (U = V = 1: the standard skew r + c - 2). The time slice holds a full
operation, r + f cycles, or the interconnect's round trip when that is longer.

Peak power assumes every pod busy every cycle (SOSA's TDP sizing); no leakage is modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import EngineError
from engine.pods.interconnect import Interconnect, make_interconnect
from engine.pods.technology import Technology


@dataclass(frozen=True)
class PodSystem:
    rows: int
    cols: int
    pods: int
    interconnect: Interconnect
    technology: Technology

    @property
    def shape(self) -> str:
        return f"{self.rows}x{self.cols}"

    @property
    def pes(self) -> int:
        return self.rows * self.cols * self.pods

    @property
    def fill_drain_cycles(self) -> int:
        """The array's pipeline fill and drain per tile operation: ceil(c/U) + ceil(r/V) - 2."""
        t = self.technology
        return -(-self.cols // t.array_multicast) + -(-self.rows // t.array_fan_in) - 2

    def op_cycles(self, rows):
        """Cycles a tile operation streaming `rows` rows of X holds its pod (an int or an array)."""
        return np.maximum(rows, self.rows) + self.fill_drain_cycles

    @property
    def slice_cycles(self) -> int:
        """SOSA's fixed time slice: r cycles (the weight buffering time, 4.2) plus the pipeline fill
        and drain of an r-row operation, longer when the interconnect's round trip cannot be hidden
        behind it (double buffering hides at most a slice)."""
        return max(self.rows + self.fill_drain_cycles, self.interconnect.round_trip_cycles(self.technology))

    def sram_bytes_per_cycle(self) -> float:
        t = self.technology
        return self.pods * (self.rows * t.activation_bytes + self.cols * t.weight_bytes
                            + 2 * self.cols * t.psum_bytes)

    def network_bytes_per_cycle(self) -> float:
        t = self.technology
        return self.pods * (self.rows * t.activation_bytes + self.cols * t.weight_bytes + self.cols * t.psum_bytes)

    def peak_ops(self) -> float:
        """Operations per second (a MAC is 2) with every PE busy."""
        return 2.0 * self.pes * self.technology.clock_hz

    def peak_power_parts(self) -> dict[str, float]:
        t = self.technology
        f = t.clock_hz * 1e-12  # pJ per cycle -> W
        return {"mac": self.pes * t.mac_pj * f,
                "sram": self.sram_bytes_per_cycle() * t.sram_pj_per_byte * f,
                "interconnect": self.network_bytes_per_cycle() * self.interconnect.pj_per_byte(t) * f}

    def peak_power(self) -> float:
        return sum(self.peak_power_parts().values())

    def peak_ops_at(self, watts: float) -> float:
        """Peak throughput normalised to a power budget (SOSA Table 2's 'peak throughput @400W')."""
        return self.peak_ops() * watts / self.peak_power()


def build_system(rows: int, cols: int, pods: int, interconnect: str, technology: Technology) -> PodSystem:
    if rows < 1 or cols < 1:
        raise EngineError(f"array must be at least 1x1, got {rows}x{cols}")
    return PodSystem(rows, cols, pods, make_interconnect(interconnect, pods), technology)


def pods_at_power(rows: int, cols: int, interconnect: str, technology: Technology,
                  watts: float | None = None) -> PodSystem:
    """SOSA's sizing rule: the largest power-of-two pod count whose peak power is within the budget
    (the technology's TDP by default). An array that does not fit once is an error."""
    watts = technology.tdp_w if watts is None else watts
    pods = 1
    system = build_system(rows, cols, 1, interconnect, technology)
    if system.peak_power() > watts:
        raise EngineError(f"one {rows}x{cols} pod needs {system.peak_power():.1f} W at peak, "
                          f"over the {watts:g} W budget: choose a smaller array or a larger --tdp")
    while True:
        bigger = build_system(rows, cols, pods * 2, interconnect, technology)
        if bigger.peak_power() > watts:
            return system
        pods, system = pods * 2, bigger
