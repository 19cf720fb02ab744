"""A design + a configuration -> an exported project directory, AutoSA's layout:

    design.json                 descriptor, parameter values (packing included), platform, DRAM layout
                                (per port: layout, words), AXI settings, host repacking estimate, model report
    src/kernel_kernel.cpp, .h   the HLS kernel (hls_kernel.kernel_sources)
    src/kernel_host.cpp         XRT host program; src/kernel_tb.cpp, the HLS testbench (host.py)
    Makefile, connectivity.cfg, hls_script.tcl (build_files.py), README.md (readme.py)

The configuration is validated by the models first (constraint violations and, unless allowed, a
configuration over the device budget are errors). Every file is generated in memory and written to a
folder beside the target that then takes its place in one step (swap.py), so a failure or an
interrupt leaves the old project or the new one, never a mix; an existing non-empty directory is only
touched with `force`, and then only the files listed above are replaced.
"""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.export.build_files import DEFAULT_PLATFORM, connectivity_cfg, hls_script, makefile
from engine.export.memory_banks import port_memories
from engine.export.dram_layout import port_layout
from engine.export.hls_kernel import kernel_export
from engine.export.host import host_program, hls_testbench
from engine.export.interface import kernel_interface
from engine.export.readme import design_readme
from engine.export.swap import existing_ancestor_problem, write_folder
from engine.errors import EngineError
from engine.models.device import Device, load_device
from engine.models.dram import DEFAULT_LAYOUT, AxiSettings
from engine.models.host_time import host_repack
from engine.models.evaluate import PerformanceModel
from engine.models.report import as_int_params, evaluate_configuration

_SAFE = re.compile(r"[A-Za-z0-9._+-]+")
_PLATFORM = re.compile(r"[A-Za-z0-9_.+-]+|/[A-Za-z0-9_./+-]+\.xpfm")


def safe_directory_name(text: str) -> str:
    """A name make, v++ and Vitis HLS accept: letters, digits and `._+-`, other runs become `_`."""
    name = re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._-")
    return name or "export"


def _check_output(out_dir: Path, force: bool) -> None:
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


def project_files(descriptor: dict, values: dict[str, int], report: dict, *, platform: str,
                  over_budget: bool, layout: str = DEFAULT_LAYOUT, axi: AxiSettings = AxiSettings(),
                  device: Device | None = None) -> dict[str, str]:
    """Relative path -> text of every file of the project; `device` (the U250 unless given) decides
    the memory each port is linked to and the part of the HLS script."""
    device = device or load_device()
    interface = kernel_interface(descriptor, values)
    sources, dram = kernel_export(descriptor, values, report=report, layout=layout, axi=axi)
    clock = report["device"]["clock_mhz"]
    repack = host_repack(dram)
    design_json = {"descriptor": descriptor, "values": values, "platform": platform, "over_budget": over_budget,
                   "layout": layout, "axi": dataclasses.asdict(axi), "dram": dram, "host_repack": repack,
                   "report": report}
    return {
        "design.json": json.dumps(design_json, indent=2) + "\n",
        "src/kernel_kernel.cpp": sources["kernel_kernel.cpp"],
        "src/kernel_kernel.h": sources["kernel_kernel.h"],
        "src/kernel_host.cpp": host_program(descriptor, interface, dram),
        "src/kernel_tb.cpp": hls_testbench(descriptor, interface, dram),
        "Makefile": makefile(descriptor, interface, platform, clock_mhz=clock),
        "connectivity.cfg": connectivity_cfg(descriptor, interface, port_memories(device, interface, dram)),
        "hls_script.tcl": hls_script(descriptor, interface, clock, device.part),
        "README.md": design_readme(descriptor, values, report, platform=platform, over_budget=over_budget,
                                   interface=interface, dram={"layout": layout, "axi": axi, "ports": dram,
                                                              "host_repack": repack}),
    }


def export_project(space: DesignSpace, design: Design, values: dict[str, int], out_dir: str | Path, *,
                   device: Device | None = None, platform: str | None = None, force: bool = False,
                   allow_over_budget: bool = False, layout: str = DEFAULT_LAYOUT) -> Path:
    """Write the project of `design` at tuning parameters `values` (packing factors inferred unless
    given) to `out_dir` with its DRAM in `layout` (engine/export/dram_layout.py); returns its path."""
    out_dir = Path(out_dir)
    port_layout(layout, "in")  # an unknown layout: one line, nothing written
    _check_output(out_dir, force)
    device = device or load_device()
    platform = platform or device.platform or DEFAULT_PLATFORM
    if not _PLATFORM.fullmatch(platform):
        raise EngineError(f"platform '{platform}' is neither a platform name nor the path of an .xpfm file")
    model = PerformanceModel(space, design, device, layout=layout)
    report = evaluate_configuration(model, as_int_params(values))
    over_budget = not report["fits"]
    if over_budget and not allow_over_budget:
        raise EngineError(f"{design.id} is over the device budget with these parameters ("
                          + "; ".join(report["violations"]) + "); export it anyway with --allow-over-budget")
    descriptor = build_descriptor(space, design, model.architecture, model.pass_architectures)
    try:
        files = project_files(descriptor, dict(report["params"]), report, platform=platform,
                              over_budget=over_budget, layout=layout, axi=device.axi, device=device)
        write_folder(files, out_dir)
    except OSError as exc:
        raise EngineError(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    return out_dir
