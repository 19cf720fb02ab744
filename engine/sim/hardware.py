"""Descriptor + concrete values -> the hardware as threads and FIFOs for the simulation kernel.

Every module instance of the topology graph becomes one thread (two for a double-buffered module:
the half that fills its buffers and the half that empties them, joined by a ping-pong pair of
buffer tokens for a drain, by the joins of the exporter's per-block load || feed call pairs for an
input module: `paired_threads`), every FIFO edge a bounded FIFO with the depth engine/compiler/fifo_depths.py gives.
What a thread does per block comes from the descriptor: loop trips of its phases, buffer sizes,
packing of each FIFO, load / reload events of each I/O group. Per-instance facts the descriptor
states only for the head of a chain are derived from the I/O group's subscripts (docs/sim.md):
- every instance of an input chain reads the chain's whole block (the union of the blocks of the
  PEs the chain serves), forwards all of it to the next instance as it arrives, and keeps its own
  block (or passes it down a level) where it lies in the whole block's row-major order, as the
  exported loader does; drains send their own block first, then pass on what the next instance
  sends them (an output several PEs hold: only the elements each PE writes last, its descriptor
  group's `last_writer`);
- words on a FIFO = elements / the FIFO's packing factor, rounded up per block;
- a PE iteration reads one word of every input group and forwards it along exterior groups;
- a PE receives one word of a local array's channel (descriptor 1.3 `local_arrays[].channels`) at
  each of its points where the channel's `receive_when` holds, and sends one where `send_when`
  holds (counted exactly over the PE's points of each tile), spread evenly from the first to the last
  iteration of its compute loop that has such a point; a word sent leaves at the stage of the
  pipelined iteration at which its value is computed (engine/compiler/architecture/pe.py
  `send_stages`), not at the iteration's issue.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from engine.compiler.architecture.pe import send_stages
from engine.compiler.architecture.pe_set import restrict_to_pe_set, stub_pes
from engine.compiler.last_writer import owned_elements
from engine.compiler.topology import topology_graph
from engine.errors import DesignError
from engine.sim.dram import DramModel
from engine.sim.kernel import Fifo, Op, Segment, Thread
from engine.sim.pe_threads import PeThreads
from engine.sim.segments import (BUFFER_TOKENS, coefficients, int_value, node_name, pack_of,
                                 parse_guard, spread, with_tokens, word_count)


@dataclass
class Network:
    threads: list[Thread]
    fifos: list[Fifo]
    modules: dict[str, dict]  # module name -> descriptor module
    fifo_kind: dict[int, str]  # id(Fifo) -> "source->target array pattern"




class _Builder(PeThreads):
    def __init__(self, descriptor: dict, values: dict[str, int], dram: DramModel):
        self.d, self.values, self.dram = descriptor, values, dram
        design = descriptor["design"]
        self.band = list(design["band_loops"])
        self.space = list(descriptor["topology"]["space_loops"])
        # space loops strip-mined inside the PE (latency hiding, or SIMD on a space loop since 1.2)
        hiding = set(design.get("split_space_loops", design["latency_hiding_loops"]))
        t1 = {l: values[f"{l}_t1"] for l in self.band}
        self.size = {l: int(n) for l, n in design["problem_size"].items()}
        self.pe_range = {l: (values[f"{l}_t2"] if l in hiding else 1) if l in self.space else t1[l]
                         for l in self.band}
        self.modules = {m["name"]: m for m in descriptor["topology"]["modules"]}
        self.groups = {g["name"]: g for g in descriptor["io_groups"]}
        # subscripts in the order the array is stored (its SIMD layout, descriptor design.simd_layout),
        # the order in which the exported modules walk a block: where an instance's elements lie in it
        layout = design.get("simd_layout", {})
        self.coeffs = {g["name"]: [coefficients(g["subscripts"][d], self.band)
                                   for d in layout.get(g["array"], range(len(g["subscripts"])))]
                       for g in descriptor["io_groups"]}
        # outputs several PEs hold: the elements each PE drains, its last writer's (a table per
        # group, None where every PE drains its box; engine/compiler/last_writer.py)
        grid = [int_value(g, values) for g in descriptor["topology"]["pe_grid"]]
        self.owners = {g["name"]: owned_elements(g, design["problem_size"], self.space, grid, values)
                       for g in descriptor["io_groups"]}
        self.stages = send_stages(descriptor, values)  # local array -> the PE stage its sent words leave at
        self.fifos: list[Fifo] = []
        self.fifo_kind: dict[int, str] = {}
        self.fifo_pack: dict[int, int] = {}  # id(Fifo) -> its packing factor
        self.ins: dict = {}  # node -> [(Fifo, kind dict, source node)]
        self.outs: dict = {}  # node -> [(Fifo, kind dict, target node)]
        self.nodes: list = []

    # -- structure ------------------------------------------------------------------------------
    def connect(self) -> None:
        # only the PEs the array holds (descriptor topology.pe_set): PEs outside it that modules still
        # send to or collect from are stubs, a dummy thread each (`stub_thread`)
        graph = restrict_to_pe_set(topology_graph(self.d, self.values), self.d, self.values)
        self.nodes = list(graph.nodes)
        self.stubs = stub_pes(graph, self.d, self.values)
        for kind in self.d["topology"]["fifos"]:
            # one FIFO kind at a time: graph edges do not say which kind (direction) they belong to
            kind_graph = restrict_to_pe_set(topology_graph(self.d, self.values, [kind]), self.d, self.values)
            for src, dst, data in kind_graph.edges(data=True):
                label = f"{kind['source']}->{kind['target']} {kind['array']} {kind['pattern']}"
                f = Fifo(f"{node_name(src)}->{node_name(dst)} {kind['array']}", data["depth"])
                f.width_bits = data["width_bits"]
                self.fifos.append(f)
                self.fifo_kind[id(f)] = label
                self.fifo_pack[id(f)] = int_value(kind["pack"], self.values)
                entry = {**kind, "pack": int_value(kind["pack"], self.values),
                         "direction": "out" if kind["reversed"] else "in"}
                self.outs.setdefault(src, []).append((f, entry, dst))
                self.ins.setdefault(dst, []).append((f, entry, src))
        self.channels = [(a["name"], ch, parse_guard(ch["receive_when"]), parse_guard(ch["send_when"]))
                         for a in self.d.get("local_arrays", []) for ch in a.get("channels", [])]

    def served(self, node, direction: str, memo: dict) -> tuple:
        """Box (per space loop: min, max PE index) of the PEs a module instance serves."""
        if node in memo:
            return memo[node]
        if node[0] == "PE":
            box = tuple((i, i) for i in node[1])
        else:
            near = self.outs if direction == "in" else self.ins
            boxes = [self.served(other, direction, memo) for _, kind, other in near.get(node, [])
                     if kind["direction"] == direction and kind["pattern"] != "pe_chain"
                     and (other[0] == "PE" or self.modules[other[0]]["array"] == self.modules[node[0]]["array"])]
            if not boxes:
                raise DesignError(f"simulator: {node_name(node)} serves no PE")
            box = tuple((min(b[k][0] for b in boxes), max(b[k][1] for b in boxes)) for k in range(len(boxes[0])))
        memo[node] = box
        return box

    def chain_head(self, node):
        """The first member of the input chain `node` belongs to (itself when it heads none)."""
        while True:
            before = [o for _, k, o in self.ins.get(node, []) if k["direction"] == "in" and o[0] == node[0]]
            if not before:
                return node
            node = before[0]

    def position(self, group: str, inner, outer) -> tuple[float, float]:
        """Where the elements of the PEs of box `inner` lie in the row-major order of the elements
        of box `outer` (it holds `inner`): (first, span) as fractions of the outer volume."""
        extents, offsets = [], []
        for terms in self.coeffs[group]:
            size, offset = 1, 0
            for l, c in terms.items():
                reach = self.pe_range[l]
                if l in self.space:
                    k = self.space.index(l)
                    reach *= outer[k][1] - outer[k][0] + 1
                    offset += abs(c) * (inner[k][0] - outer[k][0]) * self.pe_range[l]
                size += abs(c) * (reach - 1)
            extents.append(size)
            offsets.append(offset)
        inner_extents = []
        for terms in self.coeffs[group]:
            size = 1
            for l, c in terms.items():
                reach = self.pe_range[l]
                if l in self.space:
                    k = self.space.index(l)
                    reach *= inner[k][1] - inner[k][0] + 1
                size += abs(c) * (reach - 1)
            inner_extents.append(size)
        strides = [math.prod(extents[d + 1:]) for d in range(len(extents))]
        first = sum(o * st for o, st in zip(offsets, strides))
        last = sum((o + e - 1) * st for o, e, st in zip(offsets, inner_extents, strides))
        total_ = math.prod(extents)
        return first / total_, (last - first + 1) / total_

    def volume(self, group: str, box) -> int:
        if self.owners.get(group) is not None:  # the elements the PEs of the box write last
            return sum(len(e) for pe, e in self.owners[group].items()
                       if all(lo <= i <= hi for i, (lo, hi) in zip(pe, box)))
        ranges = {l: self.pe_range[l] for l in self.band}
        for k, loop in enumerate(self.space):
            ranges[loop] = (box[k][1] - box[k][0] + 1) * self.pe_range[loop]
        total = 1
        for terms in self.coeffs[group]:
            total *= 1 + sum(abs(c) * (ranges[l] - 1) for l, c in terms.items())
        return total

    # -- programs -------------------------------------------------------------------------------
    def build(self) -> list[Thread]:
        self.connect()
        threads = []
        memo = {"in": {}, "out": {}}
        pe = self.modules["PE"]
        self.tile_loops = [(l["name"][:-len("_tile")], int_value(l["trip"], self.values))
                           for l in pe["phases"][0]["loops"] if l["role"] == "tile"]
        self.tiles = math.prod(t for _, t in self.tile_loops)
        self.pe_iters = math.prod(int_value(l["trip"], self.values) for l in pe["phases"][0]["loops"] if l["role"] != "tile")
        for node in self.nodes:
            name = node[0]
            module = self.modules[name]
            if module["kind"] == "pe" and node[1] in self.stubs:
                threads.append(self.stub_thread(node))
            elif module["kind"] == "pe":
                pe_threads = self.pe_thread(node)
                threads += pe_threads if isinstance(pe_threads, list) else [pe_threads]
            else:
                direction = "out" if module["kind"] == "drain" else "in"
                threads += self.io_threads(node, module, direction, memo[direction])
        return threads

    def stub_thread(self, node) -> Thread:
        """A PE the array does not hold (engine/compiler/architecture/pe_set.py): as the exporter's sink,
        it reads the word of every input its module sends at each PE iteration; it writes nothing
        (its drains expect no element from it)."""
        kinds = {g["array"]: g for g in self.groups.values()}
        for _, kind, _ in self.ins.get(node, []) + self.outs.get(node, []):
            g = kinds[kind["array"]]
            if (g["kind"] != "in" if kind["direction"] == "in" else self.owners.get(g["name"]) is None):
                raise DesignError(f"simulator: {node_name(node)} is outside the iteration domain but would "
                                  f"{'read partial results' if kind['direction'] == 'in' else 'drain a box'} "
                                  f"of {kind['array']}")
        reads = tuple(Op(f, self.pe_iters) for f, _, _ in self.ins.get(node, []))
        return Thread(node_name(node), "PE_sink", iter([Segment(self.pe_iters, reads, ())]))

    def group_of(self, module: dict) -> str:
        return module["name"].rsplit("_L", 1)[0]

    def blocks(self, group: str, direction: str) -> tuple[int, int, list[bool]]:
        """(events, tiles per block, reload flag per block) of a group's I/O in one direction."""
        g = self.groups[group]
        dependent = [l for l in self.band if l not in g["invariant_loops"]]
        order = [l for l, _ in self.tile_loops]
        last = max((order.index(l) for l in dependent), default=-1)
        prefix = self.tile_loops[:last + 1]
        events = math.prod(t for _, t in prefix)
        if events != int_value(g["load_events"], self.values):
            raise DesignError(f"simulator: {group} load events {events} disagree with the descriptor's "
                              f"{g['load_events']}")
        reload = [True] * events
        if g["kind"] == "acc" and g["initialised_on_chip"]:
            for b in range(events):
                digits, rest = {}, b
                for loop, trip in reversed(prefix):
                    digits[loop], rest = rest % trip, rest // trip
                reload[b] = any(digits[l] > 0 for l, _ in prefix if l in g["invariant_loops"])
        if g["kind"] != "acc" or g["reload_events"] == "0":
            reload = [False] * events
        if direction == "in" and g["kind"] == "acc":
            expected = int_value(g["reload_events"], self.values)
            if sum(reload) != expected:
                raise DesignError(f"simulator: {group} reloads {sum(reload)} blocks, the descriptor says {expected}")
            events = expected
        return events, self.tiles // math.prod(t for _, t in prefix), reload

    def io_threads(self, node, module: dict, direction: str, memo: dict) -> list[Thread]:
        group = self.group_of(module)
        g = self.groups[group]
        events, per_block, _ = self.blocks(group, direction)
        own_box = self.served(node, direction, memo)
        vol_self = self.volume(group, own_box)
        buffer = module["buffers"][0] if module["buffers"] else None
        feeding = any(p["name"] in ("feed", "collect") for p in module["phases"])
        depth = module["pipeline_depth"]
        ins = [(f, k, other) for f, k, other in self.ins.get(node, []) if k["direction"] == direction]
        outs = [(f, k, other) for f, k, other in self.outs.get(node, []) if k["direction"] == direction]
        own_pack = self.values.get(f"{group}_{direction}_pack_l{module['level']}", 1)
        if buffer is not None:
            own_pack = int_value(buffer["pack"], self.values)

        def vol_of(other):
            return self.volume(group, self.served(other, direction, memo))

        # the transfer half: words towards / from the next module in the chain and the neighbours
        transfer_reads, transfer_writes = [], []
        if direction == "in":
            # as the exported loader runs (engine/export/io_modules.py _load_body): every member of a
            # chain reads the chain's whole block, forwards all of it to the next member as it
            # arrives, and keeps its own box (or passes it down to the next level) where that box
            # lies in the block's row-major order
            incoming = self.served(self.chain_head(node), direction, memo)
            kept = [self.served(other, direction, memo) for _, _, other in outs if other[0] != node[0]]
            own = tuple((min(b[k][0] for b in kept), max(b[k][1] for b in kept))
                        for k in range(len(self.space))) if kept else incoming
            vol_self = self.volume(group, incoming)
            first, share = self.position(group, own, incoming)
            for f, k, other in ins:
                transfer_reads.append((f, word_count(vol_self, k["pack"]), 0.0, 1.0))
            for f, k, other in outs:
                if other[0] == "PE":
                    continue
                if other[0] == node[0]:  # forwarded along the chain: the whole block
                    transfer_writes.append((f, word_count(vol_self, k["pack"]), 0.0, 1.0))
                else:  # down to the row head of the next level: this member's box
                    transfer_writes.append((f, word_count(vol_of(other), k["pack"]), first, share))
        else:
            for f, k, other in ins:
                if other[0] == "PE" and feeding:
                    continue
                v = vol_of(other)
                share = v / vol_self if vol_self else 1.0
                first = 1.0 - share if other[0] == node[0] else 0.0
                transfer_reads.append((f, word_count(v, pack_of(f, ins)), first, share))
            for f, k, other in outs:
                transfer_writes.append((f, word_count(vol_self, k["pack"]), 0.0, 1.0))
        n = max([word_count(vol_self, own_pack)] + [c for _, c, _, _ in transfer_reads + transfer_writes])
        owned = self.owners.get(group) is not None
        if owned:  # a last-writer drain moves an element per iteration (engine/export/owned_drain.py);
            n = max(vol_self, 1)  # an instance whose PEs own nothing still hands its buffers over
        transfer_ops = ([spread(f, c, first, share, n) for f, c, first, share in transfer_reads],
                        [spread(f, c, first, share, n) for f, c, first, share in transfer_writes])
        pace = self.dram.pace(self.d, module, self.values)
        dram_first = self.dram.read_latency if module["dram"] and direction == "in" else 0
        dram_last = self.dram.write_latency if module["dram"] and direction == "out" else 0

        def transfer(b, extra_reads=(), extra_writes=()):
            return Segment(n, tuple(transfer_ops[0]) + extra_reads, tuple(transfer_ops[1]) + extra_writes,
                           depth=depth + (dram_last if b == events - 1 else 0), latency=depth,
                           earliest=dram_first if b == 0 else 0, pace=pace)

        name = node_name(node)
        if owned and module["dram"]:
            # the storer puts the elements into the block, then writes the block in whole bus words
            extent = [1 + sum(abs(c) * (self.size[l] - 1) for l, c in terms.items()) for terms in self.coeffs[group]]
            words = math.prod(extent[:-1]) * -(-extent[-1] // own_pack)

            def store(b):
                yield dataclasses.replace(transfer(b), depth=depth, pace=0.0)  # from the chain, not DRAM
                yield Segment(words, depth=depth + (dram_last if b == events - 1 else 0), latency=depth, pace=pace)
            return [Thread(name, module["name"], (seg for b in range(events) for seg in store(b)))]
        if not feeding and module["dram"] and direction == "out" and events > 1 and all(
                op.first == 0 and op.span in (None, n) for op in transfer_ops[0] + transfer_ops[1]):
            # the storer's tile loops and its box loops form one perfect nest, which HLS flattens into
            # one pipelined loop (engine/export/io_modules.py `_drain`): one invocation a run, so its
            # port paces the words from the first one on and catches up on the words of an event
            # that arrive after a stall (rule in docs/sim.md, item 9)
            whole = ([dataclasses.replace(op, count=op.count * events, span=None) for op in ops]
                     for ops in transfer_ops)
            reads, writes = whole
            return [Thread(name, module["name"], iter([Segment(
                n * events, tuple(reads), tuple(writes), depth=depth + dram_last, latency=depth, pace=pace)]))]
        if not feeding:
            return [Thread(name, module["name"], (transfer(b) for b in range(events)))]
        # the half between the buffer and the PEs
        pe_edges = [(f, k) for f, k, other in (outs if direction == "in" else ins) if other[0] == "PE"]
        near_pes = [other for _, _, other in (outs if direction == "in" else ins) if other[0] == "PE"]
        local = self.volume(group, tuple((min(p[1][k] for p in near_pes), max(p[1][k] for p in near_pes))
                                         for k in range(len(self.space))))  # the buffered block
        if buffer is not None and not owned and int_value(buffer["elements"], self.values) != local:
            raise DesignError(f"simulator: {name} buffers {buffer['elements']} elements, its PEs use {local}")

        def feed_segments(b):
            if direction == "in" and g["kind"] == "in":
                for _ in range(per_block):
                    yield Segment(self.pe_iters, (), tuple(Op(f, self.pe_iters) for f, _ in pe_edges), latency=depth, depth=depth)
            else:
                ops = tuple(Op(f, word_count(local, k["pack"])) for f, k in pe_edges)
                yield (Segment(local, (), ops, latency=depth, depth=depth) if direction == "in"
                       else Segment(max(local, 1) if owned else local, ops, (), latency=depth, depth=depth))

        if not module["overlapped"]:
            def sequential():
                for b in range(events):
                    if direction == "in":
                        yield transfer(b)
                        yield from feed_segments(b)
                    else:
                        yield from feed_segments(b)
                        yield transfer(b)
            return [Thread(name, module["name"], sequential())]
        if direction == "in":
            return self.paired_threads(name, module["name"], events, transfer, n, feed_segments)
        free = self.internal(f"{name} free buffers", BUFFER_TOKENS, preload=BUFFER_TOKENS)
        full = self.internal(f"{name} full buffers", BUFFER_TOKENS)

        def filler():  # collect: takes a free buffer, hands over a full one
            for b in range(events):
                yield with_tokens(list(feed_segments(b)), free, full)

        def emptier():  # drain: takes a full buffer, gives it back
            for b in range(events):
                yield transfer(b, (Op(full, 1, 0, 1),), (Op(free, 1, n - 1, 1),))

        a = Thread(f"{name}.collect", module["name"], filler())
        e = Thread(f"{name}.drain", module["name"], emptier())
        free.producer, free.consumer, full.producer, full.consumer = e, a, a, e
        return [a, e]

    def paired_threads(self, name: str, module: str, events: int, transfer, n: int, feed_segments) -> list[Thread]:
        """A double-buffered input module as the exporter writes it (engine/export/io_modules.py, AutoSA's
        pattern): the first block loaded alone, then per block a call pair `load(next block) ||
        feed(every tile of this block)` joined before the next pair. So the feed of block b waits for
        its load, and the load of block b + 1 (paired with that feed) for the feed of block b - 1: the
        next block loads while all of this block's tiles feed. Two token FIFOs carry the joins:
        `loaded` (a load -> its block's first feed segment) and `fed` (a block's last feed segment ->
        the load two blocks on). (Pairs joined per tile, as the export once wrote them, held a block's
        later tiles back behind its load: MM 128^3 k__i-k.j, timed C simulation 25,411 cycles; per
        block it runs as this simulator ran before, 19,635.)"""
        loaded = self.internal(f"{name} loaded", BUFFER_TOKENS)
        fed = self.internal(f"{name} fed", BUFFER_TOKENS)

        def loader():
            for b in range(events):
                yield transfer(b, (Op(fed, 1, 0, 1),) if b >= 2 else (), (Op(loaded, 1, n - 1, 1),))

        def feeder():
            for b in range(events):
                segs = list(feed_segments(b))
                for k, seg in enumerate(segs):
                    reads = (Op(loaded, 1, 0, 1),) if k == 0 else ()
                    writes = (Op(fed, 1, seg.n - 1, 1),) if k == len(segs) - 1 and b + 2 < events else ()
                    yield dataclasses.replace(seg, reads=seg.reads + reads, writes=seg.writes + writes)
        a = Thread(f"{name}.load", module, loader())
        e = Thread(f"{name}.feed", module, feeder())
        loaded.producer, loaded.consumer, fed.producer, fed.consumer = a, e, e, a
        return [a, e]

    def internal(self, name: str, depth: int, preload: int = 0) -> Fifo:
        f = Fifo(name, depth, internal=True)
        f.width_bits = 0
        if preload:
            f.preload(preload)
        self.fifos.append(f)
        self.fifo_kind[id(f)] = "buffer"
        return f


def build_network(descriptor: dict, values: dict[str, int], dram: DramModel = DramModel()) -> Network:
    builder = _Builder(descriptor, values, dram)
    threads = builder.build()
    _attach(builder, threads)
    return Network(threads, builder.fifos, builder.modules, builder.fifo_kind)


def _attach(builder: _Builder, threads: list[Thread]) -> None:
    """Producer and consumer thread of every external FIFO (the thread whose segments use it)."""
    owner = {}
    for th in threads:
        owner.setdefault(th.name.split(".")[0], []).append(th)
    carried = {g["array"] for g in builder.groups.values() if g["kind"] != "in" and g["exterior_loop"] is not None}
    for node, entries in builder.outs.items():
        for f, kind, dst in entries:
            f.producer = _user(owner[node_name(node)], kind, "write", carried)
            f.consumer = _user(owner[node_name(dst)], kind, "read", carried)


def _user(candidates: list[Thread], kind: dict, side: str, carried: set = frozenset()) -> Thread:
    """Of a double-buffered module's two threads: the transfer half uses chain/level FIFOs, the
    other the PE side."""
    if len(candidates) == 1:
        return candidates[0]
    if candidates[0].module == "PE":
        # double-buffered accumulators: results leave from the drain half, which also takes in the
        # partial results of a reduction carried from PE to PE (reloaded ones included)
        want = "drain" if kind["direction"] == "out" or kind["array"] in carried else "compute"
        return next(th for th in candidates if th.name.endswith("." + want))
    pe_side = "PE" in (kind["source"], kind["target"])
    roles = {"in": ("load", "feed"), "out": ("collect", "drain")}[kind["direction"]]
    if kind["direction"] == "in":
        want = roles[1] if pe_side else roles[0]
    else:
        want = roles[0] if pe_side else roles[1]
    return next(th for th in candidates if th.name.endswith("." + want))
