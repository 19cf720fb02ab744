"""The PE's threads for the simulator's hardware builder (a mixin of engine/sim/hardware.py's builder):
a PE instance -> its compute thread (and, with double-buffered accumulators, its drain thread joined
by a ping-pong pair of accumulator tokens), with the FIFO operations of its input, forwarded and
accumulated groups and of its local arrays' channels (docs/sim.md)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from engine.compiler.architecture.pe import straight_ready
from engine.sim.kernel import Op, Segment, Thread
from engine.sim.segments import BUFFER_TOKENS, IO_LATENCY, between, holds, int_value, node_name, word_count


class PeThreads:
    """Mixin: needs the builder's descriptor (`d`, `modules`, `groups`, `values`), FIFOs (`ins`,
    `outs`, `fifo_pack`, `internal`), tiles and PE iterations, channels and send stages."""

    def pe_thread(self, node) -> Thread:
        pe = self.modules["PE"]
        compute = pe["phases"][0]
        ii, depth = int_value(compute["ii"], self.values), pe["pipeline_depth"]
        ins = {(k["array"], k["direction"]): f for f, k, _ in self.ins.get(node, [])}
        outs = {(k["array"], k["direction"]): (f, k) for f, k, _ in self.outs.get(node, [])}
        inputs, forwards, accs = [], [], []
        operands = []  # (Op, is a read) in the body's order: each input read, then passed on
        for g in self.groups.values():
            if g.get("pe_reach") and (g["array"], "in" if g["kind"] == "in" else "out") not in {**ins, **outs}:
                continue  # a PE the group's I/O network does not reach (io_reach.py): no FIFO, no word
            if g["kind"] == "in":
                inputs.append(Op(ins[(g["array"], "in")], self.pe_iters))
                operands.append((inputs[-1], True))
                if (g["array"], "in") in outs:
                    forwards.append(Op(outs[(g["array"], "in")][0], self.pe_iters))
                    operands.append((forwards[-1], False))
            else:
                local = self.volume(g["name"], tuple((i, i) for i in node[1]))
                _, per_block, reload = self.blocks(g["name"], "out")
                read = write = None
                carried = g["exterior_loop"] is not None and (g["array"], "out") not in ins
                if any(reload) and carried and (g["array"], "in") in ins:
                    # the first PE of a chain that carries the reduction: the partial result read back
                    # comes in as the chain's start, beside its own results going out
                    ins[(g["array"], "out")] = ins[(g["array"], "in")]
                elif any(reload) and g["exterior_loop"] is None:
                    read = [Op(ins[(g["array"], "in")], word_count(local, self.fifo_pack[id(ins[(g["array"], "in")])]))]
                    if (g["array"], "in") in outs:
                        f, k = outs[(g["array"], "in")]
                        read.append(Op(f, word_count(local, k["pack"])))
                f, k = outs[(g["array"], "out")]
                write = ([Op(ins[(g["array"], "out")], word_count(local, self.fifo_pack[id(ins[(g["array"], "out")])]))]
                         if (g["array"], "out") in ins else [], [Op(f, word_count(local, k["pack"]))])
                accs.append((local, per_block, reload, read, write))
        compute_seg = Segment(self.pe_iters, tuple(inputs), tuple(forwards), ii=ii, depth=depth, latency=IO_LATENCY)
        event_tiles = accs[0][1] if accs else 1
        channels = self.channel_ops(node)
        segments: dict = {}
        # a PE with no pipelined loop (several statements, every band loop a space loop) runs its body
        # once, outside any loop: each FIFO access is a step of its own in the body's order (the
        # exporter's, engine/export/pe_statements.py: each input read and passed on, the local arrays'
        # words received, then those sent), as the timed C simulation times code outside pipelined
        # loops; one iteration with every access at once made a recurrence carried from PE to PE
        # 3 cycles a diagonal step short (triangular solve i-j__i-j, N = 16: 331 against 359)
        straight = bool(self.d["compute"].get("several_statements")) and all(
            l["role"] == "tile" for l in pe["phases"][0]["loops"])

        sent_array = {id(f): k["array"] for f, k, _ in self.outs.get(node, []) if k["pattern"] == "pe_chain"}

        def straight_body(t: int, body: list) -> tuple[Segment, ...]:
            """The body access by access; a word sent waits for the operators that computed it after
            the last read (`straight_ready`), and so does what follows the body (the drain of its
            outputs) for everything it computed, as the timed C simulation charges them."""
            ready = self.straight_ready(node, t)
            depths, last_read, extra = [1] * len(body), -1, 0
            for k, (op, read) in enumerate(body):
                if read:
                    last_read, extra = k, 0
                    continue
                wait = ready.get(sent_array.get(id(op.fifo)), 0) - (k - last_read - 1) - extra
                if wait > 0 and k > 0:
                    depths[k - 1] += wait
                    extra += wait
            if accs and body:
                wait = max(ready.values(), default=0) - (len(body) - last_read - 1) - extra
                depths[-1] += max(wait, 0)
            return tuple(Segment(1, (op,) if read else (), () if read else (op,), depth=d, latency=IO_LATENCY)
                         for (op, read), d in zip(body, depths))

        def compute(t: int) -> tuple[Segment, ...]:
            """Tile t's compute loop; the tiles of one accumulation event are one pipelined loop (HLS
            flattens them): the next tile's iterations follow at the II, without refilling the pipeline."""
            received, sent = channels(t)
            key = (t % event_tiles == 0, received, sent)
            if key not in segments:
                if straight:
                    body = operands + [(op, True) for op in received] + [(op, False) for op in sent]
                    segments[key] = straight_body(t, body)
                    return segments[key]
                seg = compute_seg
                if received or sent:
                    seg = dataclasses.replace(seg, reads=seg.reads + received, writes=seg.writes + sent)
                segments[key] = (seg if key[0] else dataclasses.replace(seg, new_loop=False),)
            return segments[key]

        def computing(t: int):
            for local, per_block, reload, read, _ in accs:
                if read and t % per_block == 0 and reload[t // per_block]:
                    yield Segment(local, (read[0],), tuple(read[1:]), latency=IO_LATENCY)
            yield from compute(t)

        def sends(t: int):
            for local, per_block, _, _, (partial, write) in accs:
                if (t + 1) % per_block == 0:
                    yield Segment(local, tuple(partial), tuple(write), latency=IO_LATENCY)

        if not pe["overlapped"]:
            return Thread(node_name(node), "PE", (seg for t in range(self.tiles) for part in (computing, sends)
                                              for seg in part(t)))
        # double-buffered accumulators (one output: pe.py build_pe `overlap_drain`): the compute half
        # takes a free buffer at an event's first tile and hands it over full once its last tile's
        # pipeline has drained; the drain half sends it and gives it back
        name, per_block = node_name(node), accs[0][1]
        free = self.internal(f"{name} free accumulators", BUFFER_TOKENS, preload=BUFFER_TOKENS)
        full = self.internal(f"{name} full accumulators", BUFFER_TOKENS)

        def computer():
            for t in range(self.tiles):
                segs = list(computing(t))
                if t % per_block == 0:
                    segs[0] = dataclasses.replace(segs[0], reads=segs[0].reads + (Op(free, 1, 0, 1),))
                if (t + 1) % per_block == 0:
                    last = segs[-1]
                    done = Op(full, 1, last.n - 1, 1, delay=max(last.depth - last.latency, 0))
                    segs[-1] = dataclasses.replace(last, writes=last.writes + (done,))
                yield from segs

        def drainer():
            for t in range(self.tiles):
                for seg in sends(t):
                    yield dataclasses.replace(seg, reads=seg.reads + (Op(full, 1, 0, 1),),
                                              writes=seg.writes + (Op(free, 1, seg.n - 1, 1),))
        c = Thread(f"{name}.compute", "PE", computer())
        e = Thread(f"{name}.drain", "PE", drainer())
        free.producer, free.consumer, full.producer, full.consumer = e, c, c, e
        return [c, e]

    def straight_ready(self, node, t: int) -> dict[str, int]:
        """Array -> cycles after the body's reads at which a PE with no pipelined loop has computed
        its value at its one point of tile t (engine/compiler/architecture/pe.py straight_ready)."""
        tile, rest = {}, t
        for loop, trip in reversed(self.tile_loops):
            tile[loop], rest = rest % trip, rest // trip
        pe_index = dict(zip(self.space, node[1]))
        point = {l: tile.get(l, 0) * self.values[f"{l}_t1"] + pe_index.get(l, 0) * self.pe_range[l]
                 for l in self.band}
        return straight_ready(self.d["compute"].get("statements", []), point)

    def channel_ops(self, node):
        """tile -> ((read Op, ...), (write Op, ...)) of a PE on the local arrays' channels: a word
        at each of its points in that tile where `receive_when` holds (if a neighbour feeds it) and
        where `send_when` holds (if it has a neighbour to feed). The words are spread evenly from the
        first to the last iteration of the PE's pipelined loop that has such a point (`_between`)."""
        ends = []
        for name, ch, receive, send in self.channels:
            into = [f for f, k, _ in self.ins.get(node, []) if k["pattern"] == "pe_chain"
                    and k["array"] == name and k["along"] == ch["along"]]
            out_of = [f for f, k, _ in self.outs.get(node, []) if k["pattern"] == "pe_chain"
                      and k["array"] == name and k["along"] == ch["along"]]
            ends += [(f, receive, True, name) for f in into] + [(f, send, False, name) for f in out_of]
        if not ends:
            return lambda t: ((), ())
        # the PE's pipelined loops, outermost first (pe_loops: time loops, then latency hiding), and
        # the SIMD lanes of one iteration; a band loop's local index counts through its loops in order
        entries = [(l["name"].rsplit("_", 1)[0], int_value(l["trip"], self.values))
                   for l in self.modules["PE"]["phases"][0]["loops"] if l["role"] != "tile"]
        lanes = {l: self.pe_range[l] // math.prod(t for m, t in entries if m == l) for l in self.band}
        lane_axes = [l for l in self.band if lanes[l] > 1]
        shape = [t for _, t in entries] + [lanes[l] for l in lane_axes]
        local = {}
        for l in self.band:
            index = np.zeros(shape, dtype=np.int64)
            for axis, (m, trip) in enumerate(entries):
                if m == l:
                    index = index * trip + np.arange(trip).reshape([-1 if a == axis else 1 for a in range(len(shape))])
            index = index * lanes[l]
            if l in lane_axes:
                axis = len(entries) + lane_axes.index(l)
                index = index + np.arange(lanes[l]).reshape([-1 if a == axis else 1 for a in range(len(shape))])
            local[l] = index
        t1 = {l: self.values[f"{l}_t1"] for l in self.band}
        pe_index = dict(zip(self.space, node[1]))
        stages = self.stages

        def ops(t: int):
            tile, rest = {}, t
            for loop, trip in reversed(self.tile_loops):
                tile[loop], rest = rest % trip, rest // trip
            point = {l: tile.get(l, 0) * t1[l] + pe_index.get(l, 0) * self.pe_range[l] + local[l]
                     for l in self.band}
            reads, writes = [], []
            for f, guard, read, name in ends:
                words = holds(guard, point, shape).reshape(self.pe_iters, -1).sum(axis=1)
                total = int(words.sum())
                if total:
                    busy = np.flatnonzero(words)
                    op = between(f, total, int(busy[0]), int(busy[-1]), read)
                    # a word sent leaves at its value's stage of the pipelined loop (pe.py send_stages)
                    (reads if read else writes).append(op if read else dataclasses.replace(op, delay=stages.get(name, 0)))
            return tuple(reads), tuple(writes)
        return ops
