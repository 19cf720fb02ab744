"""The scheduler's inner loop compiled with numba: tile operations (flat arrays) -> slice, pod, banks and
planes of each. `engine/pods/scheduler.py` owns the rules and their description; this module is the
same rules over preallocated slice state (a pure-Python version took ~30 s for ResNet50 on 256 pods).

Routing follows `engine/pods/interconnect.py`: a pod (or a P bank) receives from one source per slice;
on a Butterfly-k a route takes the first plane where none of its links carries another source's data
(link of stage t: position with the destination's top t+1 bits and the source's other bits).
The property tests replay every schedule through `interconnect.Router` to check it.
"""
from __future__ import annotations

import numba
import numpy as np

FREE = -1
FILL = -2  # a bank's port taken by the DRAM stream writing a tile (`dram.py`): no pod reads it then


@numba.njit(cache=True)
def _can_route(links, recv, s, span, src, dst, blocking, planes, stages, ports):
    """The plane a route can hold for slices s .. s+span-1 (one circuit), or -1."""
    for t in range(s, s + span):
        held = recv[t, dst]
        if held != FREE and held != src:
            return -1
    if not blocking:
        return 0
    for plane in range(planes):
        ok = True
        for t in range(s, s + span):
            if recv[t, dst] == src:  # already receiving this source: the route is there
                continue
            for stage in range(stages):
                low = stages - 1 - stage
                pos = ((dst >> low) << low) | (src & ((1 << low) - 1))
                v = links[t, plane, stage * ports + pos]
                if v != FREE and v != src:
                    ok = False
                    break
            if not ok:
                break
        if ok:
            return plane
    return -1


@numba.njit(cache=True)
def _commit(links, recv, s, src, dst, plane, blocking, stages, ports):
    recv[s, dst] = src
    if blocking:
        for t in range(stages):
            low = stages - 1 - t
            pos = ((dst >> low) << low) | (src & ((1 << low) - 1))
            links[s, plane, t * ports + pos] = src


