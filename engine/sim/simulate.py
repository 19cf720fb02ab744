"""Descriptor + concrete configuration -> SimulationResult: total cycles, per-module busy / stall
counts, FIFO peaks, the bottleneck; a deadlock or an exhausted cycle budget is an EngineError that
carries what was measured."""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.compiler.architecture.passes import descriptor_passes, descriptor_tiles
from engine.compiler.expressions import evaluate
from engine.errors import DesignError, EngineError
from engine.sim.dram import DramModel
from engine.sim.hardware import Network, build_network
from engine.sim.kernel import run
from engine.sim.segments import node_name

DEFAULT_MAX_CYCLES = 2_000_000_000


@dataclass
class ModuleStats:
    """The busiest instance (thread) of a module: busy + stall_in + stall_out + idle = cycles."""

    name: str
    instances: int
    thread: str  # the instance thread these counts are from
    busy: int
    stall_in: int
    stall_out: int
    idle: int
    iterations: int

    def as_dict(self) -> dict:
        return {"instances": self.instances, "thread": self.thread, "busy": self.busy,
                "stall_in": self.stall_in, "stall_out": self.stall_out, "idle": self.idle,
                "iterations": self.iterations}


@dataclass
class SimulationResult:
    design: str
    params: dict[str, int]
    cycles: int
    modules: dict[str, ModuleStats]
    bottleneck: str
    fifo_peaks: dict[str, int]  # FIFO kind -> peak occupancy over its instances (words)
    fifo_depths: dict[str, int]
    threads: int
    iterations: int  # pipelined iterations issued by all threads
    deadlock: dict | None = None
    complete: bool = True
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"design": self.design, "params": self.params, "cycles": self.cycles, "complete": self.complete,
                "bottleneck": self.bottleneck, "modules": {k: m.as_dict() for k, m in self.modules.items()},
                "fifos": {k: {"depth": self.fifo_depths[k], "peak": self.fifo_peaks[k]} for k in self.fifo_peaks},
                "threads": self.threads, "iterations": self.iterations, "deadlock": self.deadlock}


class SimulationDeadlock(EngineError):
    """No module can advance: `cycle` lists the blocked threads and the FIFOs they wait on."""

    def __init__(self, reason: str, cycle: list[dict], result: SimulationResult):
        super().__init__(reason)
        self.cycle, self.result = cycle, result


class SimulationBudgetExceeded(EngineError):
    """The cycle budget ran out before the design finished; `result` holds what was measured."""

    def __init__(self, reason: str, result: SimulationResult):
        super().__init__(reason)
        self.result = result


def check_values(descriptor: dict, values: dict[str, int]) -> None:
    """Every parameter present and within its bounds and constraints (named when broken)."""
    problems = []
    for p in descriptor["parameters"]:
        name = p["name"]
        if name not in values:
            problems.append(f"{name} has no value")
            continue
        v = values[name]
        lo, hi = p["bounds"]
        if not lo <= v <= hi:
            problems.append(f"{name}={v} is outside its bounds {lo}..{hi}")
        for c in p.get("constraints", []):
            if c["kind"] == "divides" and c["of"] in values and values[c["of"]] % v:
                problems.append(f"{name}={v} must divide {c['of']}={values[c['of']]}")
            elif c["kind"] == "power_of_two" and v & (v - 1):
                problems.append(f"{name}={v} must be a power of two")
            elif c["kind"] == "divides_expression":
                block = round(evaluate(c["of"], values))
                if block % v:
                    problems.append(f"{name}={v} must divide {c['of']} = {block} (an extent or where boxes start)")
    if problems:
        raise DesignError(f"{descriptor['design']['id']}: " + "; ".join(problems))


