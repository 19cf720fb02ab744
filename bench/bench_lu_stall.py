"""LU [k,j] (AutoSA's configuration): what Vitis's stalling pipelines would add to the PE array.

    python bench/bench_lu_stall.py [--sizes 12,16,20,24]

Vitis HLS pipelines a loop with one schedule for all iterations and, by default, stalls the whole
pipeline when an iteration's blocking FIFO read finds the FIFO empty (or a write finds it full):
the iterations already in flight stop too, so a word they send leaves later. The referee (the
timed C simulation, engine/csim/timed.py) and the simulator let issued iterations finish: a read
stall delays only the iterations after it. With LU's V sent 27 cycles into the iteration
(engine/compiler/architecture/pe.py `send_stages`), up to 27 iterations are in flight when a PE
waits for its neighbours, and each PE down a column meets the stalls of the one above.

This is a cycle-stepped model of the PE array alone (N x N PEs, II 1, A always available, FIFO
depth 2, a word readable 2 cycles after its write), with the descriptor's channels (`receive_when`
and `send_when` of V along k and U_tmp along j, evaluated at every point) and stages, run twice:
issued iterations always complete (the referee's rule) and the whole pipeline stalls (Vitis's
default). The difference is an estimate of the cycles the first rule does not charge; it is not in
the model, the simulator or the timed C simulation (docs/export.md, "LU beside AutoSA's RTL
figures").
"""
from __future__ import annotations

import argparse
from collections import deque

from engine.compiler.architecture.local_arrays import condition_holds, parse_c_condition
from engine.compiler.architecture.pe import send_stages
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from engine.sim.segments import IO_LATENCY

AUTOSA_STRING = "{kernel[]->space_time[3];kernel[]->array_part[-1,-1,-1];kernel[]->latency[]}"
FIFO_DEPTH = 2


def _condition(text: str):
    """A channel's affine C condition as a predicate over a point (the simulator's reader)."""
    parsed = parse_c_condition(text)
    return lambda point: bool(condition_holds(parsed, point, ()))


def array_cycles(n: int, descriptor: dict, stages: dict[str, int], stall_all: bool) -> int:
    """Cycle the PE array's last iteration completes (its deepest stage)."""
    space = descriptor["topology"]["space_loops"]
    channels = []  # (array, axis, receive predicate, send predicate, stage)
    for a in descriptor["local_arrays"]:
        for ch in a.get("channels", []):
            channels.append((a["name"], space.index(ch["along"]), _condition(ch["receive_when"]),
                             _condition(ch["send_when"]), stages.get(a["name"], 0)))
    time_loop = next(l for l in descriptor["design"]["band_loops"] if l not in space)
    pes = [(a, b) for a in range(n) for b in range(n)]
    fifo: dict[tuple, deque] = {}
    deepest = max([s for *_, s in channels] + [0])
    state = {p: {"next": 0, "inflight": [], "done": None} for p in pes}

    def neighbour(p, axis, step):
        q = list(p)
        q[axis] += step
        return tuple(q) if 0 <= q[axis] < n else None

    def point(p, i):
        return {**dict(zip(space, p)), time_loop: i}

    cycle, finished = 0, 0
    while finished < len(pes):
        cycle += 1
        actions = []
        for p in pes:
            st = state[p]
            if st["done"] is not None:
                continue
            i = st["next"]
            reads = []
            if i < n:
                for _, axis, receive, _, _ in channels:
                    source = neighbour(p, axis, -1)
                    if source is not None and receive(point(p, i)):
                        reads.append(fifo.setdefault((source, p, axis), deque()))
            can_issue = i < n and all(q and q[0] <= cycle for q in reads)

            def due(iterations):
                out = []
                for it, age in iterations:
                    for _, axis, _, send, stage in channels:
                        target = neighbour(p, axis, 1)
                        if age == stage and target is not None and send(point(p, it)):
                            out.append(fifo.setdefault((p, target, axis), deque()))
                return out
            writes = due(st["inflight"])
            new = due([(i, 0)]) if can_issue else []
            full = any(len(q) >= FIFO_DEPTH for q in writes + new)
            issue = can_issue and not full
            actions.append((st, issue, reads, writes + (new if issue else []), (i < n and not issue) or full))
        for st, issue, reads, writes, stalled in actions:
            if stall_all and stalled:
                continue  # nothing in the pipeline moves
            for q in writes:
                q.append(cycle + IO_LATENCY)
            if issue:
                for q in reads:
                    q.popleft()
            for it in st["inflight"]:
                it[1] += 1
            if issue:
                st["inflight"].append([st["next"], 1])
                st["next"] += 1
            st["inflight"] = [it for it in st["inflight"] if it[1] <= deepest]
            if st["next"] >= n and not st["inflight"]:
                st["done"] = cycle
                finished += 1
    return max(s["done"] for s in state.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="12,16,20,24")
    args = parser.parse_args()
    device = load_device("u250")
    print(f"{'N':>3} {'stages':>18} {'iterations complete':>19} {'whole pipeline stalls':>21} {'difference':>10}")
    for n in (int(x) for x in args.sizes.split(",")):
        space = compile_kernel(KERNELS / "lu.c", defines=[f"N={n}"])
        selection = select(space, AUTOSA_STRING)
        model = PerformanceModel(space, selection.design, device)
        report = evaluate_configuration(model, selection.params)
        descriptor = build_descriptor(space, selection.design, model.architecture)
        stages = send_stages(descriptor, report["params"])
        free = array_cycles(n, descriptor, stages, stall_all=False)
        stalled = array_cycles(n, descriptor, stages, stall_all=True)
        text = ", ".join(f"{a} {s}" for a, s in stages.items())
        print(f"{n:3d} {text:>18} {free:19d} {stalled:21d} {stalled - free:10d}")


if __name__ == "__main__":
    main()