@numba.njit(cache=True)
def run_kernel(start_block, start_op, start_end, order, spans, dram_ready, x_tiles, w_tiles, preds, block_first, block_count, dep_ptr,
               dep_idx, ready, post, out, busy, idle, x_bank_tile, w_bank_tile, p_port, x_recv, w_recv, p_recv,
               q_recv, x_links, w_links, p_links, q_links, blocking, planes, stages, ports, first_open,
               block_aggs, post_free, bounded, has_succ, p_free, mixed, sums):
    """Schedule the blocks in `order`, from op `start_op` of the block at position `start_block`
    (`start_end`: that block's end so far); no op starts before `dram_ready`, the slice its DRAM
    tiles are on chip (`dram.py`). With `bounded`, a block's `block_aggs` tile aggregations
    take post-processor units (`post_free`: units left per slice), from the slice its last op ends,
    and the block is ready a slice after its last aggregation (+ `post`). An op with a chained successor
    (`has_succ`) also holds its partial-sum bank's port for the slice after it ends, the successor's
    read of its input partial sum there, so no other pod writes that bank in that slice.
    `p_free` counts the P banks whose port is free in each slice: every op writes a P bank, so a
    slice without a free port (or without an idle pod) can start no op and `first_open` moves past it.
    With `mixed` (SOSA's per-partial-sum choice, `scheduler.py`), `preds` are the ops a chain could
    continue and each op chooses: out[op, 10] is the slice the post-processor adds its output to the
    reduction's running sum (-1: chained or first), out[op, 11] the slice the sum through op is ready,
    out[op, 12] the slice its bank's port is held for a chained reader (-1: none); `sums` holds the
    partial sums of the reduction in progress across calls.
    Returns (block, op, end, first_open, overflow): overflow is True when an op needed more slices
    than allocated; the caller grows the state and calls again with the returned block, op and end."""
    capacity = idle.shape[0]
    banks = np.empty(ports, dtype=np.int64)  # scratch: the P banks free over an op's slices
    n_blocks = block_first.shape[0]
    for position in range(start_block, n_blocks):
        block = order[position]
        earliest = 0
        for d in range(dep_ptr[block], dep_ptr[block + 1]):
            if ready[dep_idx[d]] > earliest:
                earliest = ready[dep_idx[d]]
        end = earliest
        first = block_first[block]
        if position == start_block:
            first = start_op
            end = max(end, start_end)
        for op in range(first, block_first[block] + block_count[block]):
            span = spans[op]
            x, w = x_tiles[op], w_tiles[op]
            xb, wb = x % ports, w % ports
            s = max(earliest, first_open, dram_ready[op])
            pred = preds[op]
            if mixed:
                code = _place_mixed(s, span, x, xb, w, wb, pred, has_succ[op], op, out, busy, idle, x_bank_tile,
                                    w_bank_tile, p_port, x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links,
                                    q_links, blocking, planes, stages, ports, p_free, banks, post_free, bounded,
                                    sums)
                if code < 0:
                    return position, op, end, first_open, True
                first_open = min(first_open, code)
                if out[op, 11] > end:
                    end = out[op, 11]
                while first_open < capacity and (idle[first_open] == 0 or p_free[first_open] == 0):
                    first_open += 1
                continue
            q_bank = -1
            q_held = -1
            if pred >= 0:  # chained partial sum: after its producer, read from the bank it wrote
                q_held = out[pred, 0] + spans[pred]  # the slice the producer holds that bank's port for us
                s = max(s, q_held)
                q_bank = out[pred, 4]
            placed = False
            while not placed:
                s = _next_open(idle, p_free, s, span, -1)
                if s + span + 1 > capacity:
                    return position, op, end, first_open, True
                placed = _place(s, span, x, xb, w, wb, q_bank, q_held, has_succ[op], op, out, busy, idle, x_bank_tile,
                                w_bank_tile, p_port, x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links,
                                q_links, blocking, planes, stages, ports, p_free, banks)
                if not placed:
                    s += 1
            if s + span > end:
                end = s + span
            while first_open < capacity and (idle[first_open] == 0 or p_free[first_open] == 0):
                first_open += 1
        last = end
        if bounded and block_aggs[block] > 0:
            need, t = block_aggs[block], end
            while need > 0 and t < capacity:  # room first: an overflow must not leave half the units taken
                need -= min(need, post_free[t])
                t += 1
            if need > 0:
                return position, block_first[block] + block_count[block], end, first_open, True
            need, t = block_aggs[block], end
            while need > 0:
                taken = min(need, post_free[t])
                post_free[t] -= taken
                need -= taken
                if taken:
                    last = t + 1
                t += 1
        ready[block] = last + post
    return n_blocks, 0, 0, first_open, False


@numba.njit(cache=True)
def _next_open(idle, p_free, s, span, keep):
    """The first slice from s whose `span` slices all have an idle pod and a free P-bank port (or that
    holds `keep`, a slice whose port a cut of the op's chain frees): no op can start in the slices
    passed over, so the placement attempts there, which would fail and change nothing, are skipped.
    A slice past the state's end is returned as it comes (the caller's overflow check)."""
    capacity = idle.shape[0]
    while s + span <= capacity:
        if s <= keep < s + span:
            return s
        closed = -1
        for t in range(s + span - 1, s - 1, -1):  # the last closed slice of the window: skip past it
            if idle[t] == 0 or p_free[t] == 0:
                closed = t
                break
        if closed < 0:
            return s
        after = closed + 1  # every window from s + 1 to `closed` holds `closed`, save those holding `keep`
        first_keep = max(s + 1, keep - span + 1)
        s = first_keep if keep >= 0 and first_keep <= keep and first_keep < after else after
    return s


@numba.njit(cache=True)
def _take_port(p_port, p_free, t, bank):
    if not p_port[t, bank]:
        p_port[t, bank] = True
        p_free[t] -= 1


@numba.njit(cache=True)
def _port_free(p_port, s, span, succ, bank):
    """A P bank can take an op's partial sum: its port is free in the op's slices and, when a chained
    successor reads it in the slice after, in that slice too."""
    if succ and p_port[s + span, bank]:
        return False
    for t in range(s, s + span):
        if p_port[t, bank]:
            return False
    return True