def simulate(descriptor: dict, values: dict[str, int], *, max_cycles: int = DEFAULT_MAX_CYCLES,
             dram: DramModel | None = None, crossings: dict | None = None) -> SimulationResult:
    """`values`: every tuning parameter, data-packing factors included. A design that runs passes
    (engine/compiler/architecture/passes.py) is simulated pass by pass, nothing overlapping across a
    pass boundary: each kind of pass (one that reads partial results back, one that does not) once,
    its cycles and counts times the number of such passes. `crossings`: (source node, target node,
    array) -> the pipeline (`latency`, `extra_depth`: engine/floorplan/pipeline.py CrossingPipeline) of
    each FIFO a floorplan puts across SLRs; each such FIFO is that much deeper and delays every word
    by that latency, as the floorplanned export and its timed C simulation do."""
    check_values(descriptor, values)
    runs = pass_runs(descriptor, values)
    if not runs:
        return _simulate_region(descriptor, values, max_cycles, dram, crossings)
    results = [(count, _simulate_region(variant, values, max_cycles, dram, crossings)) for variant, count in runs]
    return _sequential(descriptor, values, results)


def apply_crossings(net: Network, crossings: dict) -> int:
    """Deepen and delay the network's FIFOs that `crossings` names ((source node, target node, array),
    the topology graph's edge, which hardware.py names its FIFO after); returns how many it found."""
    by_name = {f"{node_name(src)}->{node_name(dst)} {array}": pipe for (src, dst, array), pipe in crossings.items()}
    found = 0
    for f in net.fifos:
        pipe = None if f.internal else by_name.get(f.name)
        if pipe is not None:
            f.depth += pipe.extra_depth
            f.latency = pipe.latency
            found += 1
    return found


