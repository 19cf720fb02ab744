"""Design descriptor + parameter values + device -> a floorplan (every process instance in an SLR) and
the clock a floorplanned and a plain build can be expected to reach (docs/floorplan.md).

For the exporter and `systolic model`:
- `floorplan_design(descriptor, values, device, cap=0.7) -> Floorplan` (`slr_of[(module, index)]`;
  `FloorplanError` naming the smallest cap when the cap has none);
- `export_floorplan(netlist, device, cap=0.7, relax=True) -> Floorplan`: the export's rule (within the
  cap, else at the smallest cap that works up to MAX_CAP), which every clock estimate reads too;
- `estimate_clock(descriptor, values, device, cap=0.7, plan=None) -> ClockEstimate`;
- `crossing_fifos(netlist, plan)`: the FIFOs between two SLRs (to pipeline), with both SLRs;
- `floorplan_json(plan, clock)` and `instance_name(node)` (`PE(3,4)`, `A_L2_in(2)`, `A_L3_in`).
"""
from __future__ import annotations

from engine.floorplan.clock import ClockEstimate, estimate_clock
from engine.floorplan.netlist import Netlist, build_netlist
from engine.floorplan.report import floorplan_json, format_floorplan, instance_name
from engine.floorplan.solve import (DEFAULT_CAP, MAX_CAP, Floorplan, FloorplanError, crossing_fifos,
                                    export_floorplan, floorplan)
from engine.models.device import Device

__all__ = ["ClockEstimate", "DEFAULT_CAP", "MAX_CAP", "Floorplan", "FloorplanError", "Netlist", "build_netlist",
           "crossing_fifos", "estimate_clock", "export_floorplan", "floorplan", "floorplan_design", "floorplan_json",
           "format_floorplan", "instance_name"]


def floorplan_design(descriptor: dict, values: dict[str, int], device: Device, *, cap: float = DEFAULT_CAP) -> Floorplan:
    """The floorplan of one configuration (`values`: every parameter, data-packing factors included)."""
    return floorplan(build_netlist(descriptor, values, device), device, cap=cap)
