"""Exported project -> `TimedResult`: the timed C simulation (the LightningSim idea without Vitis).

1. The kernel source is instrumented in a build folder of csim's cache (engine/csim/trace.py, keyed
   by the hash of what goes into g++: an unchanged export is not rebuilt) and built with -Og next to
   the harness and the bundled hls_stream.h, which reports every stream read and write.
2. One run on random inputs checks the values like `systolic csim` and writes, per dataflow process
   (and per helper call that runs in parallel with its siblings), one record per invocation of a
   pipelined loop nest: its iterations and, per stream, the words it moved and at which first and
   last iteration (engine/csim/include/systolic_trace.h).
3. The records become the segments of engine/sim's compiled token kernel (kernel_arrays.run_arrays):
   an invocation of n iterations at the loop's II whose words are spread evenly from the first to
   the last iteration that moved one (exact for the evenly spaced accesses of generated code);
   a new invocation waits for the previous one to drain (its pipeline depth); a read waits for the
   word's arrival (IO_LATENCY cycles after its write; a word the PE's pipelined loop sends to the
   next PE is written at its value's stage of the iteration, engine/compiler/architecture/pe.py
   `send_stages`, not at its issue), a write for a free slot of the FIFO's
   `#pragma HLS stream depth`. Parallel helper calls are threads of their own, started and joined by
   their process through zero-cost tokens.
4. DRAM: every word the kernel moves through an m_axi port is reported; per loop invocation the
   recorder forms the bursts an AXI adapter would issue, and engine/csim/dram_trace.py charges them
   with engine/models/dram.py's `cycles_per_beat` (the export's AXI settings and DDR banks): the
   invocation's iterations are paced at its slowest port's cycles per iteration (PACE). The first
   read of a DRAM loader and the last write of a DRAM writer wait the AXI latency.

Rules the pragma does not state: the II of a loop rises to ceil(k * latency / d) where the trace
shows an element of a floating-point accumulator updated k times in one iteration and again d
iterations later (operator latency from resources/operators.json), and to k where one iteration
moves k words through one FIFO (one port). Straight-line PE code (outside any pipelined loop)
waits, before a write, for the operator latencies of the statements that computed the word since
the last read (trace.py `_straight_line`, `_operator_waits`). Docs: docs/export.md, "Timed C
simulation".
"""
from __future__ import annotations

import math
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.compiler.architecture.build import OPERATORS
from engine.compiler.architecture.pe import send_stages
from engine.csim.dram_trace import (
    PortTotals,
    export_dram_ports,
    invocation_cycles,
    port_banks,
    port_totals,
    read_bursts,
    read_ports,
    shares,
)
from engine.csim.build import (
    SHIM_INCLUDE,
    CsimError,
    cached_build,
    cached_object,
    compiler,
    first_error,
    private_folder,
    remove_own,
)
from engine.csim.project import harness_for, read_project, verdict
from engine.csim.timed_threads import sync_waits, thread_names, wait_cycle
from engine.csim.trace import Instrumented, TraceError, instrument
from engine.errors import EngineError
from engine.models.dram import DramPorts
from engine.sim import kernel_arrays as K
from engine.sim.dram import DramModel
from engine.sim.segments import IO_LATENCY
from engine.validation import read_text

SEG_BYTES = 320  # replay memory per loop-invocation record (file row, sorted copy, kernel row, temporaries)
OP_BYTES = 240  # per stream-operation record
MEMORY_SHARE = 0.5  # of the available memory the trace may take
RUN_TIMEOUT_S = 1800  # default time limit of the traced run
DEFAULT_MAX_CYCLES = 2_000_000_000
LOOP, STEP, FORK, JOIN, BEGIN, END = range(6)


class TimedCsimError(EngineError):
    """The timed C simulation could not produce a timing (build failure, run failure, trace too large)."""

    def __init__(self, reason: str, *, build_dir: Path | None = None, log: str = ""):
        super().__init__(reason)
        self.build_dir, self.log = build_dir, log


