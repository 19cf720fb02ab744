"""Exported project directory -> `CsimResult`: the kernel compiled with g++ next to a generated test
harness (engine/csim/harness.py), run on random inputs and compared with the golden loop nest.

Without Xilinx tools the bundled engine/csim/include/hls_stream.h and ap_int.h stand in for Vitis's; when
`$XILINX_HLS/include/hls_stream.h` exists, the Vitis headers are used instead. A failing simulation
is a result (passed False, the first mismatching element, the command to reproduce it), never an
exception; a directory that is not an exported project raises `CsimError`. The build happens in a
private temporary folder (engine/csim/build.py), never inside the export. `run_timed_csim`
(engine/csim/timed.py) times the same program from its trace.
"""
from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from engine.csim.build import SHIM_INCLUDE, CsimError, compile_program, private_folder, remove_own
from engine.csim.project import harness_for, read_project, verdict
from engine.csim.timed import RUN_TIMEOUT_S, TimedResult, run_timed_csim


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


def run_csim(project_dir: str | Path, *, seed: int = 0, keep_build: bool = False,
             time_limit: float = RUN_TIMEOUT_S) -> CsimResult:
    """Build and run the C simulation of an exported project in a private temporary folder (removed
    after a pass unless `keep_build`; kept after a failure so that `command` reproduces it); the run
    may take `time_limit` seconds."""
    project_dir = Path(project_dir)
    descriptor, values, _ = read_project(project_dir)
    harness = harness_for(descriptor, values)
    build = private_folder("systolic-csim-")
    (build / "csim_harness.cpp").write_text(harness)
    exe = build / "csim_harness"
    built = compile_program([build / "csim_harness.cpp", project_dir / "src" / "kernel_kernel.cpp"], exe,
                            includes=[include_dir(), project_dir / "src"], flags=["-O0"])
    command = shlex.join(built.command) + " && " + shlex.join([str(exe), str(seed)])
    if not built.ok:
        return CsimResult(False, f"FAIL: compile error: {built.error}", command, None, built.log)
    try:
        ran = subprocess.run([str(exe), str(seed)], capture_output=True, text=True, timeout=time_limit,
                             check=False)
    except subprocess.TimeoutExpired:
        return CsimResult(False, f"FAIL: the simulation ran longer than {time_limit:g} s (the time limit: "
                                 f"--time-limit)", command, None, built.log)
    log = built.log + ran.stdout + ran.stderr
    summary, mismatch = verdict(ran)
    if summary.startswith("PASS"):
        if not keep_build:
            remove_own(build)
        return CsimResult(True, summary, command, None, log)
    return CsimResult(False, summary, command, mismatch, log)


__all__ = ["CsimError", "CsimResult", "TimedResult", "run_csim", "run_timed_csim"]
