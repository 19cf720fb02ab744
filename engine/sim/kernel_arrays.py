"""A network flattened into arrays -> the cycle of every token: the simulation kernel's hot loop,
compiled by numba.

engine/sim/kernel.py states the timing rules and owns the objects (threads, FIFOs, segments); it
flattens them into the arrays below, calls `run_arrays` and copies the counters back. The loop is
plain Python over numpy arrays so that numba compiles it to machine code (a pure-Python run of
the same code, NUMBA_DISABLE_JIT=1, gives the same answers about 100x slower).

Layout (all int64):
- segments: `seg[s] = (n, ii, new_loop, depth, latency, earliest, first_op, reads, writes, pace)`;
  the ops of segment s are first_op .. first_op + reads + writes - 1, reads first; `pace` (in
  1/PACE_UNIT cycles, 0 for none) is a DRAM port's cycles per bus word (engine/models/dram.py
  `cycles_per_beat`): iteration i issues no earlier than the segment's anchor + i * pace, so an
  AXI port that sustains less than a word a cycle paces its loop (and may catch up after a stall,
  as the adapter's outstanding bursts keep arriving); the port is the thread's, so a paced segment's
  first iteration issues no earlier than a pace after the slot of the previous paced invocation's
  last word (state `PORT`, in 1/PACE_UNIT cycles, kept exact), and the anchor (`ANCHOR`) is that
  slot or the first issue, whichever is later: n words cost n paces whatever the invocations
  (engine/models/symbolic.py `phase_cycles` charges the same);
- ops: `op[o] = (fifo, count, first, span, delay)`, span already resolved (the segment's n by
  default); `delay`: cycles a written token takes beyond the segment's latency (the stage of a
  pipelined iteration at which its value is computed, engine/compiler/architecture/pe.py
  `pipelined_ready`), 0 for reads;
- threads: `thread_segs[t] = (first segment, end)`; `state[t]` the counters below;
- FIFOs: `fifo[f] = (depth, ring offset, ring size, last-reads offset, last-reads size)` into the
  flat rings `ring` (arrival cycle of token w at w mod size) and `reads_ring` (read cycle of token
  r at r mod size); `fstate[f] = (written, read, peak, blocked reader, blocked writer)`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# thread state columns
(CUR, I, LAST, START, GAP, BUSY, STALL_IN, STALL_OUT, END, DONE, OVER, ITERS, WAIT_FIFO, WAIT_SIDE, ANCHOR,
 PORT) = range(16)
THREAD_STATE = 16
# FIFO state columns
WRITTEN, READ, PEAK, READER, WRITER = range(5)
FIFO_STATE = 5
# segment columns
N, II, NEW_LOOP, DEPTH, LATENCY, EARLIEST, FIRST_OP, READS, WRITES, PACE = range(10)
SEG_COLUMNS = 10
PACE_UNIT = 1024  # pace is stored in 1/1024 cycles
# op columns
O_FIFO, O_COUNT, O_FIRST, O_SPAN, O_DELAY = range(5)
# FIFO columns
F_DEPTH, F_RING, F_RING_SIZE, F_READS, F_READS_SIZE = range(5)

_ADVANCED, _BLOCKED, _STOPPED = 0, 1, 2


@njit(cache=True)
def _next_segment(t, state, thread_segs, seg):
    """Move thread t to its next segment; False (and done) when it has none left."""
    prev = state[t, CUR]
    k = thread_segs[t, 0] if prev < 0 else prev + 1
    last = state[t, LAST]
    if k < thread_segs[t, 1]:
        if prev < 0:
            start = 0
            state[t, GAP] = 0
        else:
            if seg[k, NEW_LOOP]:
                start = last + seg[prev, DEPTH]
                state[t, END] = max(state[t, END], last + seg[prev, DEPTH])
            else:
                start = last + seg[prev, II]
            # cycles between the previous loop's last iteration and this loop's first: its pipeline draining
            state[t, GAP] = start - (last + seg[prev, II])
        state[t, CUR], state[t, I], state[t, START] = k, 0, start
        return True
    if prev >= 0:
        state[t, END] = max(state[t, END], last + seg[prev, DEPTH])
    state[t, DONE] = 1
    return False


@njit(cache=True)
def _wake(queue, qtail, thread):
    queue[qtail[0] % queue.shape[0]] = thread
    qtail[0] += 1


@njit(cache=True)
def _advance(t, budget, state, thread_segs, seg, op, op_next, fifo, fstate, ring, reads_ring, due,
             queue, qtail):
    """Issue thread t's iterations until it blocks (_BLOCKED), passes the budget (_STOPPED) or
    finishes (_ADVANCED)."""
    if state[t, CUR] < 0 and not _next_segment(t, state, thread_segs, seg):
        return _ADVANCED
    while True:
        k = state[t, CUR]
        n, ii, lat, earliest = seg[k, N], seg[k, II], seg[k, LATENCY], seg[k, EARLIEST]
        o0, nr, nw, pace = seg[k, FIRST_OP], seg[k, READS], seg[k, WRITES], seg[k, PACE]
        i = state[t, I]
        while i < n:
            base = state[t, START] if i == 0 else state[t, LAST] + ii
            s, cause = base, 0
            if earliest > s:
                s, cause = earliest, 1
            if pace > 0:
                paced = (state[t, ANCHOR] + i * pace if i > 0 else state[t, PORT]) // PACE_UNIT
                if paced > s:
                    s, cause = paced, 1  # waiting for the DRAM port's words
            for o in range(o0, o0 + nr):
                j, count = op_next[o], op[o, O_COUNT]
                due[o - o0] = 0
                if j < count and op[o, O_FIRST] + (j * op[o, O_SPAN]) // count == i:
                    f = op[o, O_FIFO]
                    if fstate[f, WRITTEN] == fstate[f, READ]:
                        state[t, I], state[t, WAIT_FIFO], state[t, WAIT_SIDE] = i, f, 0
                        fstate[f, READER] = t
                        return _BLOCKED
                    arrival = ring[fifo[f, F_RING] + fstate[f, READ] % fifo[f, F_RING_SIZE]]
                    if arrival > s:
                        s, cause = arrival, 1
                    due[o - o0] = 1
            for o in range(o0 + nr, o0 + nr + nw):
                j, count = op_next[o], op[o, O_COUNT]
                due[o - o0] = 0
                if j < count and op[o, O_FIRST] + ((j + 1) * op[o, O_SPAN] + count - 1) // count - 1 == i:
                    f = op[o, O_FIFO]
                    w, depth = fstate[f, WRITTEN], fifo[f, F_DEPTH]
                    if w - fstate[f, READ] >= depth:
                        state[t, I], state[t, WAIT_FIFO], state[t, WAIT_SIDE] = i, f, 1
                        fstate[f, WRITER] = t
                        return _BLOCKED
                    if w >= depth:
                        # the slot of token w frees one cycle after token w - depth was read
                        freed = (reads_ring[fifo[f, F_READS] + (w - depth) % fifo[f, F_READS_SIZE]] + 1 - lat
                                 - op[o, O_DELAY])
                        if freed > s:
                            s, cause = freed, 2
                    due[o - o0] = 1
            if s > budget:
                state[t, I], state[t, OVER] = i, 1
                return _STOPPED
            for o in range(o0, o0 + nr):
                if due[o - o0]:
                    f = op[o, O_FIFO]
                    r = fstate[f, READ]
                    arrival = ring[fifo[f, F_RING] + r % fifo[f, F_RING_SIZE]]
                    # occupancy when this token arrived: itself plus earlier tokens still unread then
                    size, base_r = fifo[f, F_READS_SIZE], fifo[f, F_READS]
                    occ = 1
                    q = r - 1
                    while q >= 0 and q >= r - size and reads_ring[base_r + q % size] >= arrival:
                        occ += 1
                        q -= 1
                    if occ > fstate[f, PEAK]:
                        fstate[f, PEAK] = occ
                    reads_ring[base_r + r % size] = s
                    fstate[f, READ] = r + 1
                    op_next[o] += 1
                    if fstate[f, WRITER] >= 0:
                        _wake(queue, qtail, fstate[f, WRITER])
                        fstate[f, WRITER] = -1
            for o in range(o0 + nr, o0 + nr + nw):
                if due[o - o0]:
                    f = op[o, O_FIFO]
                    w = fstate[f, WRITTEN]
                    ring[fifo[f, F_RING] + w % fifo[f, F_RING_SIZE]] = s + lat + op[o, O_DELAY]
                    fstate[f, WRITTEN] = w + 1
                    op_next[o] += 1
                    if fstate[f, READER] >= 0:
                        _wake(queue, qtail, fstate[f, READER])
                        fstate[f, READER] = -1
            if cause == 1:
                state[t, STALL_IN] += s - base
            elif cause == 2:
                state[t, STALL_OUT] += s - base
            state[t, BUSY] += ii + (state[t, GAP] if i == 0 else 0)
            state[t, LAST] = s
            if pace > 0:  # the port's next word slot
                if i == 0:
                    state[t, ANCHOR] = max(s * PACE_UNIT, state[t, PORT])
                state[t, PORT] = state[t, ANCHOR] + (i + 1) * pace
            state[t, ITERS] += 1
            i += 1
        state[t, I] = n
        if not _next_segment(t, state, thread_segs, seg):
            return _ADVANCED


@njit(cache=True)
def run_arrays(budget, state, thread_segs, seg, op, fifo, fstate, ring, reads_ring, max_ops):
    """Run every thread until all are done, blocked or stopped by the budget; True when the budget
    stopped one. Threads are Kahn processes: a blocked thread waits on one FIFO, whose other end
    wakes it (puts it back in the queue)."""
    threads = state.shape[0]
    queue = np.empty(2 * threads + 2, dtype=np.int64)
    for t in range(threads):
        queue[t] = t
    qhead, qtail = 0, np.array([threads], dtype=np.int64)
    op_next = np.zeros(op.shape[0], dtype=np.int64)
    due = np.zeros(max(max_ops, 1), dtype=np.int64)
    stopped = False
    while qhead < qtail[0]:
        t = queue[qhead % queue.shape[0]]
        qhead += 1
        if state[t, DONE] or state[t, OVER]:
            continue
        state[t, WAIT_FIFO] = -1
        outcome = _advance(t, budget, state, thread_segs, seg, op, op_next, fifo, fstate, ring, reads_ring,
                           due, queue, qtail)
        if outcome == _STOPPED:
            stopped = True
    return stopped


def pace_units(cycles_per_word: float) -> int:
    """A DRAM loop's cycles per word in the kernel's units; 0 (no pacing) at a word a cycle or faster,
    where the loop's II already rules."""
    return 0 if cycles_per_word <= 1 else int(round(cycles_per_word * PACE_UNIT))