@dataclass
class ThreadStats:
    name: str  # the process label, plus "/helper" for a helper call run in parallel
    busy: int
    stall_in: int
    stall_out: int
    end: int
    iterations: int

    def as_dict(self) -> dict:
        return {"busy": self.busy, "stall_in": self.stall_in, "stall_out": self.stall_out, "end": self.end,
                "iterations": self.iterations}


@dataclass
class ProcessStats(ThreadStats):
    function: str = ""
    line: int = 0
    helpers: list[ThreadStats] = field(default_factory=list)
    module: str | None = None  # the descriptor module the process implements
    model_term: float | None = None  # that module's latency term in design.json's report

    def as_dict(self) -> dict:
        return {**super().as_dict(), "function": self.function, "line": self.line, "module": self.module,
                "model_term": self.model_term, "helpers": {h.name: h.as_dict() for h in self.helpers}}


@dataclass
class TimedResult:
    cycles: int  # when the last process finished (DRAM write acknowledgement included)
    processes: list[ProcessStats]
    slowest: str  # the process (or process/helper) with the most busy cycles
    passed: bool  # the values matched the loop nest
    csim: str  # the harness's PASS / FAIL line
    model_latency: float | None  # design.json's report
    model_bottleneck: str | None
    loops: list[dict]  # pipelined loops whose II the replay raised above the pragma's, and why
    deadlock: list[str] | None = None  # the wait cycle when the replay cannot finish
    complete: bool = True
    iterations: int = 0
    records: int = 0
    build_dir: str = ""
    cached: bool = False
    seconds: dict = field(default_factory=dict)
    passes: int = 1  # calls of the dataflow region, replayed one after the other
    pass_cycles: list[int] = field(default_factory=list)  # each pass's cycles (with passes)
    dram: list[PortTotals] = field(default_factory=list)  # each DRAM port's words, bursts, lower-bound cycles

    def process(self, label: str) -> ProcessStats:
        return next(p for p in self.processes if p.name == label)

    @property
    def model_error(self) -> float | None:
        """(timed - model) / model."""
        return None if not self.model_latency else (self.cycles - self.model_latency) / self.model_latency

    def as_dict(self) -> dict:
        return {"cycles": self.cycles, "complete": self.complete, "slowest": self.slowest, "passed": self.passed,
                "csim": self.csim, "model_latency": self.model_latency, "model_bottleneck": self.model_bottleneck,
                "model_error": self.model_error, "processes": {p.name: p.as_dict() for p in self.processes},
                "loops": self.loops, "deadlock": self.deadlock, "iterations": self.iterations,
                "records": self.records, "build_dir": self.build_dir, "cached": self.cached, "seconds": self.seconds,
                "passes": self.passes, "pass_cycles": self.pass_cycles,
                "dram": {d.name: d.as_dict() for d in self.dram}}


def memory_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 << 30


