"""Several-statement designs -> the cycles a recurrence carried from PE to PE adds to the far PEs' lag.

A PE that runs several statements (band.runs_several_statements, descriptor
`compute.several_statements`) may receive from its neighbour a value the neighbour computed from a
value it received itself: the scop's local arrays whose flow dependences cross a space loop
(descriptor `local_arrays[].channels`). In the triangular solve on a 2-D array, x[i] is divided on
the diagonal PE, passed down its column, multiplied into the partial sum there and the sum passed
right to the next diagonal PE: the diagonal PEs finish one after the other, each two hops after the
one before, and the last far later than `far_pe_lag`'s two cycles a PE.

Such designs take one tile per loop (t1 = the extent, no latency hiding, no SIMD: tuning.py), so
every PE's points are known numbers, and the critical path is computed exactly over them at the
design's sizes, from what the compiler states and the exporter builds
(engine/export/pe_statements.py):
- PE q runs the points of its time loops in order (band order, one point per II); a point where a
  channel's `receive_when` holds reads one word of the FIFO from the previous PE along the channel's
  loop, a point where `send_when` holds writes one (FIFO order: the m-th word a PE sends is the m-th
  its neighbour receives);
- a word arrives `hop` cycles after the cycle it is written in (the model's FIFO hop);
- in a pipelined loop a point's reads happen in its issue cycle (a point waits for its words, and
  the next point follows at the II) and a word it sends is written at the stage of the iteration
  where its value is computed (engine/compiler/architecture/pe.py `pipelined_ready`: HLS gives every
  iteration the same schedule, so LU's V leaves 27 cycles in, after the division of the
  iteration before and the multiply-subtract); a PE with no time loop runs its body once, outside
  any pipelined loop, and there every FIFO access is a step of its own in the body's order (each
  input operand read and passed on, then the channels it receives, then those it sends, each in the
  descriptor's order of local arrays and channels, as the exporter writes them).

  A word sent there waits for the operators that computed it after the last read
  (engine/compiler/architecture/pe.py `straight_ready`: the diagonal's division, the
  multiply-subtract), and the body ends when everything it computes is done; the PE term's
  pipeline depth already counts that end for a PE that waits for nobody.

That is how the timed C simulation (engine/csim/timed.py, the referee) times the exported code.

`recurrence_lag` is the cycles by which the PE that finishes last has its results out after the PE
the PE term counts (one that never waits for a neighbour and drains the most elements of each
output): its points' delay, less the elements it drains fewer (an output several PEs hold leaves
from its last writers); only PEs that drain something count. `late_band` gives that figure for
every such PE, with the share of each output drained after its box, for the drain's backlog
(symbolic.py `_band_tail`). The symbolic model
(engine/models/symbolic.py `_drain_tail`) lets that PE's box cross the drain levels after the
others'. Trisolve i-j__i-j at N = 8 / 12 / 16: 237 / 373 / 509 cycles, the same as between the
ends of PE(N-1,N-1) and PE(0,0) in the timed C simulation (each diagonal step: the division, the
multiply-subtract and the hops; before the operators were charged: 53 / 85 / 117 against 54 / 98 /
118). Sizes that are symbols (certify's symbolic sizes) give 0.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from engine.compiler.architecture.modules import Architecture
from engine.compiler.architecture.local_arrays import condition_holds, parse_c_condition
from engine.compiler.architecture.pe import carried_iterations, pipelined_ready, straight_ready
from engine.compiler.expressions import smax
from engine.compiler.last_writer import owned_elements

STEP_CYCLES = 1  # a FIFO access outside a pipelined loop (the timed C simulation's step)


def recurrence_lag(arch: Architecture, problem_size: dict[str, int], hop: int) -> sympy.Expr:
    """Cycles the last PE's last point issues after an undisturbed PE's (see the module docstring);
    0 where no local array crosses a space loop."""
    band = late_band(arch, problem_size, hop)
    return sympy.Integer(max([0] + [late for late, _, _ in band]))


def late_band(arch: Architecture, problem_size: dict[str, int],
              hop: int) -> list[tuple[int, tuple, dict[str, Fraction]]]:
    """Every PE that drains something, with the cycles its results are out after the undisturbed
    PE's (`recurrence_lag` is their largest): (late, PE index, output array -> the fraction of that
    array's drained elements that leave after this PE's). The drain levels pass their members'
    boxes in the lexicographic order of the PE index (engine/compiler/topology.py: a level's chain
    runs along the last index of its instances, each sending its own box first, then its
    successors'; a level's instance heads the row of the level below at index + (0,)), so a PE
    that finishes late with many words behind it in that order can end the drain later than the
    last PE (LU j-i__k-j-i: the PEs of the last column i, every row's last box). [] where no local
    array crosses a space loop or the sizes are not whole-tile numbers."""
    channels = [(a.name, ch) for a in arch.local_arrays for ch in a.channels]
    if not channels:
        return []
    whole = {sympy.Symbol(f"{loop}_t1"): n for loop, n in problem_size.items()}
    grid = [sympy.sympify(g).subs(whole) for g in arch.pe_grid]
    pe = arch.module("PE")
    compute = next(p for p in pe.phases if p.name == "compute")
    time = [(loop.name.removesuffix("_time"), sympy.sympify(loop.trip).subs(whole))
            for loop in compute.loops if loop.role == "time"]
    ii = sympy.sympify(compute.ii).subs(whole).replace(smax, sympy.Max)  # (several recurrences: smax of them)
    if not all(x.is_Integer for x in [*grid, *(t for _, t in time), ii]):
        return []
    grid, time, ii = [int(g) for g in grid], [(l, int(t)) for l, t in time], int(ii)
    space = list(arch.space_loops)
    if any(g != problem_size[l] for l, g in zip(space, grid)):
        return []  # a PE holding several values of a space loop: not a whole-tile design
    # the body's first accesses: each input read, and passed on to the next PE where a chain does so
    passed = [space.index(f.along) for g in arch.groups if g.kind == "in" for f in arch.fifos
              if f.array == g.array and f.pattern == "pe_chain" and not f.reversed and f.along in space]
    inputs = sum(1 for g in arch.groups if g.kind == "in")
    statements = arch.compute.get("statements", []) if not time else []
    # a pipelined PE writes a word it sends at its value's stage of the iteration (pe.py pipelined_ready)
    stages = pipelined_ready(arch.compute.get("statements", []),
                             carried_iterations([a.to_json() for a in arch.local_arrays], time), ii) if time else {}
    delays = _delays(space, grid, time, ii, channels, inputs, passed, hop, statements, stages)
    # the PE term drains, after its points, the most elements any PE drains of each output; an output
    # several PEs hold leaves from its last writers (owned_drain.py), so a PE late to finish its
    # points may drain fewer, and a PE that drains nothing finishes no results
    drained = {q: 0 for q in delays}
    most, draining = 0, set(delays) if any(g.kind == "out" and g.name not in arch.last_writers
                                           for g in arch.groups) else set()
    order = sorted(delays)  # the drain levels' order of the PEs' boxes
    after: dict[str, dict[tuple, Fraction]] = {}  # output array -> PE -> fraction drained after its box
    for g in arch.groups:
        if not g.needs_drain:
            continue
        text = arch.last_writers.get(g.name)
        if text is None:  # every PE drains its box
            counts = {q: 1 for q in order}
        else:
            owners = owned_elements({"last_writer": text}, problem_size, space, grid, {})
            if owners is None:
                return []
            most += max(len(e) for e in owners.values())
            counts = {q: len(owners[q]) for q in order}
            for q in order:
                drained[q] += counts[q]
                if counts[q]:
                    draining.add(q)
        total, behind = max(sum(counts.values()), 1), 0
        after[g.array] = {}
        for q in reversed(order):
            after[g.array][q] = Fraction(behind, total)
            behind += counts[q]
    return [(delays[q] + drained[q] - most, q, {a: f[q] for a, f in after.items()}) for q in order if q in draining]


def _delays(space: list[str], grid: list[int], time: list[tuple[str, int]], ii: int,
            channels: list[tuple[str, dict]], inputs: int, passed: list[int], hop: int,
            statements: list[dict] = (), stages: dict[str, int] | None = None) -> dict[tuple, int]:
    """PE index -> cycles its last point issues after an undisturbed PE's (both starting at 0).
    `statements` (compute.statements, a PE with no time loop): the operators between the values a
    PE reads and those it sends (`straight_ready`). `stages` (a PE with time loops): local array ->
    the stage of the pipelined iteration its sent word is written at (`pipelined_ready`)."""
    stages = stages or {}
    shape = [*grid, *(t for _, t in time)]
    index = np.indices(shape, dtype=np.int64).reshape(len(shape), *grid, -1)
    values = {l: index[k] for k, l in enumerate([*space, *(l for l, _ in time)])}
    points = index.shape[-1]
    # per channel, over every PE's points: where it receives (from the previous PE along the
    # channel's loop, which the first PE does not have) and sends (the last PE has no next one)
    flows = []
    for _, ch in channels:
        axis = space.index(ch["along"])
        receive, send = _holds(parse_c_condition(ch["receive_when"]), values), _holds(parse_c_condition(ch["send_when"]), values)
        receive[(slice(None),) * axis + (0,)] = False
        send[(slice(None),) * axis + (grid[axis] - 1,)] = False
        flows.append((axis, receive, send))
    sent: dict[tuple, list[np.ndarray]] = {}  # PE -> per channel: arrival cycle of each word it sends
    last = {}
    k = np.arange(points, dtype=np.int64) * ii
    for q in np.ndindex(*grid):
        receives = []  # (points that read a word, the words' arrival cycles)
        for c, (axis, receive, _) in enumerate(flows):
            at = np.flatnonzero(receive[q])
            if len(at):
                words = sent[q[:axis] + (q[axis] - 1,) + q[axis + 1:]][c]
                receives.append((at[:len(words)], words[:len(at)]))
        sends = [np.flatnonzero(send[q]) for _, _, send in flows]
        if time:
            # a point waits for its words; the next follows at the II: T_k = k II + max(0, max_{j<=k} A_j - j II)
            ready = np.zeros(points, dtype=np.int64)
            for at, words in receives:
                np.maximum.at(ready, at, words)
            issue = k + np.maximum(0, np.maximum.accumulate(ready - k))
            sent[q] = [issue[at] + hop + stages.get(name, 0) for (name, _), at in zip(channels, sends)]
            last[q] = int(issue[-1] - k[-1])
        else:
            # one run of the body: each FIFO access a step after the one before, reads waiting for their word
            # (a word sent waits for the operators that computed it after the last read, and the body
            # ends when all it computes is done: the PE term's pipeline depth counts that for a PE
            # that waits for nobody, so only a wait beyond the undisturbed PE's is lateness)
            accesses = inputs + sum(1 for axis in passed if q[axis] + 1 < grid[axis])
            t = undisturbed = (accesses - 1) * STEP_CYCLES
            for _, words in receives:
                if len(words):
                    t, undisturbed = max(t + STEP_CYCLES, int(words[0])), undisturbed + STEP_CYCLES
            ready = straight_ready(statements, dict(zip(space, q)))
            read_at, own = t, []
            for (name, _), at in zip(channels, sends):
                if len(at):
                    t, undisturbed = max(t + STEP_CYCLES, read_at + STEP_CYCLES + ready.get(name, 0)), \
                        undisturbed + STEP_CYCLES
                own.append(np.full(min(len(at), 1), t + hop, dtype=np.int64))
            sent[q] = own
            end = max(t, read_at + max(ready.values(), default=0))
            last[q] = end - undisturbed - max(_chain(statements), 0)
    return last


def _chain(statements: list[dict]) -> int:
    """The longest chain of operators through one point's statements (what the PE term's pipeline
    depth counts, engine/compiler/architecture/build.py pipeline_depth)."""
    ready: dict[str, int] = {}
    for s in statements:
        ready[s["name"]] = max([ready.get(x, 0) for x in s["inputs"]], default=0) + s["latency"]
    return max(ready.values(), default=0)


def _holds(condition: list, values: dict[str, np.ndarray]) -> np.ndarray:
    return condition_holds(condition, values, next(iter(values.values())).shape)
