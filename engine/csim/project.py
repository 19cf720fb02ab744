"""An exported project folder -> what a C simulation needs from it: the descriptor and values of
design.json (read through engine/csim/build.project_file, which refuses symlinks out of the export),
the harness source, and the verdict of a finished harness run."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from engine.csim.build import CsimError, project_file
from engine.csim.harness import harness_source
from engine.export.interface import kernel_interface


def read_project(project_dir: Path) -> tuple[dict, dict, dict]:
    """(descriptor, values, the whole design.json) of an export; CsimError when it is not one."""
    if not project_dir.is_dir():
        raise CsimError(f"{project_dir} is not a directory")
    if not (project_dir / "design.json").is_file():
        raise CsimError(f"{project_dir} has no design.json: not an exported project")
    design_file = project_file(project_dir, "design.json")
    for name in ("kernel_kernel.cpp", "kernel_kernel.h"):
        project_file(project_dir, f"src/{name}")
    try:
        design = json.loads(design_file.read_text())
        descriptor = design["descriptor"]
        if not isinstance(descriptor, dict) or not isinstance(design["values"], dict):
            raise TypeError("descriptor and values must be objects")
        return descriptor, {k: int(v) for k, v in design["values"].items()}, design
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise CsimError(f"{design_file} is not a design file ({exc.__class__.__name__}: {exc})") from None


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
