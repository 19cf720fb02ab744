"""Design -> the processing element: its loop nest (array partitioning, latency hiding, SIMD), its
local accumulators, and the initiation interval its accumulation allows.

PE loops, outermost first: the tile loops in the permutation-class order; the time loops (band
loops that are not space loops, in band order, each divided by its second-level factor); the
latency-hiding point loops; the SIMD loop is unrolled inside the body.
"""
from __future__ import annotations

import math

import sympy

from engine.compiler.architecture.footprint import footprint
from engine.compiler.architecture.io_groups import IOGroup
from engine.compiler.architecture.modules import Buffer, Loop, Module, Phase
from engine.compiler.architecture.symbols import DesignSymbols
from engine.compiler.expressions import evaluate, smax


def pe_loops(syms: DesignSymbols) -> tuple[Loop, ...]:
    design = syms.design
    loops = [Loop(f"{l}_tile", syms.tiles(l), "tile") for l in design.permutation.order]
    for l in design.band_loops:
        if l in design.space_loops:
            continue
        loops.append(Loop(f"{l}_time", syms.t1(l) / syms.t2(l), "time"))
    loops += [Loop(f"{l}_lh", syms.t2(l), "latency_hiding") for l in design.latency_hiding_loops]
    return tuple(loops)


def accumulation_ii(syms: DesignSymbols, groups: list[IOGroup], add_latency: int) -> sympy.Expr:
    """II of the PE pipeline. An accumulator updated again before the adder has finished stalls the
    pipeline: consecutive updates of one accumulator are separated by the latency-hiding iterations,
    so II = ceil(add_latency / prod(latency-hiding factors)) when an accumulation is carried by a
    time loop of the PE (the SIMD loop included: only t2 of its t1 values are unrolled into lanes).
    A reduction carried only across PEs (a reduction loop in space, none in time) does not."""
    design = syms.design
    extent = dict(zip(design.band_loops, design.problem_size))
    carried = any(g.kind == "acc" and any(l in g.invariant and l not in design.space_loops and extent[l] > 1
                                          for l in design.band_loops)
                  for g in groups)
    if not carried or add_latency <= 1:
        return sympy.Integer(1)
    independent = sympy.Mul(*(syms.t2(l) for l in design.latency_hiding_loops))
    return smax(1, sympy.ceiling(sympy.Integer(add_latency) / independent))


def iteration_distance(syms: DesignSymbols, distance: dict[str, int]) -> sympy.Expr:
    """PE loop iterations between two band points `distance` apart on the PE's time loops: the
    time loops in band order (t1/t2 iterations each), then the latency-hiding loops (t2 each). A
    distance on a latency-hiding loop moves the point along that loop (the nearest case)."""
    design = syms.design
    times = [l for l in design.band_loops if l not in design.space_loops]
    hiding = list(design.latency_hiding_loops)
    all_hiding = sympy.Mul(*(syms.t2(l) for l in hiding))
    total = sympy.Integer(0)
    for l, d in distance.items():
        if not d or l in design.space_loops:
            continue
        if l in hiding:
            stride = sympy.Mul(*(syms.t2(m) for m in hiding[hiding.index(l) + 1:]))
        else:
            stride = sympy.Mul(*(syms.t1(m) / syms.t2(m) for m in times[times.index(l) + 1:])) * all_hiding
        total += d * stride
    return total


def recurrence_ii(syms: DesignSymbols, recurrences: list[dict]) -> sympy.Expr:
    """II of the PE pipeline that a recurrence through the scop's local arrays allows: a value
    computed from one written `d` iterations earlier, through operators of `latency` cycles in all
    (engine/compiler/architecture/build.py `carried_recurrences`), starts at least `latency` cycles
    after it, so II >= ceil(latency / d), like an accumulator's. A recurrence carried across PEs
    (a distance on a space loop) bounds no PE's II (engine/models/recurrence.py times it)."""
    ii = sympy.Integer(1)
    for r in recurrences:
        if any(d for l, d in r["distance"].items() if l in syms.design.space_loops):
            continue
        distance = iteration_distance(syms, r["distance"])
        if distance == 0:
            continue
        ii = _max(ii, sympy.ceiling(sympy.Integer(r["latency"]) / distance))
    return ii


