"""Descriptor + parameter values + device -> an estimated achievable kernel clock, for a build with the
floorplan (every process in its SLR, every crossing FIFO pipelined, as AutoBridge builds) and for a
plain `v++ --kernel_frequency` build, each with the reason that limits it. A model calibrated on
published implementation results (docs/floorplan.md), not Vivado.

The rule (one for every kernel; constants below):
- floorplanned: the target clock (the device's clock) while the most utilised SLR resource is within
  SLR_KNEE and every boundary's crossing wires within capacity; beyond, the period grows by
  SLOPE_SLR per unit of utilisation above the knee and in proportion to the crossings over capacity;
- plain build: a design that fits one SLR at the cap is placed in one and closes as floorplanned;
  a larger one spans SLRs with its FIFOs unregistered across the boundaries, and its period is the
  floorplanned one plus an SLL crossing (T_SLL) plus NS_PER_UTIL x the device utilisation (the
  fuller the device, the longer the detours to the crossing sites) plus NS_PER_256_BITS per 256 bits
  of the widest PE-to-PE FIFO (the widest bus the placer must spread over the crossing sites).
`quick_clock` gives the floorplanned estimate of the build the export makes (solve.py
export_floorplan) over arrays of configurations without solving a floorplan (for `systolic search
--clock estimated`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.floorplan.netlist import Netlist, build_netlist
from engine.floorplan.solve import (DEFAULT_CAP, Floorplan, FloorplanError, export_floorplan,
                                    floorplans_within_max_cap)
from engine.models.device import RESOURCE_NAMES, Device

SLR_KNEE = 0.85  # AutoSA's AutoBridge runs closed 300 MHz with slots up to 85% full (step2-autobridge.py)
SLOPE_SLR = 2.0  # relative period per unit of SLR utilisation above the knee
T_SLL = 0.755  # ns: one unregistered SLR crossing (SLL route plus clock-to-out, xcvu13p -2L)
NS_PER_UTIL = 1.0  # ns per unit of device utilisation (most used resource), plain builds
NS_PER_256_BITS = 1.0  # ns per 256 bits of the widest PE-to-PE FIFO, plain builds
MODEL_NOTE = "an estimate from a rule calibrated on published builds (docs/floorplan.md), not a Vivado result"


@dataclass(frozen=True)
class ClockEstimate:
    floorplanned_mhz: float
    floorplanned_reason: str
    unfloorplanned_mhz: float
    unfloorplanned_reason: str
    plan: Floorplan | None  # the floorplan the estimate read (at the smallest cap when the cap has none)
    device_utilisation: float  # most used resource over what the SLRs offer the kernel
    widest_pe_fifo_bits: int
    note: str = MODEL_NOTE


def _device_utilisation(net: Netlist, device: Device) -> tuple[float, str]:
    shares = {r: net.total(r) / sum(s.resources[r] for s in device.slrs) for r in RESOURCE_NAMES}
    worst = max(shares, key=shares.get)
    return shares[worst], worst


def clock_rule(target_mhz: float, slr_utilisation, crossing_ratio, device_utilisation, widest_pe_fifo_bits,
               fits_one_slr) -> tuple:
    """(floorplanned MHz, plain-build MHz) from the rule's inputs: the most utilised SLR resource (a
    share), the fullest boundary's crossing wires over its capacity, the device utilisation (a share),
    the widest PE-to-PE FIFO and whether the design fits one SLR at the cap. Numbers or numpy arrays
    (one configuration per element)."""
    period = 1000.0 / target_mhz
    period = period * (1 + SLOPE_SLR * np.maximum(0.0, slr_utilisation - SLR_KNEE) + np.maximum(0.0, crossing_ratio - 1))
    plain = period + T_SLL + NS_PER_UTIL * device_utilisation + NS_PER_256_BITS * np.asarray(widest_pe_fifo_bits) / 256
    return 1000.0 / period, 1000.0 / np.where(fits_one_slr, period, plain)


def quick_clock(device: Device, resources: dict, widest_pe_fifo_bits):
    """The clock `systolic export` can be expected to reach, per configuration (arrays of each
    resource's total and of the widest PE-to-PE FIFO), solving no floorplan: a tuner's estimate. The
    export's rule (solve.py export_floorplan): it floorplans every design some cap up to MAX_CAP fits,
    at DEFAULT_CAP or the smallest cap that works, so the estimate is the floorplanned one, with the SLR
    utilisation at its lower bound (the device utilisation: each resource's total over what all the
    SLRs offer) and no crossings over capacity; the target clock unless the bound passes SLR_KNEE.
    Where the bound passes MAX_CAP no floorplan exists and the design will not route: 0 MHz, as
    `estimate_clock` says. Never below the solved estimate (a floorplan may need more than the bound:
    PEs come whole, and block RAM and crossings constrain the split too)."""
    util = np.max([np.asarray(resources[r], dtype=float) / sum(s.resources[r] for s in device.slrs)
                   for r in RESOURCE_NAMES], axis=0)
    floorplanned, _ = clock_rule(device.clock_mhz, util, 0.0, util, widest_pe_fifo_bits, True)
    return np.where(floorplans_within_max_cap(util), floorplanned, 0.0)


def estimate_clock(descriptor: dict, values: dict[str, int], device: Device, *, cap: float = DEFAULT_CAP,
                   plan: Floorplan | None = None, net: Netlist | None = None, quick: bool = False) -> ClockEstimate:
    """The two clock estimates of one configuration (`values`: every parameter, packing included).
    Floorplans it unless `plan` is given, as the export does (solve.py export_floorplan: within `cap`,
    else at the smallest cap that works up to MAX_CAP). `quick` (for a tuner's inner loop): no
    floorplan, the SLR utilisation taken as its lower bound (the device utilisation) and no crossings:
    never below the solved estimates (optimistic where the floorplan is the limit); `quick_clock` is
    its floorplanned estimate over arrays."""
    net = net or build_netlist(descriptor, values, device)
    util, dev_resource = _device_utilisation(net, device)
    if plan is None and not quick:
        try:
            plan = export_floorplan(net, device, cap=cap)
        except FloorplanError:
            plan = None  # no floorplan up to MAX_CAP: the design does not fit the SLRs
    unroutable = plan is None and (not quick or not floorplans_within_max_cap(util))
    widest = max((f.width_bits for f in net.fifos if f.source[0] == "PE" and f.target[0] == "PE"), default=0)
    fits_one = all(net.total(r) <= cap * max(s.resources[r] for s in device.slrs) for r in RESOURCE_NAMES)
    if plan is not None:
        slr, slr_resource, slr_util = plan.most_utilised()
        where = f"SLR{slr} {slr_resource}"
        ratio = max((b.wires / b.capacity for b in plan.boundaries), default=0.0)
    elif not unroutable:
        where, slr_util, ratio = f"every SLR's {dev_resource} (a bound: no floorplan solved)", util, 0.0
    else:
        why = "no floorplan fits the SLRs' resources and crossing capacity: the design will not route"
        return ClockEstimate(0.0, why, 0.0, why, None, util, widest)
    fp, plain = (float(v) for v in clock_rule(device.clock_mhz, slr_util, ratio, util, widest, fits_one))
    if slr_util > SLR_KNEE and SLOPE_SLR * (slr_util - SLR_KNEE) >= ratio - 1:
        fp_reason = f"{where} at {slr_util:.0%} (above {SLR_KNEE:.0%})"
    elif ratio > 1:
        fp_reason = f"crossings at {ratio:.0%} of a boundary's capacity"
    else:
        fp_reason = (f"the target clock: {where} at {slr_util:.0%} (within {SLR_KNEE:.0%}), "
                     f"crossings at {ratio:.0%} of capacity")
    if fits_one:
        plain_reason = "fits one SLR: placed in one die, as floorplanned"
    else:
        plain_reason = (f"spans SLRs with unregistered crossings: {dev_resource} at {util:.0%} of the "
                        f"device, widest PE-to-PE FIFO {widest} bits")
    return ClockEstimate(fp, fp_reason, plain, plain_reason, plan, util, widest)
