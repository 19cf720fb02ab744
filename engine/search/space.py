"""Design + model + device -> SearchSpace: the tunable loops of a design and a batched evaluator.

Each original (band) loop l has an array-partitioning factor `l_t1` in 1..N_l and maybe a second
level `l_t2` (latency hiding: a divisor of l_t1; SIMD: a power-of-two divisor up to the bound).
A configuration is feasible when it meets every constraint and every resource (PerformanceModel.fits)
stays within the device budget; infeasible ones get fitness = inf.

The fitness is the full latency model by default. Studies of the simplifications prior work made
use other objectives (OBJECTIVES): the larger of compute and off-chip communication (TENET), or the
off-chip traffic alone (Marvel's pruning).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.compiler.design import Design
from engine.floorplan.clock import quick_clock
from engine.models.constraints import feasible_mask
from engine.models.evaluate import PerformanceModel
from engine.compiler.expressions import smax
from engine.search.progress import Candidate

OBJECTIVES = ("latency", "max_compute_comm", "offchip")
CLOCKS = ("device", "estimated")  # the clock a configuration's time is taken at

Config = dict[str, int]
Columns = dict[str, np.ndarray]  # a batch in columns: parameter name -> values


def batch_size(configs: list[Config] | Columns) -> int:
    return len(configs) if isinstance(configs, list) else len(next(iter(configs.values())))


def batch_row(configs: list[Config] | Columns, i: int) -> Config:
    return dict(configs[i]) if isinstance(configs, list) else {n: int(v[i]) for n, v in configs.items()}


@dataclass(frozen=True)
class LoopGenes:
    loop: str
    extent: int
    t1: str
    t2: str | None  # the second-level parameter, if any
    simd: bool  # t2 is a SIMD factor (power of two)
    t2_upper: int


@dataclass(frozen=True)
class Batch:
    latency: np.ndarray
    dsp: np.ndarray
    bram: np.ndarray
    feasible: np.ndarray
    objective: np.ndarray  # what the search minimises: the latency unless the space says otherwise
    resources: dict[str, np.ndarray] | None = None  # every resource `fits` checks, where the evaluator gives them

    @property
    def fitness(self) -> np.ndarray:
        return np.where(self.feasible, self.objective, np.inf)


class SearchSpace:
    def __init__(self, model: PerformanceModel, *, objective: str = "latency", clock: str = "device"):
        """`clock="estimated"`: each configuration's time is taken at its own estimated clock
        (engine/floorplan/clock.py quick_clock, vectorised, no floorplan solved: the clock of the
        export's floorplanned build): the objective is its latency in cycles of the device's clock,
        candidates report throughput at their clock, and a configuration no floorplan can place (0 MHz:
        it will not route) is infeasible."""
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}")
        if clock not in CLOCKS:
            raise ValueError(f"clock must be one of {CLOCKS}")
        self.model = model
        self.clock = clock
        self._widest = None
        if clock == "estimated":
            widths = [f.width_bits for f in model.architecture.fifos if f.source == f.target == "PE"]
            self._widest = model.compile_objective(smax(*widths)) if widths else None
        self.objective = objective
        self._objective = None
        if objective == "max_compute_comm":  # compute vs DRAM transfers; no prologue, epilogue or on-chip I/O
            sym = model.symbolic
            dram = [sym.module_terms[m.name] for m in model.architecture.modules if m.dram]
            self._objective = model.compile_objective(smax(sym.module_terms["PE"], *dram))
        elif objective == "offchip":
            self._objective = model.compile_objective(model.symbolic.offchip_bytes)
        self.design: Design = model.design
        self.device = model.device
        params = {p.name: p for p in self.design.params if p.tunable}
        self.names = list(model.tunable)
        self.loops: list[LoopGenes] = []
        for loop, extent in zip(self.design.band_loops, self.design.problem_size):
            t2 = params.get(f"{loop}_t2")
            self.loops.append(LoopGenes(loop, extent, f"{loop}_t1", t2.name if t2 else None,
                                        bool(t2 and t2.role == "simd"), t2.upper if t2 else 1))
        self.dsp_budget = self.device.budget("DSP")
        self.bram_budget = self.device.budget("BRAM18K")
        self.operations = model.symbolic.operations  # throughput(): compute.operations.total

    def evaluate(self, configs: list[Config] | Columns) -> Batch:
        """Latency, DSP, BRAM and feasibility of a batch (a list of configurations, or columns)."""
        if isinstance(configs, list):
            arrays = {n: np.fromiter((c[n] for c in configs), dtype=np.int64, count=len(configs)) for n in self.names}
        else:
            arrays = {n: np.asarray(configs[n], dtype=np.int64) for n in self.names}
        latency, resources = self.model.evaluate_resources(arrays)
        ok = feasible_mask(self.design, arrays) & self.model.fits(resources)
        objective = latency if self._objective is None else self._objective(arrays)
        if self.clock == "estimated":  # cycles of the device's clock the configuration's time takes
            mhz = self.clock_mhz(arrays, resources)
            routes = mhz > 0
            ok = ok & routes
            objective = np.where(routes, objective * self.device.clock_mhz / np.where(routes, mhz, 1.0), np.inf)
        return Batch(latency, resources["DSP"], resources["BRAM18K"], ok, objective, resources)

    def clock_mhz(self, arrays: Columns, resources: dict[str, np.ndarray]) -> np.ndarray:
        """The estimated clock of each configuration (`clock="estimated"`), else the device's."""
        if self.clock != "estimated":
            return np.full(np.shape(resources["DSP"]), self.device.clock_mhz)
        widest = self._widest(arrays) if self._widest is not None else np.zeros(np.shape(resources["DSP"]))
        return quick_clock(self.device, resources, widest)

    def throughput(self, latency: float, clock_mhz: float | None = None) -> float:
        clock = self.device.clock_mhz if clock_mhz is None else clock_mhz
        return self.operations / (latency / (clock * 1e6)) / 1e9

    def candidate(self, config: Config, latency: float, dsp: float, bram: float) -> Candidate:
        clock = None
        if self.clock == "estimated":
            arrays = {n: np.array([config[n]], dtype=np.int64) for n in self.names}
            clock = float(self.clock_mhz(arrays, self.model.evaluate_resources(arrays)[1])[0])
        return Candidate(dict(config), float(latency), float(dsp), float(bram), self.throughput(latency, clock))