def run_timed_csim(project_dir: str | Path, *, seed: int = 0, cache: Path | None = None,
                   memory_budget: int | None = None, max_cycles: int = DEFAULT_MAX_CYCLES,
                   dram: DramModel | None = None, memory: DramPorts | None = None,
                   time_limit: float = RUN_TIMEOUT_S, dram_log: Path | None = None) -> TimedResult:
    """Build (cached), run and replay an exported project. `memory_budget` bounds the trace (bytes of
    replay memory; default half the available memory); `memory`: the DRAM ports' AXI settings and
    banks (default the export's, `export_dram_ports`); `dram`: the first read's and the last write's
    latency (default the AXI latency); `time_limit`: seconds the traced run may take; `dram_log`: a file
    to log every DRAM access to (systolic_trace.h)."""
    project_dir = Path(project_dir)
    descriptor, values, design = read_project(project_dir)
    clock = time.perf_counter()
    kernel_cpp = project_dir / "src" / "kernel_kernel.cpp"
    header = read_text(project_dir / "src" / "kernel_kernel.h", "kernel header", error=CsimError)
    text = read_text(kernel_cpp, "kernel source", error=CsimError)
    try:
        inst = instrument(text, path=str(kernel_cpp.resolve()), header=header,
                          statements=(descriptor.get("compute") or {}).get("statements"))
    except TraceError as exc:
        _syntax_check(project_dir, kernel_cpp)  # a g++ error explains a broken file better
        raise TimedCsimError(str(exc)) from None
    files = {"csim_harness.cpp": harness_for(descriptor, values), "kernel_traced.cpp": inst.source,
             "kernel_kernel.h": header}
    # -Og: the trace (hence the cycles) does not depend on the optimisation; -Og builds in 55-70% of -O2's
    # g++ time and its run is ~2x -O2's, a gain for exports up to ~256^3 and about even at device size
    flags = ["-Og", "-DSYSTOLIC_TRACE"]
    recorder = cached_object(SHIM_INCLUDE / "systolic_trace.cpp", includes=[SHIM_INCLUDE], flags=flags, cache=cache)
    build, cached = cached_build(files, "csim_timed", includes=[SHIM_INCLUDE], flags=flags, objects=(recorder,),
                                 cache=cache)
    if not build.ok:
        raise TimedCsimError(f"g++ failed: {build.error} (build folder kept: {build.folder})",
                             build_dir=build.folder, log=build.log)
    built_at = time.perf_counter()
    budget = memory_budget if memory_budget is not None else int(memory_available() * MEMORY_SHARE)
    memory = memory or export_dram_ports(project_dir, design)
    dram = dram or DramModel(memory)
    trace_dir = private_folder("systolic-trace-")
    try:
        env = {**os.environ, "SYSTOLIC_TRACE_DIR": str(trace_dir), "SYSTOLIC_TRACE_BUDGET": str(budget),
               "SYSTOLIC_TRACE_SEG_BYTES": str(SEG_BYTES), "SYSTOLIC_TRACE_OP_BYTES": str(OP_BYTES),
               "SYSTOLIC_TRACE_AXI": f"{memory.axi.max_burst_beats} {memory.axi.boundary_bytes}",
               "SYSTOLIC_TRACE_DRAM_LOG": str(dram_log or "")}
        try:
            ran = subprocess.run([str(build.exe), str(seed)], capture_output=True, text=True, env=env,
                                 timeout=time_limit, check=False)
        except subprocess.TimeoutExpired:
            raise TimedCsimError(f"the traced run took longer than {time_limit:g} s (the time limit); raise it or "
                                 f"export a smaller slice") from None
        if ran.returncode == 5:
            raise TimedCsimError(f"the trace is too large for memory ({_last_error(ran.stderr)}); export a smaller "
                                 f"slice of the problem (fewer tiles) and time that") from None
        summary, _ = verdict(ran)
        if not (trace_dir / "threads.tsv").is_file():
            raise TimedCsimError(f"the traced run stopped before kernel0 returned: {summary.removeprefix('FAIL: ')}",
                                 build_dir=build.folder, log=ran.stdout + ran.stderr)
        ran_at = time.perf_counter()
        replay = _replay(inst, trace_dir, descriptor, dram, max_cycles, send_stages(descriptor, values),
                         (memory, port_banks(project_dir, inst.ports, memory)), crossing_latencies(design))
    finally:
        remove_own(trace_dir)
    report = design.get("report") if isinstance(design.get("report"), dict) else {}
    replay.passed, replay.csim = summary.startswith("PASS"), summary
    replay.model_latency = report.get("latency_cycles")
    replay.model_bottleneck = report.get("bottleneck")
    modules = {m["name"]: m for m in descriptor.get("topology", {}).get("modules", [])}
    for p in replay.processes:
        module = _module_of(p.function, modules)
        p.module = module["name"] if module else None
        p.model_term = (report.get("modules") or {}).get(p.module) if module else None
    replay.build_dir, replay.cached = str(build.folder), cached
    replay.seconds = {"build": round(built_at - clock, 3), "run": round(ran_at - built_at, 3),
                      "replay": round(time.perf_counter() - ran_at, 3)}
    return replay


def _last_error(stderr: str) -> str:
    lines = [l.removeprefix("ERROR: ").strip() for l in stderr.splitlines() if l.startswith("ERROR")]
    return lines[-1] if lines else stderr.strip()[-200:]