@numba.njit(cache=True)
def _place(s, span, x, xb, w, wb, q_bank, q_held, succ, op, out, busy, idle, x_bank_tile, w_bank_tile, p_port,
           x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links, q_links, blocking, planes, stages, ports,
           p_free, banks, commit=True):
    """Place op at slice s on the first pod (in pod order) whose X, W (and chained partial-sum) routes
    the networks admit and that reaches a P bank (its own first, then in bank order); False if none.
    The P banks free over the op's slices do not depend on the pod: they are listed once (`banks`),
    when a pod's own bank does not do. `commit=False` only answers whether it can."""
    for t in range(s, s + span):
        if idle[t] == 0 or p_free[t] == 0:
            return False
        if x_bank_tile[t, xb] != FREE and x_bank_tile[t, xb] != x:
            return False
    if w_bank_tile[s, wb] != FREE and w_bank_tile[s, wb] != w:
        return False
    if q_bank >= 0:
        for t in range(s, s + span):
            if p_port[t, q_bank] and t != q_held:  # the producer held the port of slice q_held for this read
                return False
    n_banks = -1  # not listed yet

    for pod in range(ports):
        free = True
        for t in range(s, s + span):
            if busy[t, pod]:
                free = False
                break
        if not free:
            continue
        x_plane = _can_route(x_links, x_recv, s, span, xb, pod, blocking, planes, stages, ports)
        if x_plane < 0:
            continue
        w_plane = _can_route(w_links, w_recv, s, 1, wb, pod, blocking, planes, stages, ports)
        if w_plane < 0:
            continue
        q_plane = 0
        if q_bank >= 0:
            q_plane = _can_route(q_links, q_recv, s, span, q_bank, pod, blocking, planes, stages, ports)
            if q_plane < 0:
                continue
        p_bank = -1
        p_plane = -1
        if pod != q_bank and _port_free(p_port, s, span, succ, pod):
            p_plane = _can_route(p_links, p_recv, s, span, pod, pod, blocking, planes, stages, ports)
            if p_plane >= 0:
                p_bank = pod
        if p_bank < 0:
            if n_banks < 0:
                n_banks = 0
                for bank in range(ports):
                    if bank != q_bank and _port_free(p_port, s, span, succ, bank):
                        banks[n_banks] = bank
                        n_banks += 1
                if n_banks == 0:
                    return False  # no pod can write its partial sum in this slice
            for k in range(n_banks):
                bank = banks[k]
                if bank == pod:
                    continue  # tried first
                p_plane = _can_route(p_links, p_recv, s, span, pod, bank, blocking, planes, stages, ports)
                if p_plane >= 0:
                    p_bank = bank
                    break
        if p_bank < 0:
            continue
        if not commit:
            return True
        for t in range(span):
            busy[s + t, pod] = True
            idle[s + t] -= 1
            x_bank_tile[s + t, xb] = x
            _commit(x_links, x_recv, s + t, xb, pod, x_plane, blocking, stages, ports)
            _commit(p_links, p_recv, s + t, pod, p_bank, p_plane, blocking, stages, ports)
            _take_port(p_port, p_free, s + t, p_bank)
            if q_bank >= 0:
                _take_port(p_port, p_free, s + t, q_bank)
                _commit(q_links, q_recv, s + t, q_bank, pod, q_plane, blocking, stages, ports)
        if succ:
            _take_port(p_port, p_free, s + span, p_bank)
        w_bank_tile[s, wb] = w
        _commit(w_links, w_recv, s, wb, pod, w_plane, blocking, stages, ports)
        out[op, 0] = s
        out[op, 1] = pod
        out[op, 2] = xb
        out[op, 3] = wb
        out[op, 4] = p_bank
        out[op, 5] = x_plane
        out[op, 6] = w_plane
        out[op, 7] = p_plane
        out[op, 8] = q_bank
        out[op, 9] = q_plane
        return True
    return False


@numba.njit(cache=True)
def _set_port(p_port, p_free, t, bank, taken):
    if t >= 0 and p_port[t, bank] != taken:
        p_port[t, bank] = taken
        p_free[t] += -1 if taken else 1


