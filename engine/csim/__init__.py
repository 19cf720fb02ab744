"""Exported project directory -> `CsimResult`: the kernel compiled with g++ next to a generated test
harness (engine/csim/harness.py), run on random inputs and compared with the golden loop nest.

Without Xilinx tools the bundled engine/csim/include/hls_stream.h and ap_int.h stand in for Vitis's; when
`$XILINX_HLS/include/hls_stream.h` exists, the Vitis headers are used instead. A failing simulation
is a result (passed False, the first mismatching element, the command to reproduce it), never an
exception; a directory that is not an exported project raises `CsimError`. The build happens in a
private temporary folder (engine/csim/build.py), never inside the export. `run_timed_csim`
(engine/csim/timed.py) times the same program from its trace.

Memory: the program runs under MEMORY_LIMIT bytes of address space whatever the problem size. Its
host buffers (engine/csim/harness.py `host_bytes`) are estimated first and a project whose buffers
alone exceed the limit is refused (CsimError, one line) before anything is built; the FIFOs, which a
sequential C simulation fills with every word a producer writes before its consumer runs, are held
to the limit by the operating system (RLIMIT_AS), and a run that hits it is a failure saying so.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from engine.csim.build import SHIM_INCLUDE, CsimError, compile_program, private_folder, remove_own
from engine.csim.harness import host_bytes
from engine.csim.project import harness_for, read_project, verdict
from engine.csim.timed import RUN_TIMEOUT_S, TimedResult, run_timed_csim
from engine.export.interface import kernel_interface

MEMORY_LIMIT = 2_000_000_000  # bytes of address space the plain C simulation may use (2 GB)


@dataclass(frozen=True)
class CsimResult:
    passed: bool
    summary: str          # one line: "PASS: ..." or "FAIL: ..."
    command: str          # the shell command that rebuilds and reruns the simulation
    mismatch: str | None  # the first mismatching element, e.g. "C[3][17] expected 12.5 got 0"
    log: str              # compiler and program output
    host_bytes: int = 0   # the harness's buffers (estimated before the run)
    seconds: float = 0.0  # build and run, wall clock

    def details(self) -> list[str]:
        """What `systolic csim --verbose` prints after the summary line."""
        return [f"host buffers: {_gb(self.host_bytes)} (memory limit {_gb(MEMORY_LIMIT)}); build and run "
                f"{self.seconds:.1f} s", f"command: {self.command}"]


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def _limit_memory() -> None:  # in the child, before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _out_of_memory(ran: subprocess.CompletedProcess) -> bool:
    return ran.returncode != 0 and any(s in ran.stderr.lower()
                                       for s in ("bad_alloc", "out of memory", "failed to map segment"))


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
    start = time.monotonic()
    descriptor, values, design = read_project(project_dir)
    harness = harness_for(descriptor, values)
    needed = host_bytes(descriptor, kernel_interface(descriptor, values), design.get("dram"))
    if needed > MEMORY_LIMIT:
        raise CsimError(f"{project_dir}: the C simulation's host buffers need {_gb(needed)}, over its "
                        f"{_gb(MEMORY_LIMIT)} memory limit; check the design's values at a smaller problem size (-D)")
    build = private_folder("systolic-csim-")
    (build / "csim_harness.cpp").write_text(harness)
    exe = build / "csim_harness"
    built = compile_program([build / "csim_harness.cpp", project_dir / "src" / "kernel_kernel.cpp"], exe,
                            includes=[include_dir(), project_dir / "src"], flags=["-O0"])
    command = shlex.join(built.command) + " && " + shlex.join([str(exe), str(seed)])
    extra = {"host_bytes": needed}
    if not built.ok:
        return CsimResult(False, f"FAIL: compile error: {built.error}", command, None, built.log, **extra,
                          seconds=time.monotonic() - start)
    try:
        ran = subprocess.run([str(exe), str(seed)], capture_output=True, text=True, timeout=time_limit,
                             check=False, preexec_fn=_limit_memory if os.name == "posix" else None)
    except subprocess.TimeoutExpired:
        return CsimResult(False, f"FAIL: the simulation ran longer than {time_limit:g} s (the time limit: "
                                 f"--time-limit)", command, None, built.log, **extra, seconds=time.monotonic() - start)
    except OSError as exc:  # the program could not even start within the limit
        ran = subprocess.CompletedProcess([str(exe)], -1, "", f"out of memory: {exc}")
    extra["seconds"] = time.monotonic() - start
    log = built.log + ran.stdout + ran.stderr
    if _out_of_memory(ran):
        return CsimResult(False, f"FAIL: the simulation needed more than its {_gb(MEMORY_LIMIT)} memory limit "
                                 f"(host buffers {_gb(needed)}, the rest words waiting in FIFOs: a sequential C "
                                 "simulation runs each process to its end); check a smaller problem size, or "
                                 "`systolic csim --timed`, whose FIFOs are bounded", command, None, log, **extra)
    summary, mismatch = verdict(ran)
    if summary.startswith("PASS"):
        if not keep_build:
            remove_own(build)
        return CsimResult(True, summary, command, None, log, **extra)
    return CsimResult(False, summary, command, mismatch, log, **extra)


__all__ = ["MEMORY_LIMIT", "CsimError", "CsimResult", "TimedResult", "run_csim", "run_timed_csim"]