def _syntax_check(project_dir: Path, kernel_cpp: Path) -> None:
    checked = subprocess.run([compiler(), "-std=c++14", "-fsyntax-only", "-Wno-unknown-pragmas", f"-I{SHIM_INCLUDE}",
                              f"-I{project_dir / 'src'}", str(kernel_cpp)], capture_output=True, text=True, check=False)
    if checked.returncode != 0:
        raise TimedCsimError(f"g++ failed: {first_error(checked.stderr)}", log=checked.stderr)


# -- the replay -------------------------------------------------------------------------------------

def _read_table(path: Path, columns: int) -> list[list[str]]:
    rows = [line.split("\t") for line in path.read_text().splitlines() if line]
    return [r for r in rows if len(r) == columns]


def _module_of(function: str, modules: dict[str, dict]) -> dict | None:
    names = [m for m in modules if function == m or function.startswith(m + "_")]
    return modules[max(names, key=len)] if names else None


def loop_timing(inst: Instrumented, descriptor: dict, sites: dict[int, tuple[int, int]]) -> tuple[dict, dict, list]:
    """(II per loop, pipeline depth per loop, notes on raised IIs)."""
    modules = {m["name"]: m for m in descriptor.get("topology", {}).get("modules", [])}
    ii, depth, notes = {}, {}, []
    for loop in inst.loops.values():
        module = _module_of(loop.function, modules)
        if module is None or (module.get("kind") == "pe" and not loop.computes):
            depth[loop.id] = IO_LATENCY
        else:
            depth[loop.id] = int(module.get("pipeline_depth", IO_LATENCY))
        ii[loop.id] = loop.ii
    for site_id, (k, d) in sites.items():
        site = inst.sites.get(site_id)
        if site is None or k <= 0 or d <= 0:
            continue
        latency = OPERATORS[site.dtype][site.operator]["latency"]
        needed = math.ceil(k * latency / d)
        if needed > ii[site.loop]:
            ii[site.loop] = needed
            loop = inst.loops[site.loop]
            notes.append({"loop": "/".join(l for l in loop.labels if l) or f"line {loop.line}",
                          "function": loop.function, "line": loop.line, "pragma_ii": loop.ii, "ii": needed,
                          "reason": f"{site.array} (line {site.line}): {k} {site.dtype} {site.operator}(s) per "
                                    f"iteration on one element, updated again {d} iteration(s) later, "
                                    f"{latency}-cycle {site.operator}"})
    return ii, depth, notes


def _replay(inst: Instrumented, trace: Path, descriptor: dict, dram: DramModel, max_cycles: int,
            stages: dict[str, int] | None = None, ports: tuple[DramPorts, dict] | None = None,
            crossing: dict[str, int] | None = None) -> TimedResult:
    """The trace replayed (`crossing`: stream name -> the latency its SLR crossing adds); a kernel that runs passes (one call of its dataflow region each) is
    replayed pass by pass, each pass starting when the one before it has finished (HLS completes a
    region call, its DRAM writes included, before the next call starts): the cycles add up."""
    threads = [[int(x) for x in r] for r in _read_table(trace / "threads.tsv", 5)]  # id, process, parent, group, member
    stream_names = {int(r[0]): r[1] for r in _read_table(trace / "streams.tsv", 2)}
    sites = {int(r[0]): (int(r[1]), int(r[2])) for r in _read_table(trace / "sites.tsv", 3)}
    segs = np.fromfile(trace / "segments.bin", dtype=np.int64).reshape(-1, 8)
    # column 8: the cycles (in 1/PACE_UNIT) the invocation's slowest DRAM port needs (dram_trace.py)
    port_list, bursts, totals = read_ports(trace), read_bursts(trace), []
    cycles = np.zeros(len(segs))
    if ports is not None and port_list:
        memory, banks = ports
        share = shares(port_list, banks, memory)
        cycles = invocation_cycles(bursts, len(segs), share, memory.axi)
        totals = port_totals(bursts, port_list, share, memory.axi)
    segs = np.column_stack([segs, np.rint(cycles * K.PACE_UNIT).astype(np.int64)])
    result = _replay_passes(inst, trace, segs, threads, stream_names, sites, descriptor, dram, max_cycles, stages,
                            crossing)
    result.dram = totals
    return result