def pass_runs(descriptor: dict, values: dict[str, int]) -> list[tuple[dict, int]]:
    """[(the descriptor of one kind of pass, how many such passes)]; empty without passes."""
    info = descriptor.get("passes")
    if not info:
        return []
    passes = descriptor_passes(descriptor)
    tiles = descriptor_tiles(descriptor, values)
    if not passes.active(tiles):
        return []
    count, revisits = passes.count(tiles.__getitem__), passes.reduction_tiles(tiles.__getitem__)
    # a pass's groups and topology; kernel0's ports stay the design's (engine/sim/hardware.py DramModel)
    variant = lambda name: {**descriptor, "io_groups": info[name]["io_groups"],  # noqa: E731
                            "topology": info[name]["topology"], "port_io_groups": descriptor["io_groups"]}
    if "first" in info:
        return [(variant("first"), count // revisits), (variant("reload"), count - count // revisits)]
    return [(variant("reload"), count)]


def _sequential(descriptor: dict, values: dict, results: list[tuple[int, SimulationResult]]) -> SimulationResult:
    """Passes one after the other: cycles and per-module counts add up (times each kind's count)."""
    modules: dict[str, ModuleStats] = {}
    for count, r in results:
        for name, m in r.modules.items():
            old = modules.get(name)
            add = lambda field: count * getattr(m, field) + (getattr(old, field) if old else 0)  # noqa: E731
            modules[name] = ModuleStats(name, m.instances, m.thread, add("busy"), add("stall_in"), add("stall_out"),
                                        add("idle"), add("iterations"))
    cycles = sum(count * r.cycles for count, r in results)
    peaks, depths = {}, {}
    for _, r in results:
        for k, v in r.fifo_peaks.items():
            peaks[k] = max(peaks.get(k, 0), v)
        depths.update(r.fifo_depths)
    for m in modules.values():
        m.idle = max(0, cycles - m.busy - m.stall_in - m.stall_out)
    notes = [f"{sum(c for c, _ in results)} sequential passes: " + ", ".join(
        f"{c} x {r.cycles:,} cycles" for c, r in results)]
    return SimulationResult(descriptor["design"]["id"], dict(values), cycles, modules,
                            max(modules, key=lambda m: modules[m].busy), peaks, depths,
                            max(r.threads for _, r in results), sum(c * r.iterations for c, r in results),
                            notes=notes)


def _simulate_region(descriptor: dict, values: dict[str, int], max_cycles: int,
                     dram: DramModel | None, crossings: dict | None = None) -> SimulationResult:
    """One run of the dataflow region."""
    net = build_network(descriptor, values, dram or DramModel())
    if crossings:
        apply_crossings(net, crossings)
    outcome = run(net.threads, net.fifos, max_cycles)
    result = _result(descriptor, values, net, outcome.cycles)
    if outcome.deadlock is not None:
        cycle = [{"thread": th.name, "waits_on": None if f is None else f.name, "side": side,
                  "fifo_depth": None if f is None else f.depth,
                  "words": None if f is None else f.written - f.read} for th, f, side in outcome.deadlock]
        result.deadlock = {"cycle": cycle, "blocked": sum(1 for th in net.threads if not th.done),
                           "at_cycle": result.cycles}
        result.complete = False
        chain = " -> ".join(f"{c['thread']} ({'empty' if c['side'] == 'in' else 'full'} {c['waits_on']})"
                            for c in cycle)
        raise SimulationDeadlock(f"deadlock after {result.cycles:,} cycles: {result.deadlock['blocked']} "
                                 f"threads blocked; wait cycle: {chain}", cycle, result)
    if outcome.over_budget:
        result.complete = False
        done = sum(1 for th in net.threads if th.done)
        raise SimulationBudgetExceeded(
            f"cycle budget of {max_cycles:,} cycles exhausted before the design finished "
            f"({done}/{len(net.threads)} threads done, {result.iterations:,} iterations issued, "
            f"bottleneck so far {result.bottleneck}); raise --max-cycles", result)
    return result


def _result(descriptor: dict, values: dict, net: Network, cycles: int) -> SimulationResult:
    by_module: dict[str, list] = {}
    for th in net.threads:
        by_module.setdefault(th.module, []).append(th)
    modules = {}
    for name, threads in by_module.items():
        top = max(threads, key=lambda th: (th.busy, th.name))
        instances = len({th.name.split(".")[0] for th in threads})
        idle = max(0, cycles - top.busy - top.stall_in - top.stall_out)
        modules[name] = ModuleStats(name, instances, top.name, top.busy, top.stall_in, top.stall_out, idle,
                                    top.iterations)
    bottleneck = max(modules, key=lambda m: modules[m].busy)
    peaks, depths = {}, {}
    for f in net.fifos:
        kind = net.fifo_kind[id(f)]
        if f.internal:
            continue
        peaks[kind] = max(peaks.get(kind, 0), f.peak)
        depths[kind] = f.depth
    return SimulationResult(descriptor["design"]["id"], dict(values), cycles, modules, bottleneck, peaks, depths,
                            len(net.threads), sum(th.iterations for th in net.threads))


def format_result(result: SimulationResult) -> str:
    lines = [f"design {result.design}  " + " ".join(f"{k}={v}" for k, v in result.params.items()),
             (f"simulated {result.cycles:,} cycles{'' if result.complete else ' (incomplete)'}; "
              f"{result.threads} threads, {result.iterations:,} pipelined iterations"),
             f"{'module':16} {'inst':>5} {'busy':>12} {'stall in':>12} {'stall out':>12} {'idle':>12}  thread"]
    for name, m in sorted(result.modules.items(), key=lambda kv: -kv[1].busy):
        mark = "  <- bottleneck" if name == result.bottleneck else ""
        lines.append(f"{name:16} {m.instances:>5} {m.busy:>12,} {m.stall_in:>12,} {m.stall_out:>12,} "
                     f"{m.idle:>12,}  {m.thread}{mark}")
    lines += result.notes
    lines.append("FIFO peaks (words / depth): " + ", ".join(
        f"{k.split(' ')[0]} {k.split(' ')[1]} {result.fifo_peaks[k]}/{result.fifo_depths[k]}" for k in result.fifo_peaks))
    if result.deadlock:
        lines.append("DEADLOCK: " + " -> ".join(f"{c['thread']} waits on {c['waits_on']} ({c['side']})"
                                                 for c in result.deadlock["cycle"]))
    return "\n".join(lines)