@numba.njit(cache=True)
def _place_mixed(s0, span, x, xb, w, wb, pred, succ, op, out, busy, idle, x_bank_tile, w_bank_tile, p_port, x_recv,
                 w_recv, p_recv, q_recv, x_links, w_links, p_links, q_links, blocking, planes, stages, ports, p_free,
                 banks, post_free, bounded, sums):
    """SOSA's per-partial-sum choice for one op, slice by slice from s0: where the slice takes the op
    as the continuation of its reduction's chain (reading the partial sum op `pred` wrote as its input
    partial sum), it is chained; where the slice takes it alone and the post-processor has an idle
    unit in the slot both partial sums exist (the cut chain's and the op's), the chain is cut there
    and that unit is taken (`bounded`; any slot when unbounded); otherwise the next slice is tried.
    An op a chain may continue (`succ`) first tries to hold its bank's port for the reader, else
    goes without. After a reduction's last op, its sum is ready when the pairwise sums of its
    chains' partial sums (`sums`: when each is ready; sums[0] their count) are done, the two ready
    first summed first, in units the cuts took. out[op, 10] is 1 for an op after a cut, out[op, 11]
    the slice the reduction's sum is ready (its last op) or the op's end, out[op, 12] the slice
    whose port it holds for a chained reader (-1: none), out[op, 13] its end. Returns the lowest
    slice whose port it freed (the caller's `first_open` goes back there; the slice count when
    none), or -1 on overflow (nothing changed)."""
    capacity = idle.shape[0]
    freed = capacity
    margin = 2 + 2 * sums.shape[0] + 64  # room for the op and its reduction's pairwise sums
    s = s0
    alone = False
    hold = False
    if pred < 0:  # the first op of its reduction: nothing to choose
        sums[0] = 0
        placed = False
        while not placed:
            s = _next_open(idle, p_free, s, span, -1)
            if s + span + margin > capacity:
                return -1
            for k in range(2 if succ else 1):
                hold = succ and k == 0
                if _place(s, span, x, xb, w, wb, -1, -1, hold, op, out, busy, idle, x_bank_tile, w_bank_tile,
                          p_port, x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links, q_links, blocking,
                          planes, stages, ports, p_free, banks):
                    placed = True
                    break
            if not placed:
                s += 1
    else:
        ready, q_bank, held = out[pred, 13], out[pred, 4], out[pred, 12]
        done = False
        while not done:
            s = _next_open(idle, p_free, s, span, held)
            if s + span + margin > capacity:
                return -1
            if s < ready and bounded and post_free[max(ready, s + span)] == 0:
                s = max(s + 1, ready - span + 1)  # neither chained nor cut before the slot `ready` has a unit
                continue
            if s >= ready:  # chained (a slice that takes it chained takes it alone too)
                for k in range(2 if succ else 1):
                    hold = succ and k == 0
                    if _place(s, span, x, xb, w, wb, q_bank, held, hold, op, out, busy, idle, x_bank_tile,
                              w_bank_tile, p_port, x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links, q_links,
                              blocking, planes, stages, ports, p_free, banks):
                        done = True
                        break
            u = max(ready, s + span)  # the slot the cut chain's partial sum and the op's both exist
            if not done and (not bounded or post_free[u] > 0):
                _set_port(p_port, p_free, held, q_bank, False)  # cut: the port held for the read goes back
                for k in range(2 if succ else 1):
                    hold = succ and k == 0
                    if _place(s, span, x, xb, w, wb, -1, -1, hold, op, out, busy, idle, x_bank_tile, w_bank_tile,
                              p_port, x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links, q_links, blocking,
                              planes, stages, ports, p_free, banks):
                        done = True
                        break
                if done:
                    if held >= 0:
                        freed = held
                    if bounded:
                        post_free[u] -= 1
                    sums[0] += 1
                    sums[sums[0]] = ready
                    alone = True
                else:
                    _set_port(p_port, p_free, held, q_bank, True)
            if not done:
                s += 1
    out[op, 10] = 1 if alone else -1
    out[op, 11] = s + span
    out[op, 12] = s + span if hold else -1
    out[op, 13] = s + span
    if not succ:  # the reduction's last op: the post-processor sums its chains' partial sums pairwise
        sums[0] += 1
        sums[sums[0]] = s + span
        n = sums[0]
        while n > 1:
            a = _pop_min(sums, n)
            n -= 1
            b = _pop_min(sums, n)
            sums[n] = max(a, b) + 1
        sums[0] = 0
        out[op, 11] = sums[1]
    return freed


@numba.njit(cache=True)
def _pop_min(sums, n):
    """Remove and return the smallest of sums[1..n] (the last takes its place)."""
    best = 1
    for i in range(2, n + 1):
        if sums[i] < sums[best]:
            best = i
    value = sums[best]
    sums[best] = sums[n]
    return value