def _replay_passes(inst: Instrumented, trace: Path, segs: np.ndarray, threads: list, stream_names: dict,
                   sites: dict, descriptor: dict, dram: DramModel, max_cycles: int,
                   stages: dict[str, int] | None, crossing: dict[str, int] | None = None) -> TimedResult:
    ops = np.fromfile(trace / "ops.bin", dtype=np.int64).reshape(-1, 5)
    ii_of, depth_of, notes = loop_timing(inst, descriptor, sites)
    delay_of = send_delays(inst, descriptor, stream_names, stages or {}, crossing or {})
    starts = [int(r[0]) for r in _read_table(trace / "passes.tsv", 1)] if (trace / "passes.tsv").is_file() else []
    if not starts:
        return _replay_region(inst, threads, stream_names, segs, ops, ii_of, depth_of, notes, dram, max_cycles,
                              delay_of)
    bounds = [0, *starts, len(threads)]
    # threads are numbered from 0 in each pass: so are the start / done tokens -(2t+1) / -(2t+2) of thread t
    renumbered = ops.copy()
    tokens = ops[:, 0] < 0
    owner = (-ops[tokens, 0] - 1) // 2
    renumbered[tokens, 0] += 2 * np.asarray(bounds)[np.searchsorted(bounds, owner, side="right") - 1]
    results = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        mine = (segs[:, 0] >= a) & (segs[:, 0] < b)
        part = segs[mine].copy()
        part[:, 0] -= a
        local = [[t - a, p, parent - a if parent >= 0 else parent, g, m] for t, p, parent, g, m in threads[a:b]]
        results.append(_replay_region(inst, local, stream_names, part, renumbered, ii_of, depth_of, notes, dram,
                                      max_cycles, delay_of))
        if not results[-1].complete:
            break
    return _sequential(results)


def _sequential(results: list[TimedResult]) -> TimedResult:
    """Passes one after the other: cycles add up, each process's counts too (its end is the last
    pass's, offset by the passes before)."""
    offset, processes = 0, {}
    for r in results:
        for p in r.processes:
            old = processes.get(p.name)
            helpers = {h.name: h for h in (old.helpers if old else [])}
            for h in p.helpers:
                before = helpers.get(h.name)
                helpers[h.name] = ThreadStats(h.name, h.busy + (before.busy if before else 0),
                                              h.stall_in + (before.stall_in if before else 0),
                                              h.stall_out + (before.stall_out if before else 0), offset + h.end,
                                              h.iterations + (before.iterations if before else 0))
            processes[p.name] = ProcessStats(p.name, p.busy + (old.busy if old else 0),
                                             p.stall_in + (old.stall_in if old else 0),
                                             p.stall_out + (old.stall_out if old else 0), offset + p.end,
                                             p.iterations + (old.iterations if old else 0), p.function, p.line,
                                             list(helpers.values()))
        offset += r.cycles
    rows = [s for p in processes.values() for s in (p, *p.helpers)]
    last = results[-1]
    loops = list({tuple(sorted(n.items())): n for n in last.loops}.values())  # one note per loop, not per pass
    return TimedResult(offset, list(processes.values()), max(rows, key=lambda s: s.busy).name if rows else "", False,
                       "", None, None, loops, last.deadlock, all(r.complete for r in results),
                       sum(r.iterations for r in results), sum(r.records for r in results), passes=len(results),
                       pass_cycles=[r.cycles for r in results])


