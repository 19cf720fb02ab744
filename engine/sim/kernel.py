"""Network of threads and bounded FIFOs -> the cycle of every token (the simulation kernel).

A thread runs a list of segments (pipelined loops); a segment issues `n` iterations, one every
`ii` cycles, and each of its FIFO operations moves `count` tokens spread evenly over its span of
iterations. Timing rules (docs/sim.md):
- iteration i issues at max(previous issue + ii, the read tokens' arrival, the cycle each written
  token finds a free slot); a segment that starts a new loop waits until the previous loop has
  completed (its last issue + its depth);
- a token written at issue s arrives at s + latency (+ its op's delay, + its FIFO's `latency`: the
  relay stages of an SLR crossing, engine/floorplan/pipeline.py); the slot of token w frees one cycle after
  token w - depth was read, and a write that reaches its slot `latency` cycles after issue may
  issue that much earlier.

There is no global clock. Processes are Kahn processes (blocking reads and writes, no polling), so
each thread advances as far as the tokens already timed allow, then waits on one FIFO; when no
thread can advance and some are unfinished, the wait-for edges contain a cycle: a deadlock,
whatever the timing. Idle cycles cost nothing.

`run` flattens the network into arrays for the compiled loop of engine/sim/kernel_arrays.py and
copies the counters back onto the threads and FIFOs.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.sim import kernel_arrays as K


class Fifo:
    __slots__ = ("arrivals", "consumer", "depth", "internal", "latency", "name", "peak", "producer", "read",
                 "width_bits", "written")

    def __init__(self, name: str, depth: int, *, internal: bool = False):
        self.name, self.depth, self.internal = name, depth, internal
        self.arrivals: deque[int] = deque()  # arrival cycle of each token present before the run
        self.written = self.read = 0
        self.producer: Thread | None = None
        self.consumer: Thread | None = None
        self.peak = 0
        self.width_bits = 0
        self.latency = 0  # cycles every written token spends in the FIFO's pipeline (an SLR crossing's)

    def preload(self, tokens: int) -> None:
        """Tokens present at cycle 0 (free buffers of a ping-pong pair)."""
        self.arrivals.extend([0] * tokens)
        self.written += tokens


@dataclass(frozen=True)
class Op:
    fifo: Fifo
    count: int  # tokens over the span
    first: int = 0  # first iteration of the span
    span: int | None = None  # iterations the tokens are spread over (default: the whole segment)
    delay: int = 0  # a written token's cycles beyond the segment's latency (its value's pipeline stage)


@dataclass(frozen=True)
class Segment:
    n: int
    reads: tuple[Op, ...] = ()
    writes: tuple[Op, ...] = ()
    ii: int = 1
    new_loop: bool = True  # waits for the previous loop's completion before its first issue
    depth: int = 2  # cycles from the last issue to the loop's completion
    latency: int = 2  # cycles from issue to a written token's arrival
    earliest: int = 0  # no iteration before this cycle (DRAM read latency)
    pace: float = 0.0  # a DRAM port's cycles per word (engine/models/dram.py), 0: not a DRAM loop


@dataclass
class Thread:
    name: str  # module instance, plus the thread's role for double-buffered modules
    module: str
    segments: list  # iterable of Segment, consumed once by `run`
    busy: int = 0
    stall_in: int = 0
    stall_out: int = 0
    end: int = 0  # completion of its last loop
    done: bool = False
    waiting: tuple | None = None  # (fifo, "in"|"out") while blocked
    over_budget: bool = False
    iterations: int = 0
    _i: int = 0  # iteration of the current segment it stopped at
    _last: int = 0  # last issue cycle


@dataclass
class Outcome:
    cycles: int
    deadlock: list | None  # the wait cycle: [(thread, fifo, "in"|"out"), ...]
    over_budget: bool


def run(threads: list[Thread], fifos: list[Fifo], budget: int) -> Outcome:
    fifos = list(fifos)
    arrays = _flatten(threads, fifos)
    state, fstate = arrays["state"], arrays["fstate"]
    stopped = K.run_arrays(budget, state, arrays["thread_segs"], arrays["seg"], arrays["op"], arrays["fifo"],
                           fstate, arrays["ring"], arrays["reads_ring"], arrays["max_ops"])
    for t, th in enumerate(threads):
        row = state[t]
        th.busy, th.stall_in, th.stall_out = int(row[K.BUSY]), int(row[K.STALL_IN]), int(row[K.STALL_OUT])
        th.end, th.done, th.over_budget = int(row[K.END]), bool(row[K.DONE]), bool(row[K.OVER])
        th.iterations, th._i, th._last = int(row[K.ITERS]), int(row[K.I]), int(row[K.LAST])
        blocked = not th.done and not th.over_budget and row[K.WAIT_FIFO] >= 0
        th.waiting = (fifos[row[K.WAIT_FIFO]], "in" if row[K.WAIT_SIDE] == 0 else "out") if blocked else None
    for k, f in enumerate(fifos):
        f.written, f.read, f.peak = int(fstate[k, K.WRITTEN]), int(fstate[k, K.READ]), int(fstate[k, K.PEAK])
    cycles = max((th.end if th.done else th._last for th in threads), default=0)
    blocked = [th for th in threads if not th.done and not th.over_budget]
    if not blocked:
        return Outcome(min(cycles, budget) if stopped else cycles, None, bool(stopped))
    return Outcome(cycles, _wait_cycle(blocked), bool(stopped))


def _flatten(threads: list[Thread], fifos: list[Fifo]) -> dict:
    """Threads, segments, ops and FIFOs as the int64 arrays kernel_arrays reads (layout there).
    Consumes the threads' segment iterables; appends to `fifos` any FIFO only a segment mentions."""
    index = {id(f): k for k, f in enumerate(fifos)}

    def fifo_index(f: Fifo) -> int:
        if id(f) not in index:
            index[id(f)] = len(fifos)
            fifos.append(f)
        return index[id(f)]

    seg_rows, op_rows, thread_segs = [], [], []
    max_ops = 0
    for th in threads:
        first = len(seg_rows)
        for seg in th.segments:
            if seg.n <= 0:
                continue  # a loop that does not run: no issue, no drain
            ops = seg.reads + seg.writes
            seg_rows.append((seg.n, seg.ii, int(seg.new_loop), seg.depth, seg.latency, seg.earliest,
                             len(op_rows), len(seg.reads), len(seg.writes), K.pace_units(seg.pace)))
            op_rows.extend((fifo_index(o.fifo), o.count, o.first, seg.n if o.span is None else o.span,
                            o.delay + (o.fifo.latency if k >= len(seg.reads) else 0))
                           for k, o in enumerate(ops))
            max_ops = max(max_ops, len(ops))
        thread_segs.append((first, len(seg_rows)))
    fifo_rows, ring_size, reads_size = [], 0, 0
    for f in fifos:
        size = max(f.depth, len(f.arrivals), 1)  # unread tokens never exceed the depth (or the preload)
        fifo_rows.append((f.depth, ring_size, size, reads_size, max(f.depth, 1)))
        ring_size += size
        reads_size += max(f.depth, 1)
    ring = np.zeros(max(ring_size, 1), dtype=np.int64)
    fstate = np.zeros((len(fifos), K.FIFO_STATE), dtype=np.int64)
    for k, f in enumerate(fifos):
        offset, size = fifo_rows[k][1], fifo_rows[k][2]
        for w, arrival in enumerate(f.arrivals, start=f.read):
            ring[offset + w % size] = arrival
        fstate[k] = (f.written, f.read, f.peak, -1, -1)
    state = np.zeros((len(threads), K.THREAD_STATE), dtype=np.int64)
    state[:, K.CUR] = -1
    state[:, K.WAIT_FIFO] = -1
    return {"state": state, "thread_segs": np.array(thread_segs, dtype=np.int64).reshape(-1, 2),
            "seg": np.array(seg_rows, dtype=np.int64).reshape(-1, K.SEG_COLUMNS),
            "op": np.array(op_rows, dtype=np.int64).reshape(-1, 5),
            "fifo": np.array(fifo_rows, dtype=np.int64).reshape(-1, 5), "fstate": fstate, "ring": ring,
            "reads_ring": np.zeros(max(reads_size, 1), dtype=np.int64), "max_ops": max_ops}


def _wait_cycle(blocked: list[Thread]) -> list | None:
    """Follow wait-for edges from a blocked thread until one repeats: that loop is the deadlock.
    None when the chain ends at a thread stopped by the budget (not a deadlock)."""
    start = blocked[0]
    path, seen = [], {}
    th = start
    while th is not None and id(th) not in seen:
        if th.waiting is None:
            return None if th.over_budget else [(th, None, "finished")]
        fifo, side = th.waiting
        seen[id(th)] = len(path)
        path.append((th, fifo, side))
        th = fifo.producer if side == "in" else fifo.consumer
        if th is not None and (th.done or th.over_budget):
            if th.over_budget:
                return None
            return path[-1:]  # starved by a finished producer / a consumer that stopped reading
    if th is None:
        return path[-1:]
    return path[seen[id(th)]:]
