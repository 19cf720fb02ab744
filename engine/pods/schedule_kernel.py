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


@numba.njit(cache=True)
def _can_route(links, recv, s, src, dst, blocking, planes, stages, ports):
    held = recv[s, dst]
    if held != FREE:
        return 0 if held == src else -1
    if not blocking:
        return 0
    for plane in range(planes):
        ok = True
        for t in range(stages):
            low = stages - 1 - t
            pos = ((dst >> low) << low) | (src & ((1 << low) - 1))
            v = links[s, plane, t * ports + pos]
            if v != FREE and v != src:
                ok = False
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
def run_kernel(start_block, start_op, start_end, spans, x_tiles, w_tiles, preds, block_first, block_count, dep_ptr,
               dep_idx, ready, post, out, busy, idle, x_bank_tile, w_bank_tile, p_port, x_recv, w_recv, p_recv,
               q_recv, x_links, w_links, p_links, q_links, blocking, planes, stages, ports, first_open):
    """Schedule from op `start_op` of block `start_block` (`start_end`: that block's end so far).
    Returns (block, op, end, first_open, overflow): overflow is True when an op needed more slices
    than allocated; the caller grows the state and calls again with the returned block, op and end."""
    capacity = idle.shape[0]
    n_blocks = block_first.shape[0]
    for block in range(start_block, n_blocks):
        earliest = 0
        for d in range(dep_ptr[block], dep_ptr[block + 1]):
            if ready[dep_idx[d]] > earliest:
                earliest = ready[dep_idx[d]]
        end = earliest
        first = block_first[block]
        if block == start_block:
            first = start_op
            end = max(end, start_end)
        for op in range(first, block_first[block] + block_count[block]):
            span = spans[op]
            x, w = x_tiles[op], w_tiles[op]
            xb, wb = x % ports, w % ports
            s = max(earliest, first_open)
            pred = preds[op]
            q_bank = -1
            if pred >= 0:  # chained partial sum: after its producer, read from the bank it wrote
                s = max(s, out[pred, 0] + spans[pred])
                q_bank = out[pred, 4]
            placed = False
            while not placed:
                if s + span > capacity:
                    return block, op, end, first_open, True
                placed = _place(s, span, x, xb, w, wb, q_bank, op, out, busy, idle, x_bank_tile, w_bank_tile, p_port,
                                x_recv, w_recv, p_recv, q_recv, x_links, w_links, p_links, q_links,
                                blocking, planes, stages, ports)
                if not placed:
                    s += 1
            if s + span > end:
                end = s + span
            while first_open < capacity and idle[first_open] == 0:
                first_open += 1
        ready[block] = end + post
    return n_blocks, 0, 0, first_open, False


@numba.njit(cache=True)
def _place(s, span, x, xb, w, wb, q_bank, op, out, busy, idle, x_bank_tile, w_bank_tile, p_port, x_recv, w_recv,
           p_recv, q_recv, x_links, w_links, p_links, q_links, blocking, planes, stages, ports):
    for t in range(s, s + span):
        if idle[t] == 0:
            return False
        if x_bank_tile[t, xb] != FREE and x_bank_tile[t, xb] != x:
            return False
    if w_bank_tile[s, wb] != FREE and w_bank_tile[s, wb] != w:
        return False
    if q_bank >= 0:
        for t in range(s, s + span):
            if p_port[t, q_bank]:
                return False
    x_planes = np.empty(span, np.int64)
    p_planes = np.empty(span, np.int64)
    q_planes = np.zeros(span, np.int64)
    for pod in range(ports):
        free = True
        for t in range(s, s + span):
            if busy[t, pod]:
                free = False
                break
        if not free:
            continue
        ok = True
        for t in range(span):
            x_planes[t] = _can_route(x_links, x_recv, s + t, xb, pod, blocking, planes, stages, ports)
            if x_planes[t] < 0:
                ok = False
                break
        if not ok:
            continue
        w_plane = _can_route(w_links, w_recv, s, wb, pod, blocking, planes, stages, ports)
        if w_plane < 0:
            continue
        if q_bank >= 0:
            for t in range(span):
                q_planes[t] = _can_route(q_links, q_recv, s + t, q_bank, pod, blocking, planes, stages, ports)
                if q_planes[t] < 0:
                    ok = False
                    break
            if not ok:
                continue
        p_bank = -1
        for k in range(ports + 1):
            bank = pod if k == 0 else k - 1
            if bank == q_bank:
                continue
            good = True
            for t in range(span):
                if p_port[s + t, bank]:
                    good = False
                    break
                p_planes[t] = _can_route(p_links, p_recv, s + t, pod, bank, blocking, planes, stages, ports)
                if p_planes[t] < 0:
                    good = False
                    break
            if good:
                p_bank = bank
                break
        if p_bank < 0:
            continue
        for t in range(span):
            busy[s + t, pod] = True
            idle[s + t] -= 1
            x_bank_tile[s + t, xb] = x
            if x_recv[s + t, pod] == FREE:
                _commit(x_links, x_recv, s + t, xb, pod, x_planes[t], blocking, stages, ports)
            _commit(p_links, p_recv, s + t, pod, p_bank, p_planes[t], blocking, stages, ports)
            p_port[s + t, p_bank] = True
            if q_bank >= 0:
                p_port[s + t, q_bank] = True
                _commit(q_links, q_recv, s + t, q_bank, pod, q_planes[t], blocking, stages, ports)
        w_bank_tile[s, wb] = w
        _commit(w_links, w_recv, s, wb, pod, w_plane, blocking, stages, ports)
        out[op, 0] = s
        out[op, 1] = pod
        out[op, 2] = xb
        out[op, 3] = wb
        out[op, 4] = p_bank
        out[op, 5] = x_planes[0]
        out[op, 6] = w_plane
        out[op, 7] = p_planes[0]
        out[op, 8] = q_bank
        out[op, 9] = q_planes[0]
        return True
    return False
