"""Exported project directory -> `CsimResult`: the kernel compiled with g++ next to a generated test
harness (engine/csim/harness.py), run on random inputs and compared with the golden loop nest.

Without Xilinx tools the bundled engine/csim/include/hls_stream.h stands in for Vitis's; when
`$XILINX_HLS/include/hls_stream.h` exists, the Vitis headers are used instead. A failing simulation
is a result (passed False, the first mismatching element, the command to reproduce it), never an
exception; a directory that is not an exported project raises `CsimError`.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from engine.export.interface import kernel_interface
from engine.csim.harness import harness_source
from engine.errors import EngineError

SHIM_INCLUDE = Path(__file__).parent / "include"
RUN_TIMEOUT_S = 300


class CsimError(EngineError):
    """The directory is not an exported project, or no C++ compiler is available."""


@dataclass(frozen=True)
class CsimResult:
    passed: bool
    summary: str          # one line: "PASS: ..." or "FAIL: ..."
    command: str          # the shell command that rebuilds and reruns the simulation
    mismatch: str | None  # the first mismatching element, e.g. "C[3][17] expected 12.5 got 0"
    log: str              # compiler and program output


def include_dir() -> Path:
    xilinx = os.environ.get("XILINX_HLS")
    if xilinx and (Path(xilinx) / "include" / "hls_stream.h").is_file():
        return Path(xilinx) / "include"
    return SHIM_INCLUDE


def _read_project(project_dir: Path) -> tuple[dict, dict]:
    design_file = project_dir / "design.json"
    if not project_dir.is_dir():
        raise CsimError(f"{project_dir} is not a directory")
    if not design_file.is_file():
        raise CsimError(f"{project_dir} has no design.json: not an exported project")
    for name in ("kernel_kernel.cpp", "kernel_kernel.h"):
        if not (project_dir / "src" / name).is_file():
            raise CsimError(f"{project_dir} has no src/{name}: not an exported project")
    try:
        design = json.loads(design_file.read_text())
        return design["descriptor"], {k: int(v) for k, v in design["values"].items()}
    except (ValueError, KeyError, TypeError) as exc:
        raise CsimError(f"{design_file} is not a design file ({exc.__class__.__name__}: {exc})") from None


def run_csim(project_dir: str | Path, *, seed: int = 0, keep_build: bool = False) -> CsimResult:
    """Build and run the C simulation of an exported project in `project_dir`/csim (removed after a
    pass unless `keep_build`; kept after a failure so that `command` reproduces it)."""
    project_dir = Path(project_dir)
    descriptor, values = _read_project(project_dir)
    compiler = shutil.which(os.environ.get("CXX", "g++"))
    if compiler is None:
        raise CsimError("no C++ compiler found (g++ or $CXX)")
    build = project_dir / "csim"
    build.mkdir(exist_ok=True)
    (build / "csim_harness.cpp").write_text(harness_source(descriptor, kernel_interface(descriptor, values)))
    exe = build / "csim_harness"
    compile_args = [compiler, "-std=c++14", "-O0", "-Wno-unknown-pragmas", "-Wno-unused-label",
                    f"-I{include_dir()}", f"-I{project_dir / 'src'}", str(build / "csim_harness.cpp"),
                    str(project_dir / "src" / "kernel_kernel.cpp"), "-o", str(exe)]
    command = shlex.join(compile_args) + " && " + shlex.join([str(exe), str(seed)])
    built = subprocess.run(compile_args, capture_output=True, text=True, check=False)
    if built.returncode != 0:
        first = next((l for l in built.stderr.splitlines() if "error" in l), built.stderr.strip()[:200])
        return CsimResult(False, f"FAIL: compile error: {first.strip()}", command, None, built.stderr)
    try:
        ran = subprocess.run([str(exe), str(seed)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                             check=False)
    except subprocess.TimeoutExpired:
        return CsimResult(False, f"FAIL: the simulation ran longer than {RUN_TIMEOUT_S} s", command, None,
                          built.stderr)
    log = built.stderr + ran.stdout + ran.stderr
    lines = [l for l in ran.stdout.splitlines() if l.startswith(("PASS", "FAIL"))]
    if ran.returncode == 0 and lines and lines[-1].startswith("PASS"):
        if not keep_build:
            shutil.rmtree(build, ignore_errors=True)
        return CsimResult(True, lines[-1], command, None, log)
    if lines:
        summary = lines[-1]
    else:
        errors = [l for l in ran.stderr.splitlines() if l.startswith("ERROR")]
        summary = "FAIL: " + (errors[0].removeprefix("ERROR: ") if errors else f"exit status {ran.returncode}")
    mismatch = summary.removeprefix("FAIL: ") if " expected " in summary else None
    return CsimResult(False, summary, command, mismatch, log)


__all__ = ["CsimError", "CsimResult", "run_csim"]