def _max(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    if a.is_number and b.is_number:
        return sympy.Max(a, b)
    return b if a == 1 else a if b == 1 else smax(a, b)


def straight_ready(statements: list[dict], point: dict[str, int]) -> dict[str, int]:
    """Array -> cycles after a straight-line body's reads at which its value at `point` is
    computed: the statements whose guards and bounds hold there, in order, each after its sources
    plus the operators from each (compute.statements[].from, resources/operators.json); a value
    read or received is ready at 0. The model (engine/models/recurrence.py) and the simulator
    (engine/sim/hardware.py) read it; the timed C simulation charges the same from the exported
    code (engine/csim/trace.py `_straight_line`)."""
    ready: dict[str, int] = {}
    for s in sorted(statements, key=lambda s: int(s["name"][1:])):  # the exporter's order: textual
        if not all(eval(c, {"__builtins__": {}}, point) for c in [*s.get("guards", []), *s.get("bounds", [])]):
            continue  # affine C conditions over the band loops
        ready[s["target"]] = max((ready.get(a, 0) + lat for a, lat in s.get("from", {}).items()), default=0)
    return ready


def pipelined_ready(statements: list[dict], carried: dict[str, int], ii: int) -> dict[str, int]:
    """Array -> the stage of a pipelined PE loop (cycles after the iteration's reads) at which its
    value is computed. HLS gives every iteration of a pipelined loop the same schedule whatever its
    guards, so an array's stage is the latest of the statements that write it, each after its
    same-iteration sources (`inputs`) plus the operators from them (`from`). A value read from an
    earlier iteration (`carried`: array -> PE loop iterations back, the local arrays carried along
    a time loop) is read no earlier than its writer's stage less those iterations' II cycles: LU's
    L_tmp, divided at i = k and multiplied at i = k + 1 with II 1, puts the multiply 15 cycles into
    the iteration and V out at 27 (division 16, multiply 4, subtract 8). A word a PE sends to the
    next one is written at its array's stage: the model (engine/models/recurrence.py), the
    simulator (engine/sim/hardware.py) and the timed C simulation (engine/csim/timed.py) read it.
    A value read or received is ready at 0. Where a cycle through carried reads takes more cycles
    than its iterations give at this II (no fixed point: an II smaller than `recurrence_ii` gives),
    the same-iteration stages are returned: a lower bound."""
    order = sorted(statements, key=lambda s: int(s["name"][1:]))  # the exporter's order: textual
    target = {s["name"]: s["target"] for s in order}
    stage: dict[str, int] = {}
    ready: dict[str, int] = {}
    for _ in range(2 * len(order) + 2):  # a carried read's stage depends on its writer's: to the fixed point
        before = dict(ready)
        for s in order:
            start = 0
            for array, latency in s.get("from", {}).items():
                same = [stage[x] for x in s.get("inputs", []) if target.get(x) == array and x in stage]
                if same:
                    at = max(same)
                elif array in carried:
                    at = max(0, ready.get(array, 0) - carried[array] * ii)
                else:
                    at = 0
                start = max(start, at + latency)
            stage[s["name"]] = start
            ready[s["target"]] = max(ready.get(s["target"], 0), start)
        if ready == before:
            return ready
    # no fixed point: a cycle through carried reads needs more cycles than its iterations give at
    # this II (a recurrence the II does not allow for): the same-iteration stages, a lower bound
    return pipelined_ready(statements, {}, ii) if carried else ready


def carried_iterations(local_arrays: list[dict], time: list[tuple[str, int]]) -> dict[str, int]:
    """Local array -> the PE loop iterations between its write and its read where its flow
    dependence is carried by a time loop of the PE (descriptor `local_arrays[].carried`): the
    distance times the trips of the time loops inside that loop. `time`: (band loop, trip) of the
    PE's time loops, outermost first. Arrays carried only along space loops (channels) are left out."""
    loops = [l for l, _ in time]
    result = {}
    for array in local_arrays:
        for c in array.get("carried", []):
            if c["loop"] in loops:
                inner = math.prod(t for _, t in time[loops.index(c["loop"]) + 1:])
                result[array["name"]] = min(result.get(array["name"], c["distance"] * inner), c["distance"] * inner)
    return result


def send_stages(descriptor: dict, values: dict[str, int]) -> dict[str, int]:
    """Local array -> the stage at which the PE's pipelined loop writes the word it sends along the
    array's channel (`pipelined_ready` over the descriptor's statements, carried arrays and II at
    `values`); only arrays with channels, none for a PE with no time loop (straight-line code:
    `straight_ready`)."""
    arrays = [a for a in descriptor.get("local_arrays", []) if a.get("channels")]
    pe = next((m for m in descriptor.get("topology", {}).get("modules", []) if m.get("kind") == "pe"), None)
    if not arrays or pe is None:
        return {}
    compute = pe["phases"][0]
    time = [(l["name"].removesuffix("_time"), round(evaluate(l["trip"], values)))
            for l in compute["loops"] if l["role"] == "time"]
    if not time:
        return {}
    ii = round(evaluate(compute["ii"], values))
    ready = pipelined_ready(descriptor.get("compute", {}).get("statements", []),
                            carried_iterations(descriptor.get("local_arrays", []), time), ii)
    return {a["name"]: ready.get(a["name"], 0) for a in arrays}


def carried_depth(statements: list[dict], arrays: list[dict], syms: DesignSymbols, ii: sympy.Expr) -> int:
    """The PE pipeline's depth where a carried read delays a statement (`pipelined_ready`'s latest
    stage, plus reading and writing the operands as in build.py `pipeline_depth`): every iteration
    of the loop takes that long to complete, so its last one does. 0 where no local array is
    carried along a time loop of the PE, or the trips are not numbers (several-statement designs
    take one tile per loop, t1 = the extent)."""
    design = syms.design
    whole = {sympy.Symbol(f"{l}_t1"): n for l, n in syms.sizes.items()}
    time = []
    for l in design.band_loops:
        if l in design.space_loops:
            continue
        trip = sympy.sympify(syms.t1(l) / syms.t2(l)).subs(whole)
        if not trip.is_Integer:
            return 0
        time.append((l, int(trip)))
    carried = carried_iterations(arrays, time)
    ii = sympy.sympify(ii).subs(whole).replace(smax, sympy.Max)
    if not carried or not ii.is_Integer:
        return 0
    return max(pipelined_ready(statements, carried, int(ii)).values(), default=-2) + 2


def build_pe(syms: DesignSymbols, groups: list[IOGroup], add_latency: int, depth: int,
             recurrences: list[dict] = (), *, overlap_drain: bool = False) -> Module:
    """The PE; its II is the larger of what its accumulation (`accumulation_ii`) and its recurrences
    through local arrays (`recurrence_ii`) allow: the one II the emitter's pragma, the models and
    the simulator read (descriptor `phases[compute].ii`).

    `overlap_drain` (a PE running one statement into one output): the accumulators are double
    buffered, so the results of an event are sent on while the next event computes into the other
    buffer (the module is `overlapped`: the exporter's compute and drain helpers side by side, two
    threads in the simulator, the model's `module_term`); otherwise the PE stops after every event
    to send its results (several statements, an output drained by its last writers:
    owned_drain.py turns it back)."""
    ranges = {l: syms.pe_range(l) for l in syms.design.band_loops}
    ii = accumulation_ii(syms, groups, add_latency)
    if recurrences:
        ii = _max(ii, recurrence_ii(syms, recurrences))
    phases = [Phase("compute", pe_loops(syms), f"{syms.simd} SIMD lanes of the statement", ii)]
    buffers = []
    overlap = overlap_drain and sum(g.kind in ("acc", "out") for g in groups) == 1
    for g in groups:
        if g.kind not in ("acc", "out"):
            continue
        local = footprint(g.access, ranges)
        buffers.append(Buffer(f"local_{g.name}", g.array, local, sympy.Integer(1), g.element_bits, overlap))
        phases.append(Phase(f"write_{g.name}", (Loop("events", g.loads, "tile"), Loop("elements", local, "transfer")),
                            f"send finished {g.array} elements out"))
        if g.reloads != 0 and not g.exterior:
            # (a reduction carried from PE to PE takes its partial results in at the first PE of the
            # chain, in the same loop as it sends its own on: no phase of its own)
            phases.append(Phase(f"read_{g.name}", (Loop("events", g.reloads, "tile"),
                                                   Loop("elements", local, "transfer")),
                                f"load partial {g.array} elements into the accumulator"))
    return Module("PE", "pe", syms.pe_count, syms.pe_grid, tuple(phases), buffers=tuple(buffers), depth=depth,
                  embedded_l1=any(g.exterior for g in groups), overlapped=overlap)
