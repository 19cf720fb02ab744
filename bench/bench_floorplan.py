"""AutoSA's four large U250 arrays floorplanned and exported: the issue's Must-show table.

    python bench/bench_floorplan.py [--only NAME] [--no-export]

For MM fp32 13x16x8, MTTKRP 16x8x8, TTMc 16x8x8 and MM int8 (the configurations of
tests/engine/floorplan/test_autosa_configurations.py), each floorplanned as `systolic export` does it
(engine/floorplan/solve.py export_floorplan: within 0.7, else at the smallest cap that works): the
arithmetic bound on any floorplan's cap (the design's most used resource over what all SLRs offer the
kernel: above 0.7 no split into SLRs is within the default cap) and the cap the export got, its solve
time (the smallest cap's search included), each SLR's most used resource, the wires through each
boundary against capacity, the clock estimated for a plain and for a floorplanned build and the one
`systolic search --clock estimated` takes for it, solving nothing (engine/floorplan/clock.py: a rule
calibrated on published builds, not Vivado), and, unless --no-export, the exported project's files
generated from that floorplan
(engine/export/project.py project_files): how many process calls of kernel0 floorplan.tcl names (each
checked against the calls parsed from the generated C++) and how many FIFOs cross SLRs.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine" / "floorplan"))

from engine.errors import DesignError  # noqa: E402
from engine.export.build_files import DEFAULT_PLATFORM  # noqa: E402
from engine.export.constraints import constraint_names  # noqa: E402
from engine.export.project import ExportFloorplan, project_files  # noqa: E402
from engine.floorplan import estimate_clock, export_floorplan  # noqa: E402
from engine.floorplan.solve import least_cap  # noqa: E402
from engine.models.device import RESOURCE_NAMES  # noqa: E402
from engine.floorplan.pipeline import crossing_pipelines  # noqa: E402
from engine.models.report import evaluate_configuration  # noqa: E402
from engine.resources import KERNELS  # noqa: E402
from test_autosa_configurations import CONFIGURATIONS, configuration_netlist  # noqa: E402


def kernel_calls(cpp: str) -> list[str]:
    """`F(0, 1, streams...)` in kernel0's dataflow region -> `F_0_1_U0`, the name Vitis HLS gives it."""
    region = cpp[cpp.index("#pragma HLS dataflow"):]
    region = region[:region.index("\n}")]
    names = []
    for function, args in re.findall(r"^\s*(\w+)\(([^;]*)\);$", region, re.M):
        index = []
        for arg in (a.strip() for a in args.split(",")):
            if not arg.isdigit():
                break
            index.append(arg)
        names.append("_".join([function, *index]) + "_U0")
    return names


def run(name: str, export: bool) -> dict:
    model, params, values, descriptor, net, device, _ = configuration_netlist(
        name, str(KERNELS / f"{CONFIGURATIONS[name][0]}.c"))
    start = time.perf_counter()
    plan = export_floorplan(net, device)
    seconds = time.perf_counter() - start
    clock = estimate_clock(descriptor, values, device, cap=plan.cap, plan=plan, net=net)
    search = estimate_clock(descriptor, values, device, net=net, quick=True)
    offered = {r: sum(s.resources[r] for s in device.slrs) for r in RESOURCE_NAMES}
    need = max(RESOURCE_NAMES, key=lambda r: net.total(r) / offered[r])
    bound = f"{need} {net.total(need):,.0f}/{offered[need]:,} {least_cap(net, device):.3f}"
    row = {"name": name, "pes": sum(1 for k in net.kinds.values() if k == "pe"), "instances": len(net.instances),
           "bound": bound, "cap": plan.cap, "seconds": seconds, "search": search.floorplanned_mhz,
           "slrs": [max(plan.utilisation(s).items(), key=lambda t: t[1]) for s in range(len(plan.used))],
           "wires": [b.wires for b in plan.boundaries], "capacity": plan.boundaries[0].capacity,
           "plain": clock.unfloorplanned_mhz, "floorplanned": clock.floorplanned_mhz}
    if export:
        try:
            report = evaluate_configuration(model, params)
        except DesignError as error:  # int8's SIMD 64 is above the models' SIMD bound (8): floorplanned only
            row["named"], row["crossing"] = "not exported", str(error).split(": ", 1)[-1]
            return row
        fp = ExportFloorplan(plan, clock, crossing_pipelines(net, plan))
        files = project_files(descriptor, dict(report["params"]), report, platform=DEFAULT_PLATFORM,
                              over_budget=not report["fits"], floorplan=fp)
        placed = [n for names in constraint_names(files["floorplan.tcl"]).values() for n in names]
        calls = kernel_calls(files["src/kernel_kernel.cpp"])
        processes = [n for n in placed if n.endswith("_U0")]
        row["named"] = f"{len(processes)}/{len(calls)}" + ("" if sorted(processes) == sorted(calls) else " MISMATCH")
        row["crossing"] = len(placed) - len(processes)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=list(CONFIGURATIONS))
    parser.add_argument("--no-export", action="store_true", help="floorplan only, no project files")
    args = parser.parse_args()
    print(f"{'configuration':15} {'PEs':>4} {'inst':>5} {'bound: need/SLRs offer':24} {'cap':>4} {'solve s':>7}  "
          f"{'per SLR: most used resource':47} {'boundary wires':20} {'plain':>5} {'fp':>4} {'search':>6}"
          + ("  named/calls  crossing FIFOs" if not args.no_export else ""))
    for name in [args.only] if args.only else CONFIGURATIONS:
        r = run(name, not args.no_export)
        slrs = " ".join(f"{res} {share:.0%}" for res, share in r["slrs"])
        wires = "/".join(map(str, r["wires"])) + f" of {r['capacity']}"
        print(f"{r['name']:15} {r['pes']:>4} {r['instances']:>5} {r['bound']:24} {r['cap']:>4} {r['seconds']:>7.1f}  "
              f"{slrs:47} {wires:20} {r['plain']:>5.0f} {r['floorplanned']:>4.0f} {r['search']:>6.0f}"
              + (f"  {r['named']:>11}  {r['crossing']!s:>14}" if "named" in r else ""), flush=True)
    print("clocks: an estimate from a rule calibrated on published builds (docs/floorplan.md), not a Vivado result")


if __name__ == "__main__":
    main()
