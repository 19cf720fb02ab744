"""A design + a configuration -> an exported project directory, AutoSA's layout:

    design.json                 descriptor, parameter values (packing included), platform, DRAM layout
                                (per port: layout, words), AXI settings, host repacking estimate, model report
    src/kernel_kernel.cpp, .h   the HLS kernel (hls_kernel.kernel_sources)
    src/kernel_host.cpp         XRT host program; src/kernel_tb.cpp, the HLS testbench (host.py)
    Makefile, connectivity.cfg, hls_script.tcl (build_files.py), README.md (readme.py)
    floorplan.tcl               with a floorplan (`floorplan="auto"`): every process instance in the
                                pblock of its SLR (constraints.py), run by the Makefile's v++ link

The configuration is validated by the models first (constraint violations and, unless allowed, a
configuration over the device budget are errors). Every file is generated in memory, written to a
staging folder inside the target and renamed over its place file by file (swap.py): a failure while
writing or renaming leaves the old project; an existing non-empty directory is only touched with `force`, and
then only the files listed above are replaced -- other files, folders, owners and modes stay.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.export.build_files import DEFAULT_PLATFORM, connectivity_cfg, hls_script, makefile
from engine.export.constraints import floorplan_tcl, placements
from engine.export.memory_banks import port_memories
from engine.export.dram_layout import port_layout
from engine.export.hls_kernel import crossing_streams, kernel_export, kernel_processes
from engine.export.host import host_program, hls_testbench
from engine.export.interface import kernel_interface
from engine.export.readme import design_readme
from engine.export.swap import existing_ancestor_problem, write_folder
from engine.errors import EngineError
from engine.floorplan import (ClockEstimate, DEFAULT_CAP, Floorplan, FloorplanError, build_netlist, estimate_clock,
                              export_floorplan, floorplan_json)
from engine.floorplan.pipeline import crossing_pipelines
from engine.models.device import Device, load_device
from engine.models.dram import DEFAULT_LAYOUT, AxiSettings
from engine.models.host_time import host_repack
from engine.models.cache import shared_model
from engine.models.report import as_int_params, evaluate_configuration

FLOORPLAN_MODES = ("auto", "none")
DEFAULT_FLOORPLAN = "auto"  # the library's and `systolic export`'s default
_SAFE = re.compile(r"[A-Za-z0-9._+-]+")
_PLATFORM = re.compile(r"[A-Za-z0-9_.+-]+|/[A-Za-z0-9_./+-]+\.xpfm")


def safe_directory_name(text: str) -> str:
    """A name make, v++ and Vitis HLS accept: letters, digits and `._+-`, other runs become `_`."""
    name = re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._-")
    return name or "export"


def check_output(out_dir: Path, force: bool) -> None:
    """Refuse an output folder the export cannot or may not write (before any work)."""
    name = out_dir.resolve().name
    if not _SAFE.fullmatch(name) or name.startswith("-"):
        raise EngineError(f"output directory name '{name}' has characters make or Vitis cannot handle; "
                          f"use letters, digits and ._+- (e.g. '{safe_directory_name(name)}')")
    if out_dir.exists() and not out_dir.is_dir():
        raise EngineError(f"{out_dir} exists and is not a directory")
    problem = existing_ancestor_problem(out_dir)
    if problem:
        raise EngineError(f"cannot create {out_dir}: {problem}")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise EngineError(f"{out_dir} exists and is not empty; use --force to replace the exported files in it")


@dataclass(frozen=True)
class ExportFloorplan:
    """The floorplan an export applies: the assignment, the clock estimate that read it, and the
    pipeline of every FIFO it puts across SLRs ((source, target, array) -> CrossingPipeline)."""
    plan: Floorplan
    clock: ClockEstimate
    crossings: dict


def solve_floorplan(descriptor: dict, values: dict[str, int], device: Device, *, cap: float = DEFAULT_CAP,
                    relax: bool = False) -> ExportFloorplan:
    """Floorplan one configuration for its export by the floorplan's rule (engine/floorplan/solve.py
    export_floorplan, which the search's estimated clock reads too): within `cap`, or with `relax` at
    the smallest cap that works; FloorplanError (naming the smallest cap that works) otherwise."""
    net = build_netlist(descriptor, values, device)
    plan = export_floorplan(net, device, cap=cap, relax=relax)
    return ExportFloorplan(plan, estimate_clock(descriptor, values, device, cap=plan.cap, plan=plan, net=net),
                           crossing_pipelines(net, plan))


def floorplan_summary(fp: ExportFloorplan, streams: dict) -> dict:
    """design.json's `floorplan`: the assignment, utilisation, boundaries and clocks (report.py) and the
    pipelined FIFOs by stream name."""
    return {**floorplan_json(fp.plan, fp.clock), "constraints": "floorplan.tcl",
            "crossing_fifos": [{"stream": name, "from_slr": p.source_slr, "to_slr": p.target_slr,
                                "latency": p.latency, "extra_depth": p.extra_depth} for name, p in streams.items()]}


def project_files(descriptor: dict, values: dict[str, int], report: dict, *, platform: str,
                  over_budget: bool, layout: str = DEFAULT_LAYOUT, axi: AxiSettings = AxiSettings(),
                  floorplan: ExportFloorplan | None = None, device: Device | None = None,
                  hbm_channels: dict[str, int] | None = None) -> dict[str, str]:
    """Relative path -> text of every file of the project (floorplan.tcl only with a floorplan);
    `device` (the U250 unless given) decides the memory each port is linked to and the part of the
    HLS script; `hbm_channels` (array -> n, AutoSA's hbm_<array>[n]) the least pseudo-channels of
    an array's port on an HBM board (memory_banks.port_memories)."""
    device = device or load_device()
    interface = kernel_interface(descriptor, values)
    crossings = floorplan.crossings if floorplan is not None else None
    sources, dram = kernel_export(descriptor, values, report=report, layout=layout, axi=axi, crossings=crossings)
    clock = report["device"]["clock_mhz"]
    repack = host_repack(dram)
    design_json = {"descriptor": descriptor, "values": values, "platform": platform, "over_budget": over_budget,
                   "layout": layout, "axi": dataclasses.asdict(axi), "dram": dram, "host_repack": repack,
                   "report": report}
    files = {}
    summary = None
    if floorplan is not None:
        streams = crossing_streams(descriptor, values, floorplan.crossings)
        cells = placements(kernel_processes(descriptor, values, layout=layout), floorplan.plan.slr_of, streams)
        files["floorplan.tcl"] = floorplan_tcl(cells, f"{descriptor['kernel']['name']}, design "
                                                      f"{descriptor['design']['id']}")
        summary = design_json["floorplan"] = floorplan_summary(floorplan, streams)
    return {
        "design.json": json.dumps(design_json, indent=2) + "\n",
        "src/kernel_kernel.cpp": sources["kernel_kernel.cpp"],
        "src/kernel_kernel.h": sources["kernel_kernel.h"],
        "src/kernel_host.cpp": host_program(descriptor, interface, dram),
        "src/kernel_tb.cpp": hls_testbench(descriptor, interface, dram),
        "Makefile": makefile(descriptor, interface, platform, clock_mhz=clock,
                             constraints="floorplan.tcl" if floorplan is not None else None),
        "connectivity.cfg": connectivity_cfg(descriptor, interface, port_memories(device, interface, dram, hbm_channels)),
        "hls_script.tcl": hls_script(descriptor, interface, clock, device.part),
        "README.md": design_readme(descriptor, values, report, platform=platform, over_budget=over_budget,
                                   interface=interface, dram={"layout": layout, "axi": axi, "ports": dram,
                                                              "host_repack": repack}, floorplan=summary),
        **files,
    }


def export_project(space: DesignSpace, design: Design, values: dict[str, int], out_dir: str | Path, *,
                   device: Device | None = None, platform: str | None = None, force: bool = False,
                   allow_over_budget: bool = False, layout: str = DEFAULT_LAYOUT, floorplan: str = DEFAULT_FLOORPLAN,
                   cap: float | None = None, notes: list[str] | None = None,
                   hbm_channels: dict[str, int] | None = None) -> Path:
    """Write the project of `design` at tuning parameters `values` (packing factors inferred unless
    given) to `out_dir` with its DRAM in `layout` (engine/export/dram_layout.py); returns its path.
    `floorplan="auto"` (the default, as `systolic export`'s) floorplans it on the device's SLRs within
    `cap` (floorplan.tcl, deeper crossing FIFOs); "none" writes nothing floorplan-related. A `cap` given
    that no floorplan meets raises FloorplanError (naming the smallest cap that works) before anything is
    written; without one the default cap is tried first, then the smallest cap that works (a design
    the tuner fills to the device budget rarely splits evenly enough over the SLRs), said in `notes`.
    `hbm_channels`: AutoSA's hbm_<array>[n] entries (project_files)."""
    if floorplan not in FLOORPLAN_MODES:
        raise EngineError(f"--floorplan {floorplan}: expected one of {', '.join(FLOORPLAN_MODES)}")
    out_dir = Path(out_dir)
    port_layout(layout, "in")  # an unknown layout: one line, nothing written
    check_output(out_dir, force)
    device = device or load_device()
    platform = platform or device.platform or DEFAULT_PLATFORM
    if not _PLATFORM.fullmatch(platform):
        raise EngineError(f"platform '{platform}' is neither a platform name nor the path of an .xpfm file")
    model = shared_model(space, design, device, layout=layout)  # built once per process per design
    report = evaluate_configuration(model, as_int_params(values))
    over_budget = not report["fits"]
    if over_budget and not allow_over_budget:
        raise EngineError(f"{design.id} is over the device budget with these parameters ("
                          + "; ".join(report["violations"]) + "); export it anyway with --allow-over-budget")
    descriptor = build_descriptor(space, design, model.architecture, model.pass_architectures)
    values = dict(report["params"])
    plan = None
    if floorplan == "auto":
        try:
            plan = solve_floorplan(descriptor, values, device, cap=DEFAULT_CAP if cap is None else cap,
                                   relax=cap is None)
        except FloorplanError as exc:
            raise FloorplanError(f"{exc} (--floorplan none exports it without a floorplan)",
                                 exc.smallest_cap) from None
        if cap is None and plan.plan.cap != DEFAULT_CAP and notes is not None:
            notes.append(f"no floorplan keeps every SLR within the default cap {DEFAULT_CAP:g}: floorplanned "
                         f"at {plan.plan.cap:g}, the smallest that works (--cap chooses, --floorplan none skips it)")
    try:
        files = project_files(descriptor, values, report, platform=platform, over_budget=over_budget,
                              layout=layout, axi=device.axi, floorplan=plan, device=device,
                              hbm_channels=hbm_channels)
        write_folder(files, out_dir)
    except OSError as exc:
        raise EngineError(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    return out_dir
