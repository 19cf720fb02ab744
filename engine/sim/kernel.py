"""Network of threads and bounded FIFOs -> the cycle of every token (the simulation kernel).

A thread runs a list of segments (pipelined loops); a segment issues `n` iterations, one every
`ii` cycles, and each of its FIFO operations moves `count` tokens spread evenly over its span of
iterations. Timing rules (docs/sim.md):
- iteration i issues at max(previous issue + ii, the read tokens' arrival, the cycle each written
  token finds a free slot); a segment that starts a new loop waits until the previous loop has
  completed (its last issue + its depth);
- a token written at issue s arrives at s + latency; the slot of token w frees one cycle after
  token w - depth was read, and a write that reaches its slot `latency` cycles after issue may
  issue that much earlier.

There is no global clock. Processes are Kahn processes (blocking reads and writes, no polling), so
each thread advances as far as the tokens already timed allow, then waits on one FIFO; when no
thread can advance and some are unfinished, the wait-for edges contain a cycle: a deadlock,
whatever the timing. Idle cycles cost nothing.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


class Fifo:
    __slots__ = (
        "arrivals",
        "blocked_reader",
        "blocked_writer",
        "consumer",
        "depth",
        "internal",
        "last_reads",
        "name",
        "peak",
        "producer",
        "read",
        "width_bits",
        "written",
    )

    def __init__(self, name: str, depth: int, *, internal: bool = False):
        self.name, self.depth, self.internal = name, depth, internal
        self.arrivals: deque[int] = deque()  # arrival cycle of each written, unread token
        self.written = self.read = 0
        self.last_reads: deque[int] = deque(maxlen=max(depth, 1))  # read cycles of the last `depth` tokens
        self.producer: Thread | None = None
        self.consumer: Thread | None = None
        self.peak = 0
        self.width_bits = 0
        self.blocked_reader: Thread | None = None  # a thread waiting for a token
        self.blocked_writer: Thread | None = None  # a thread waiting for a free slot

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

    full_rate: bool = field(init=False, default=False)  # every operation moves a token each iteration

    def __post_init__(self):
        object.__setattr__(self, "full_rate", all(op.count == self.n and op.first == 0 and op.span in (None, self.n)
                                                  for op in self.reads + self.writes))


@dataclass
class Thread:
    name: str  # module instance, plus the thread's role for double-buffered modules
    module: str
    segments: list  # iterable of Segment, consumed lazily
    busy: int = 0
    stall_in: int = 0
    stall_out: int = 0
    end: int = 0  # completion of its last loop
    done: bool = False
    waiting: tuple | None = None  # (fifo, "in"|"out") while blocked
    over_budget: bool = False
    iterations: int = 0
    _it: object = None
    _seg: Segment | None = None
    _i: int = 0
    _last: int = 0  # last issue cycle
    _start: int = 0  # earliest first issue of the current segment
    _gap: int = 0  # pipeline drain before the current segment (counted busy)
    _next: list = field(default_factory=list)  # per op: tokens moved in this segment


class Stopped(Exception):
    pass


def _next_segment(th: Thread) -> bool:
    prev = th._seg
    for seg in th._it:
        if seg.n <= 0:
            continue
        if prev is None:
            start = 0
        elif seg.new_loop:
            start = th._last + prev.depth
        else:
            start = th._last + prev.ii
        if prev is not None and seg.new_loop:
            th.end = max(th.end, th._last + prev.depth)
        # cycles between the previous loop's last iteration and this loop's first: its pipeline draining
        th._gap = start - (th._last + prev.ii) if prev is not None else 0
        th._seg, th._i, th._start = seg, 0, start
        th._next = [0] * (len(seg.reads) + len(seg.writes))
        return True
    if prev is not None:
        th.end = max(th.end, th._last + prev.depth)
    th._seg, th.done = None, True
    return False


def _block(th: Thread, i: int, f: Fifo, side: str) -> None:
    th._i, th.waiting = i, (f, side)
    if side == "in":
        f.blocked_reader = th
    else:
        f.blocked_writer = th


def _take(f: Fifo, s: int, wake: list) -> None:
    arrival = f.arrivals.popleft()
    occ = 1  # occupancy when this token arrived: itself plus earlier tokens still unread then
    for r in reversed(f.last_reads):
        if r < arrival:
            break
        occ += 1
    f.peak = max(f.peak, occ)
    f.read += 1
    f.last_reads.append(s)
    if f.blocked_writer is not None:
        wake.append(f.blocked_writer)
        f.blocked_writer = None


def _put(f: Fifo, t: int, wake: list) -> None:
    f.arrivals.append(t)
    f.written += 1
    if f.blocked_reader is not None:
        wake.append(f.blocked_reader)
        f.blocked_reader = None


def _advance(th: Thread, budget: int, wake: list) -> None:
    """Issue iterations until the thread blocks, finishes or passes the budget."""
    if th._seg is None and not _next_segment(th):
        return
    while True:
        seg = th._seg
        if seg.full_rate:
            if not _advance_full_rate(th, seg, budget, wake):
                return
        elif not _advance_general(th, seg, budget, wake):
            return
        th._i = seg.n
        if not _next_segment(th):
            return


def _advance_full_rate(th: Thread, seg: Segment, budget: int, wake: list) -> bool:
    n, ii, lat, earliest = seg.n, seg.ii, seg.latency, seg.earliest
    rf = [op.fifo for op in seg.reads]
    wf = [op.fifo for op in seg.writes]
    i, last = th._i, th._last
    busy = stall_in = stall_out = 0
    try:
        while i < n:
            if i == 0:
                base = th._start
            else:
                base = last + ii
            s, cause = base, 0
            if earliest > s:
                s, cause = earliest, 1
            for f in rf:
                if f.written == f.read:
                    _block(th, i, f, "in")
                    return False
                t = f.arrivals[0]
                if t > s:
                    s, cause = t, 1
            for f in wf:
                w, depth = f.written, f.depth
                if w - f.read >= depth:
                    _block(th, i, f, "out")
                    return False
                if w >= depth:
                    t = f.last_reads[w - depth - f.read + len(f.last_reads)] + 1 - lat
                    if t > s:
                        s, cause = t, 2
            if s > budget:
                th._i, th.over_budget = i, True
                raise Stopped
            for f in rf:  # _take, inlined: this loop is the simulator's hot path
                arrival = f.arrivals.popleft()
                reads = f.last_reads
                occ = 1
                if reads and reads[-1] >= arrival:
                    for r in reads:
                        if r >= arrival:
                            occ += 1
                f.peak = max(f.peak, occ)
                f.read += 1
                reads.append(s)
                if f.blocked_writer is not None:
                    wake.append(f.blocked_writer)
                    f.blocked_writer = None
            t = s + lat
            for f in wf:
                f.arrivals.append(t)
                f.written += 1
                if f.blocked_reader is not None:
                    wake.append(f.blocked_reader)
                    f.blocked_reader = None
            if cause == 1:
                stall_in += s - base
            elif cause == 2:
                stall_out += s - base
            busy += ii + (th._gap if i == 0 else 0)
            last = s
            th.iterations += 1
            i += 1
        return True
    finally:
        th._last = last
        th.busy += busy
        th.stall_in += stall_in
        th.stall_out += stall_out


def _advance_general(th: Thread, seg: Segment, budget: int, wake: list) -> bool:
    n, ii, lat = seg.n, seg.ii, seg.latency
    reads, writes, nxt = seg.reads, seg.writes, th._next
    nr = len(reads)
    i = th._i
    while i < n:
        if i == 0:
            base = th._start
        else:
            base = th._last + ii
        s, cause = base, 0
        if seg.earliest > s:
            s, cause = seg.earliest, 1
        due_r, due_w = [], []
        for k, op in enumerate(reads):
            j = nxt[k]
            if j < op.count and op.first + (j * (op.span or n)) // op.count == i:
                f = op.fifo
                if f.written == f.read:
                    _block(th, i, f, "in")
                    return False
                t = f.arrivals[0]
                if t > s:
                    s, cause = t, 1
                due_r.append(k)
        for k, op in enumerate(writes):
            j = nxt[nr + k]
            if j < op.count and op.first + ((j + 1) * (op.span or n) + op.count - 1) // op.count - 1 == i:
                f = op.fifo
                w, depth = f.written, f.depth
                if w - f.read >= depth:
                    _block(th, i, f, "out")
                    return False
                if w >= depth:
                    t = f.last_reads[w - depth - f.read + len(f.last_reads)] + 1 - lat
                    if t > s:
                        s, cause = t, 2
                due_w.append(k)
        if s > budget:
            th._i, th.over_budget = i, True
            raise Stopped
        for k in due_r:
            _take(reads[k].fifo, s, wake)
            nxt[k] += 1
        for k in due_w:
            _put(writes[k].fifo, s + lat, wake)
            nxt[nr + k] += 1
        if cause == 1:
            th.stall_in += s - base
        elif cause == 2:
            th.stall_out += s - base
        th.busy += ii + (th._gap if i == 0 else 0)
        th._last = s
        th.iterations += 1
        i += 1
    return True


@dataclass
class Outcome:
    cycles: int
    deadlock: list | None  # the wait cycle: [(thread, fifo, "in"|"out"), ...]
    over_budget: bool


def run(threads: list[Thread], fifos: list[Fifo], budget: int) -> Outcome:
    for th in threads:
        th._it = iter(th.segments)
    # a blocked thread waits on exactly one FIFO, which wakes it (appends it to the queue) once
    queue = deque(threads)
    stopped = False
    while queue:
        th = queue.popleft()
        if th.done or th.over_budget:
            continue
        th.waiting = None
        try:
            _advance(th, budget, queue)
        except Stopped:
            stopped = True
    cycles = max((th.end if th.done else th._last for th in threads), default=0)
    blocked = [th for th in threads if not th.done and not th.over_budget]
    if not blocked:
        return Outcome(min(cycles, budget) if stopped else cycles, None, stopped)
    return Outcome(cycles, _wait_cycle(blocked), stopped)


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
