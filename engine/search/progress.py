"""Plain, immutable records a search reports: progress snapshots (through callbacks) and results."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """One evaluated configuration of a design."""

    params: dict[str, int]
    latency_cycles: float
    dsp: float
    bram18k: float
    throughput_gops: float


@dataclass(frozen=True)
class Progress:
    """A snapshot after each batch; `best` is the best feasible configuration found so far."""

    design: str
    method: str
    samples: int
    elapsed: float
    best: Candidate | None
    note: str = ""  # e.g. "MP seed: SCIP timed out, continuing unseeded"
    # (latency, DSP) of feasible configurations evaluated since the previous snapshot, thinned to at
    # most run.RECENT_POINTS evenly spaced ones: enough for a live scatter without copying every batch
    recent: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class TracePoint:
    samples: int
    elapsed: float
    best_latency: float | None


@dataclass(frozen=True)
class DesignResult:
    design: str
    method: str
    samples: int
    elapsed: float
    best: Candidate | None
    trace: tuple[TracePoint, ...]
    pareto: tuple[Candidate, ...] = ()  # feasible configurations not dominated in (latency, DSP, BRAM)
    notes: tuple[str, ...] = ()
    stopped: str = "budget"  # budget, cancelled, exhausted (the strategy had nothing left to propose)


@dataclass(frozen=True)
class ExplorationResult:
    kernel: str
    method: str
    seed: int
    designs: tuple[DesignResult, ...] = field(default_factory=tuple)

    @property
    def best(self) -> DesignResult | None:
        found = [d for d in self.designs if d.best is not None]
        return min(found, key=lambda d: d.best.latency_cycles) if found else None
