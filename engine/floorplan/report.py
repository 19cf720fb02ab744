"""Floorplan + clock estimate -> the text table and the JSON object `systolic floorplan` prints (and
the exporter can write into design.json): per SLR its instances and utilisation, per boundary the
crossing wires against capacity, and the two clock estimates with what limits them."""
from __future__ import annotations

from collections import Counter

from engine.floorplan.clock import ClockEstimate
from engine.floorplan.solve import Floorplan
from engine.models.device import RESOURCE_NAMES


def instance_name(node: tuple) -> str:
    """`PE(3,4)`, `A_L2_in(2)`, `A_L3_in`: a process instance as the tables and constraints name it."""
    module, index = node
    return f"{module}({','.join(map(str, index))})" if index else module


def floorplan_json(plan: Floorplan, clock: ClockEstimate | None = None) -> dict:
    data = {
        "cap": plan.cap, "cut_along": plan.cut_along, "solve_seconds": round(plan.seconds, 3),
        "crossing_wires": plan.crossing_wires,
        "slrs": [{"slr": s, "instances": sorted(instance_name(n) for n in plan.instances(s)),
                  "used": {r: round(plan.used[s][r], 1) for r in RESOURCE_NAMES},
                  "available": dict(plan.available[s]),
                  "utilisation": {r: round(u, 4) for r, u in plan.utilisation(s).items()}}
                 for s in range(len(plan.used))],
        "boundaries": [{"between": [b.below, b.below + 1], "wires": b.wires, "fifos": b.fifos,
                        "capacity": b.capacity} for b in plan.boundaries],
    }
    if clock is not None:
        data["clock"] = {"floorplanned_mhz": round(clock.floorplanned_mhz, 1),
                         "floorplanned_limit": clock.floorplanned_reason,
                         "unfloorplanned_mhz": round(clock.unfloorplanned_mhz, 1),
                         "unfloorplanned_limit": clock.unfloorplanned_reason, "note": clock.note}
    return data


def _summary(nodes: list[tuple]) -> str:
    """Instances per module, e.g. `PE x52, A_L2_in x4, A_L3_in`."""
    counts = Counter(n[0] for n in nodes)
    return ", ".join(f"{m} x{c}" if c > 1 else m for m, c in sorted(counts.items(), key=lambda t: (t[0] != "PE", t[0])))


def format_floorplan(plan: Floorplan, clock: ClockEstimate | None = None) -> str:
    lines = [f"floorplan: {len(plan.slr_of)} instances on {len(plan.used)} SLRs, cap {plan.cap:.0%} of each SLR's "
             f"resources, PE array cut along {plan.cut_along or '-'}; solved in {plan.seconds:.1f} s",
             "SLR  " + "".join(f"{r:>9}" for r in RESOURCE_NAMES) + "  instances"]
    for s in range(len(plan.used)):
        u = plan.utilisation(s)
        lines.append(f"{s:<5}" + "".join(f"{u[r]:>9.1%}" for r in RESOURCE_NAMES) + f"  {_summary(plan.instances(s))}")
    lines.append("boundary   wires / capacity   FIFOs")
    for b in plan.boundaries:
        lines.append(f"SLR{b.below}-{b.below + 1}   {b.wires:>6} / {b.capacity:<8}   {b.fifos}")
    lines.append(f"crossing wires x boundaries: {plan.crossing_wires}")
    if clock is not None:
        lines.append(f"estimated clock, floorplanned:   {clock.floorplanned_mhz:5.0f} MHz  "
                     f"({clock.floorplanned_reason})")
        lines.append(f"estimated clock, unfloorplanned: {clock.unfloorplanned_mhz:5.0f} MHz  "
                     f"({clock.unfloorplanned_reason})")
        lines.append(f"({clock.note})")
    return "\n".join(lines)