def _replay_region(inst: Instrumented, threads: list[list[int]], stream_names: dict[int, str], segs: np.ndarray,
                   ops: np.ndarray, ii_of: dict, depth_of: dict, notes: list, dram: DramModel,
                   max_cycles: int, delay_of: tuple[set, dict, dict]) -> TimedResult:
    """One run of the dataflow region."""
    arrays = _kernel_arrays(inst, threads, stream_names, segs, ops, ii_of, depth_of, notes, dram, delay_of)
    state = np.zeros((len(threads), K.THREAD_STATE), dtype=np.int64)
    state[:, K.CUR] = state[:, K.WAIT_FIFO] = -1
    fstate = np.zeros((len(arrays["fifo"]), K.FIFO_STATE), dtype=np.int64)
    fstate[:, K.READER] = fstate[:, K.WRITER] = -1
    rings = max(int(arrays["fifo"][:, K.F_DEPTH].sum()), 1)
    arrivals, reads = np.zeros(rings, dtype=np.int64), np.zeros(rings, dtype=np.int64)
    stopped = K.run_arrays(max_cycles, state, arrays["thread_segs"], arrays["seg"], arrays["op"], arrays["fifo"],
                           fstate, arrivals, reads, arrays["max_ops"])
    names = thread_names(inst, threads)
    waits = sync_waits(threads, arrays, fstate, arrivals, reads)
    stats = [ThreadStats(names[t], int(state[t, K.BUSY]), int(state[t, K.STALL_IN] - waits[t]),
                         int(state[t, K.STALL_OUT]), int(state[t, K.END]), int(state[t, K.ITERS] - arrays["syncs"][t]))
             for t in range(len(threads))]
    processes = []
    for p in inst.processes:
        mine = [t for t in threads if t[1] == p.index]
        main = next((t[0] for t in mine if t[2] < 0), None)
        own = stats[main] if main is not None else ThreadStats(p.label, 0, 0, 0, 0, 0)
        helpers = [stats[t[0]] for t in mine if t[2] >= 0]
        processes.append(ProcessStats(p.label, own.busy, own.stall_in, own.stall_out,
                                      max([own.end] + [h.end for h in helpers]),
                                      own.iterations + sum(h.iterations for h in helpers), p.function, p.line, helpers))
    done = state[:, K.DONE].astype(bool)
    deadlock = None
    if not done.all() and not stopped:
        deadlock = wait_cycle(state, done, arrays, names, stream_names)
    cycles = max((int(state[t, K.END] if done[t] else state[t, K.LAST]) for t in range(len(threads))), default=0)
    slowest = max(stats, key=lambda st: st.busy).name if stats else ""
    return TimedResult(cycles, processes, slowest, False, "", None, None, notes, deadlock, bool(done.all()),
                       sum(st.iterations for st in stats), int(len(segs) + len(ops)))


