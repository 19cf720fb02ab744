"""`systolic search --clock MHz|estimated`: the argparse type, and the lines that put the design chosen
at its estimated clock beside the one chosen at the device's clock (each with its latency, its
estimated clock and its throughput at both clocks)."""
from __future__ import annotations

import argparse

import numpy as np

from engine.compiler.design_space import DesignSpace
from engine.floorplan.clock import MODEL_NOTE
from engine.floorplan.solve import DEFAULT_CAP
from engine.models.device import Device
from engine.models.evaluate import PerformanceModel
from engine.search.progress import ExplorationResult
from engine.search.space import SearchSpace
from engine.validation import positive_mhz


def clock_choice(text: str) -> str | float:
    """argparse type: 'estimated' or a positive clock in MHz."""
    return "estimated" if text.strip().lower() == "estimated" else positive_mhz(text)


def estimated_clock(space: DesignSpace, device: Device, design: str, params: dict[str, int]) -> tuple[float, float]:
    """(the estimated clock of one configuration, the kernel's operations, compute.operations.total):
    SearchSpace's estimate (quick_clock, no floorplan solved: the export's floorplanned build)."""
    search = SearchSpace(PerformanceModel(space, space.design(design), device), clock="estimated")
    arrays = {n: np.array([params[n]], dtype=np.int64) for n in search.names}
    return float(search.clock_mhz(arrays, search.model.evaluate_resources(arrays)[1])[0]), float(search.operations)


def print_clock_comparison(space: DesignSpace, device: Device, estimated: ExplorationResult,
                           reference: ExplorationResult) -> None:
    print(f"clock: each design's estimated clock is {MODEL_NOTE}: the clock of the build `systolic export` "
          f"floorplans (at --cap {DEFAULT_CAP:g}, or the smallest cap that works), no floorplan solved per sample "
          f"(the SLRs' utilisation at its bound, as `systolic model` without --floorplan)")
    for title, result in ((f"chosen at {device.clock_mhz:g} MHz", reference),
                          ("chosen at its estimated clock", estimated)):
        best = result.best
        if best is None:
            print(f"  {title:30} no feasible configuration")
            continue
        c = best.best
        mhz, operations = estimated_clock(space, device, best.design, c.params)
        gops = operations / (c.latency_cycles / (device.clock_mhz * 1e6)) / 1e9
        params = " ".join(f"{k}={v}" for k, v in c.params.items())
        print(f"  {title:30} {best.design} {params}: {c.latency_cycles:,.0f} cycles, {c.dsp:,.0f} DSP; "
              f"{gops:,.1f} GOP/s at {device.clock_mhz:g} MHz, estimated {mhz:.0f} MHz -> "
              f"{gops * mhz / device.clock_mhz:,.1f} GOP/s")

