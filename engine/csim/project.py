"""An exported project folder -> what a C simulation needs from it: the descriptor and values of
design.json (located by engine/csim/build.project_file, which refuses symlinks out of the export, and
read by engine/validation.read_json: at most 16 MB, UTF-8, nesting at most 64 deep),
checked against the kernel's DRAM loops (`check_dram_words`), the harness source, and the verdict of
a finished harness run."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from engine.csim.build import CsimError, project_file
from engine.csim.harness import harness_source
from engine.export.interface import kernel_interface
from engine.validation import read_json, read_text


def read_project(project_dir: Path) -> tuple[dict, dict, dict]:
    """(descriptor, values, the whole design.json) of an export; CsimError when it is not one."""
    if not project_dir.is_dir():
        raise CsimError(f"{project_dir} is not a directory")
    if not (project_dir / "design.json").is_file():
        raise CsimError(f"{project_dir} has no design.json: not an exported project")
    design_file = project_file(project_dir, "design.json")
    for name in ("kernel_kernel.cpp", "kernel_kernel.h"):
        project_file(project_dir, f"src/{name}")
    design = read_json(design_file, "design file", error=CsimError)
    try:
        descriptor = design["descriptor"]
        if not isinstance(descriptor, dict) or not isinstance(design["values"], dict):
            raise TypeError("descriptor and values must be objects")
        values = {k: int(v) for k, v in design["values"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CsimError(f"{design_file} is not a design file ({exc.__class__.__name__}: {exc})") from None
    check_dram_words(project_dir, design)
    return descriptor, values, design


_DEPTH = re.compile(r"#pragma HLS INTERFACE m_axi port=(\w+)\b.*\bdepth=(\d+)")
_WORDS = re.compile(r"#define (\w+)_DRAM_WORDS (\d+)L")


def check_dram_words(project_dir: Path, design: dict) -> None:
    """The kernel's DRAM loops against the host's packing, before anything runs: for every port of
    design.json's "dram" (exports before the DRAM layouts have none), the words of its buffer must
    be the m_axi depth of kernel_kernel.cpp and the count kernel_kernel.h gives the host, and the
    kernel must still access the port as exported. CsimError (one line) otherwise. A port the kernel
    declares no m_axi interface for (a kernel written by hand) is left to the values check."""
    ports = design.get("dram")
    if not isinstance(ports, dict):
        return
    cpp = project_file(project_dir, "src/kernel_kernel.cpp")
    header = project_file(project_dir, "src/kernel_kernel.h")
    code, head = read_text(cpp, "kernel source", error=CsimError), read_text(header, "kernel header", error=CsimError)
    depths = {m.group(1): (int(m.group(2)), code.count("\n", 0, m.start()) + 1) for m in _DEPTH.finditer(code)}
    host = {m.group(1): int(m.group(2)) for m in _WORDS.finditer(head)}
    for name, port in ports.items():
        words, layout = port.get("words"), port.get("layout")
        if name not in depths:  # a kernel that declares no DRAM interface here (written by hand): the values judge it
            continue
        depth, line = depths[name]
        where = f"{cpp}:{line}"
        if depth != words:
            raise CsimError(f"{where}: port {name}: the kernel's m_axi depth is {depth} words but the host packs "
                            f"{words} ({layout} layout, design.json); re-export the design")
        if host.get(name) != words:
            raise CsimError(f"{header}: port {name}: {name}_DRAM_WORDS is {host.get(name)} but design.json says "
                            f"{words} words ({layout} layout); re-export the design")
        access = port.get("access")
        if access and access not in code:
            raise CsimError(f"{cpp}: port {name}: the kernel no longer accesses {access} ({layout} layout, "
                            f"what the host's packing assumes); re-export the design")


def harness_for(descriptor: dict, values: dict) -> str:
    try:
        return harness_source(descriptor, kernel_interface(descriptor, values))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CsimError(f"design.json does not describe an exported design ({exc.__class__.__name__}: {exc})") from None


def leftover_warning(stderr: str) -> str | None:
    """Vitis's hls::stream warns about words left in a stream when it is destroyed."""
    return next((l.strip() for l in stderr.splitlines() if "leftover" in l.lower()), None)


def verdict(ran: subprocess.CompletedProcess) -> tuple[str, str | None]:
    """(the PASS / FAIL line, the mismatching element or None) of a finished harness run."""
    lines = [l for l in ran.stdout.splitlines() if l.startswith(("PASS", "FAIL"))]
    leftover = leftover_warning(ran.stderr)
    if ran.returncode == 0 and lines and lines[-1].startswith("PASS"):
        if leftover:
            return f"FAIL: words left in FIFOs after kernel0: {leftover}", None
        return lines[-1], None
    if lines:
        summary = lines[-1]
    else:
        errors = [l for l in ran.stderr.splitlines() if l.startswith("ERROR")]
        summary = "FAIL: " + (errors[0].removeprefix("ERROR: ") if errors else f"exit status {ran.returncode}")
    return summary, summary.removeprefix("FAIL: ") if " expected " in summary else None
