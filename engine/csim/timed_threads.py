"""A replayed region (engine/sim/kernel_arrays.py state after `run_arrays`) -> what the timed C
simulation reports about its threads: their names, the cycles they spent on the zero-cost tokens of
parallel helper calls, and the wait cycle of a deadlock (engine/csim/timed.py)."""
from __future__ import annotations

import numpy as np

from engine.csim.trace import Instrumented
from engine.sim import kernel_arrays as K


def sync_waits(threads, arrays: dict, fstate, arrivals, reads) -> np.ndarray:
    """Cycles each thread spent on zero-cost tokens rather than on data: a helper waiting to be called
    (from the end of its previous call to its start) and a process waiting for its parallel calls to
    return (from the fork to the join). They are taken out of stall-in: the kernel counts any wait."""
    n_streams, fifo = arrays["n_streams"], arrays["fifo"]
    waits = np.zeros(len(threads), dtype=np.int64)
    seen_groups = set()
    for tid, _, parent, group, _ in threads:
        if parent < 0:
            continue
        start, done = n_streams + 2 * tid, n_streams + 2 * tid + 1
        started = int(fstate[start, K.READ])
        begins = reads[fifo[start, K.F_READS]:fifo[start, K.F_READS] + started]
        ends = arrivals[fifo[done, K.F_RING]:fifo[done, K.F_RING] + int(fstate[done, K.WRITTEN])]
        previous = np.concatenate([[0], ends])[:len(begins)]
        waits[tid] += int((begins - previous).clip(min=0).sum())
        if (parent, group) not in seen_groups:  # the parent's joins, counted once per group
            seen_groups.add((parent, group))
            joined = int(fstate[done, K.READ])
            forks = arrivals[fifo[start, K.F_RING]:fifo[start, K.F_RING] + joined]
            joins = reads[fifo[done, K.F_READS]:fifo[done, K.F_READS] + joined]
            waits[parent] += int((joins - forks).clip(min=0).sum())
    return waits


def thread_names(inst: Instrumented, threads: list[list[int]]) -> dict[int, str]:
    label = {p.index: p.label for p in inst.processes}
    names = {}
    for tid, process, parent, group, member in threads:
        if parent < 0:
            names[tid] = label.get(process, "kernel0")
        else:
            g = inst.groups.get(group)
            helper = f"{g.members[member]}@{g.line}" if g else f"call{member}"
            names[tid] = f"{names.get(parent, label.get(process, '?'))}/{helper}"
    return names


def wait_cycle(state, done, arrays: dict, names: dict, stream_names: dict) -> list[str]:
    """Follow the FIFOs the blocked threads wait on to their other end until a thread repeats."""
    seg_arr, op_arr, n_streams = arrays["seg"], arrays["op"], arrays["n_streams"]
    writer, reader = {}, {}
    for t, (a, b) in enumerate(arrays["thread_segs"]):
        for s in range(a, b):
            first, r, w = seg_arr[s, K.FIRST_OP], seg_arr[s, K.READS], seg_arr[s, K.WRITES]
            for o in range(first, first + r):
                reader.setdefault(int(op_arr[o, K.O_FIFO]), t)
            for o in range(first + r, first + r + w):
                writer.setdefault(int(op_arr[o, K.O_FIFO]), t)

    def fifo_name(f: int) -> str:
        if f < n_streams:
            return stream_names.get(f, f"stream {f}")
        t, kind = divmod(f - n_streams, 2)
        return f"{'start' if kind == 0 else 'done'} token of {names.get(t, t)}"

    t = int(np.nonzero(~done)[0][0])
    path, seen = [], set()
    while t not in seen:
        seen.add(t)
        f, side = int(state[t, K.WAIT_FIFO]), int(state[t, K.WAIT_SIDE])
        if f < 0:
            path.append(f"{names.get(t, t)} (not blocked)")
            break
        path.append(f"{names.get(t, t)} waits on {'empty' if side == 0 else 'full'} {fifo_name(f)}")
        other = writer.get(f) if side == 0 else reader.get(f)
        if other is None or done[other]:
            path.append(f"whose {'producer' if side == 0 else 'consumer'} "
                        f"{'finished' if other is not None else 'does not exist'}")
            break
        t = other
    return path