def _kernel_arrays(inst: Instrumented, threads: list[list[int]], stream_names: dict[int, str], segs: np.ndarray,
                   ops: np.ndarray, ii_of: dict, depth_of: dict, notes: list, dram: DramModel,
                   delay_of: tuple[set, dict, dict] = (set(), {}, {})) -> dict:
    """Trace records -> the arrays of engine/sim/kernel_arrays.py (layout there): one segment per
    record, threads in id order, FIFOs = the streams then a start and a done token FIFO per thread.
    `delay_of`: (the PE's compute loops, stream -> the stage its word is written at: `send_delays`)."""
    n_streams, n_threads = max(stream_names, default=-1) + 1, len(threads)
    n_loops = max(ii_of, default=-1) + 1
    loop_ii = np.array([ii_of.get(l, 1) for l in range(n_loops)] or [1], dtype=np.int64)
    loop_depth = np.array([depth_of.get(l, IO_LATENCY) for l in range(n_loops)] or [IO_LATENCY], dtype=np.int64)
    segs = segs[np.argsort(segs[:, 0], kind="stable")]
    thread_of, kind, loop, n = segs[:, 0], segs[:, 1], segs[:, 2], segs[:, 3]
    reads, writes = segs[:, 5], segs[:, 6]
    counts = reads + writes
    offsets = np.cumsum(counts) - counts
    ops = ops[np.repeat(segs[:, 4] - offsets, counts) + np.arange(int(counts.sum()), dtype=np.int64)]
    op_seg = np.repeat(np.arange(len(segs)), counts)
    is_loop = kind == LOOP
    data = is_loop | (kind == STEP)  # the rest are zero-cost tokens of parallel calls
    safe_loop = np.where(is_loop, loop, 0)
    ii = np.where(is_loop, loop_ii[safe_loop], np.where(data, 1, 0))
    depth = np.where(is_loop, loop_depth[safe_loop], np.where(data, 1, 0))
    latency = np.where(data, IO_LATENCY, 0)

    # one port per FIFO: an iteration moving k words through one stream is k sub-iterations
    stream, direction, count, first, last = (ops[:, c] for c in range(5))
    ports = np.ones(len(segs), dtype=np.int64)
    np.maximum.at(ports, op_seg, -(-count // np.maximum(last - first + 1, 1)))
    for l in np.unique(loop[(ports > 1) & is_loop]):
        info = inst.loops[int(l)]
        notes.append({"loop": "/".join(x for x in info.labels if x) or f"line {info.line}", "function": info.function,
                      "line": info.line, "pragma_ii": info.ii,
                      "ii": int(max(loop_ii[l], ports[(loop == l) & is_loop].max())),
                      "reason": "more than one word per iteration through one FIFO (one port)"})
    k = ports[op_seg]
    n = n * ports
    ii = np.where(ii > 0, np.maximum(1, -(-ii // ports)), 0)
    first, last = first * k, last * k + k - 1
    _operator_waits(segs, kind, reads, depth)
    # a DRAM loop invocation's iterations paced at its slowest port's cycles per iteration
    pace = np.zeros(len(segs), dtype=np.int64)
    for s in np.nonzero(segs[:, 8] > 0)[0]:
        pace[s] = K.pace_units(segs[s, 8] / K.PACE_UNIT / max(int(n[s]), 1))

    # words spread evenly from the first to the last iteration that moved one (kernel_arrays' placement:
    # read j at first + j * span // count, write j at first + ceil((j + 1) * span / count) - 1)
    safe = np.maximum(count, 1)
    span = np.where(count > 1, np.maximum(count * (last - first) // np.maximum(count - 1, 1), count), 1)
    op_first = np.where(direction == 0, first, last - span + 1)
    placed_first = np.where(direction == 0, op_first, op_first + (span + safe - 1) // safe - 1)
    placed_last = np.where(direction == 0, op_first + ((count - 1) * span) // safe, op_first + span - 1)
    if (placed_first < 0).any() or (placed_last >= n[op_seg]).any():
        raise TimedCsimError("internal: a trace record places a word outside its loop invocation")
    fifo = np.where(stream >= 0, stream, n_streams + (-stream - 1))
    # a word a PE's pipelined loop sends to the next PE leaves at its value's stage, not at issue
    compute_loops, stage, crossing = delay_of
    delay = np.zeros(len(ops), dtype=np.int64)
    if stage and compute_loops:
        in_compute = is_loop[op_seg] & np.isin(loop[op_seg], list(compute_loops))
        by_stream = np.array([stage.get(f, 0) for f in range(max(n_streams, 1))], dtype=np.int64)
        written = (direction == 1) & in_compute & (stream >= 0)
        delay[written] = by_stream[stream[written]]
    if crossing:  # an SLR-crossing FIFO's pipeline stages: each word arrives that much later
        by_stream = np.array([crossing.get(f, 0) for f in range(max(n_streams, 1))], dtype=np.int64)
        written = (direction == 1) & (stream >= 0)
        delay[written] += by_stream[stream[written]]

    bounds = np.searchsorted(thread_of, np.arange(n_threads + 1))
    earliest = np.zeros(len(segs), dtype=np.int64)
    main = {t[1]: t[0] for t in threads if t[2] < 0}
    for p in inst.processes:
        if p.index not in main:
            continue
        a, b = bounds[main[p.index]], bounds[main[p.index] + 1]
        if a < b and p.dram_read and data[a:b].any():
            earliest[a + int(np.argmax(data[a:b]))] = dram.read_latency
        if a < b and p.dram_write:
            depth[b - 1] += dram.write_latency

    # a token FIFO keeps every token's cycles (one per call: the timing never needs more than one slot)
    calls = np.bincount(thread_of[kind == BEGIN], minlength=n_threads)
    depths = np.repeat(np.maximum(calls, 2), 2)
    depths = np.concatenate([np.full(n_streams, 2, dtype=np.int64), depths]).astype(np.int64)
    for sid, name in stream_names.items():
        depths[sid] = max(1, inst.streams.get(name, 2))
    ring = np.concatenate([[0], np.cumsum(depths)[:-1]]).astype(np.int64)
    return {"seg": np.stack([n, ii, np.ones(len(segs), dtype=np.int64), depth, latency, earliest, offsets, reads,
                             writes, pace], axis=1).astype(np.int64)
                    .reshape(-1, K.SEG_COLUMNS),
            "op": np.stack([fifo, count, op_first, span, delay], axis=1).astype(np.int64).reshape(-1, 5),
            "fifo": np.stack([depths, ring, depths, ring, depths], axis=1).astype(np.int64),
            "thread_segs": np.stack([bounds[:-1], bounds[1:]], axis=1).astype(np.int64),
            "max_ops": int(counts.max()) if len(counts) else 0,
            "syncs": np.bincount(thread_of[~data], minlength=n_threads), "n_streams": n_streams}


def crossing_latencies(design: dict) -> dict[str, int]:
    """Stream name -> the cycles an SLR crossing adds to it: design.json's floorplan (the export's, decided
    by engine/floorplan/pipeline.py); none without a floorplan."""
    floorplan = design.get("floorplan") if isinstance(design.get("floorplan"), dict) else {}
    return {c["stream"]: int(c["latency"]) for c in floorplan.get("crossing_fifos", [])}


def send_delays(inst: Instrumented, descriptor: dict, stream_names: dict[int, str],
                stages: dict[str, int], crossing: dict[str, int] | None = None) -> tuple[set, dict, dict]:
    """(the PE's compute loops, stream id -> stage, stream id -> crossing latency): a PE-to-PE stream of
    a local array (the emitter's `{array}_to_PE_...`, the longest array name that prefixes it) is
    written, in the PE's pipelined compute loop, `stages[array]` cycles into the iteration
    (engine/compiler/architecture/pe.py `send_stages`); an SLR-crossing stream (`crossing`, by name)
    delivers each word its pipeline's latency later."""
    modules = {m["name"]: m for m in descriptor.get("topology", {}).get("modules", [])}
    loops = {l.id for l in inst.loops.values() if l.computes
             and ((_module_of(l.function, modules) or {}).get("kind") == "pe")}
    by_stream = {}
    for sid, name in stream_names.items():
        arrays = [a for a in stages if name.startswith(f"{a}_to_")]
        if arrays:
            by_stream[sid] = stages[max(arrays, key=len)]
    crossing = crossing or {}
    return loops, by_stream, {sid: crossing[name] for sid, name in stream_names.items() if name in crossing}


def _operator_waits(segs: np.ndarray, kind: np.ndarray, reads: np.ndarray, depth: np.ndarray) -> None:
    """Straight-line code: a record whose value is ready `ready` cycles after the thread's last
    stream read (column 7, the operators on its dependence path: engine/csim/trace.py
    `_straight_line`) starts no earlier. The records run one after the other, one cycle each at
    least, so the wait is what `ready` exceeds the cycles since that read by; it lengthens the
    record before it (`depth`: when the next record may start)."""
    waiting = np.nonzero(segs[:, 7] > 0)[0]
    if not len(waiting):
        return
    thread = segs[:, 0]
    is_read = (kind == STEP) & (reads > 0)
    read_rows = np.nonzero(is_read)[0]
    added: dict[int, tuple[int, int]] = {}  # thread -> (last read row, cycles added since)
    for row in waiting:
        t = int(thread[row])
        k = np.searchsorted(read_rows, row) - 1
        last_read = int(read_rows[k]) if k >= 0 and thread[read_rows[k]] == t else -1
        if last_read < 0 or row == 0 or thread[row - 1] != t:
            continue
        since, extra = added.get(t, (last_read, 0))
        if since != last_read:
            extra = 0
        wait = int(segs[row, 7]) - (row - last_read - 1) - extra
        if wait > 0:
            depth[row - 1] += wait
            extra += wait
        added[t] = (last_read, extra)


from engine.csim.timed_format import format_timed  # noqa: E402  (re-exported: its home is timed_format.py)

__all__ = ["ProcessStats", "ThreadStats", "TimedCsimError", "TimedResult", "format_timed", "run_timed_csim"]
