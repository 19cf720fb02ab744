"""The output side of the Vitis HLS kernel, from the `KernelPlan`: drain chains (a PE box passed on
whole words at a time, double buffered where the descriptor's drain module has a buffer), the DRAM
storer (each PE's box written row by row, a bus word per iteration, or into the FIFO of its
serialize stage: engine/export/dram_layout.py), and the PE-line sinks and heads. A mixin of
`VitisHLSTarget`, beside `IOModules` (engine/export/io_modules.py), whose chunk and address rules
it shares.
"""
from __future__ import annotations

import math

from engine.export.cpp import counted_for, index_type, product, total
from engine.export.interface import ExportError
from engine.export.io_modules import _tidy
from engine.export.plan import PE_INPUT_PATTERNS, Instance


class DrainModules:
    """Mixin of `VitisHLSTarget`: the functions of drain, storer, sink and head instances."""

    # ----------------------------------------------------------------- drains and storers
    def _segments_below(self, inst: Instance) -> int:
        """PE results one drain instance passes on for itself (before its successors')."""
        plan = self.plan
        pe_dims = plan.module_dims[self._pe_facing_drain()]
        dims = plan.module_dims[inst.module]
        return math.prod(plan.loops[l].pes for l in pe_dims if l not in dims)

    def _pe_facing_drain(self) -> str:
        return next(f["source"] for f in self.plan.descriptor["topology"]["fifos"]
                    if f["pattern"] in PE_INPUT_PATTERNS and f["array"] == self.plan.acc.array and f["reversed"])

    def _acc_box(self) -> tuple[int, ...]:
        return self.plan.acc.reference.box(self.plan.pe_extents())

    def _collects(self, inst: Instance) -> bool:
        """A double-buffered drain (its descriptor module has a buffer): it collects the next PE box
        into one buffer while it sends the previous one and its successors' results on."""
        if inst.role != "drain":
            return False
        module = self.plan.modules[inst.module]
        return not module["dram"] and module["overlapped"] and bool(module["buffers"])

    def _drain(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        if plan.acc.owners is not None:  # each element from its last writer (engine/export/owned_drain.py)
            self._owned_drain(inst)
            return
        module = plan.modules[inst.module]
        box = self._acc_box()
        events = plan.event_loops(plan.acc)
        if self._collects(inst):
            self._buffered_drain(inst, box, events)
            return
        if module["dram"]:
            own_pack = plan.streams[inst.streams["own"]].pack
            # whole words per PE box: one reader serves every box, and the tile, PE and box loops
            # form one perfect nest that HLS flattens into one pipelined loop (a pipeline fill per
            # run, not per PE box: the model's drain term)
            shared = math.prod(box) % own_pack == 0
            if shared:
                c.line(f"chunk_reader<{plan.acc.array}_t, {own_pack}, {self._store_chunk(inst)}> from;")
            with c.loops(self._tile_loops(events)):
                self._store(inst, box, declare_reader=not shared)
            return
        with c.loops(self._tile_loops(events)):
            c.line("/* results of the PEs this instance serves, then those of the instances behind it */")
            self._pass_segments(inst, ["own"], box)

    def _pass_segments(self, inst: Instance, keys: list[str], box: tuple[int, ...]) -> None:
        """Streams whole PE boxes from `own` (this instance's share) and `successor` (the instances
        behind it in the chain) to `out`, a chunk per iteration."""
        plan, c = self.plan, self.code
        group, s = plan.acc, inst.streams
        volume = math.prod(box)
        out_pack = plan.streams[s["out"]].pack
        own_segments = self._segments_below(inst)
        dims = plan.module_dims[inst.module]
        grid_last = plan.loops[dims[-1]].pes if dims else 1
        sources = [("own", "own", str(own_segments), own_segments)] if "own" in keys else []
        if "successor" in s:
            later = _tidy(f"({grid_last - 1} - {dims[-1]}_pe) * {own_segments}")
            sources.append(("successor", "from_successor", later, (grid_last - 1) * own_segments))
        for key, var, count, most in sources:
            pack = plan.streams[s[key]].pack
            chunk = math.gcd(pack, out_pack, volume)
            # boxes of whole words in and out: one reader and writer serve every segment, and the
            # segment loop and the copy form one perfect nest (one pipeline fill, not one a box)
            shared = volume % pack == 0 and volume % out_pack == 0
            if shared:
                c.line(f"chunk_reader<{group.array}_t, {pack}, {chunk}> {key}_reader;")
                c.line(f"chunk_writer<{group.array}_t, {out_pack}, {chunk}> {key}_writer;")
            # a count that depends on the instance: the counter of the largest (the tripcount's max)
            with c.block(f"for ({index_type(most)} segment = 0; segment < {count}; segment++)"):
                if count != str(most):
                    c.pragma(f"HLS loop_tripcount max={most}")
                reader, writer = (f"{key}_reader", f"{key}_writer") if shared else ("from", "to")
                if not shared:
                    c.line(f"chunk_reader<{group.array}_t, {pack}, {chunk}> from;")
                    c.line(f"chunk_writer<{group.array}_t, {out_pack}, {chunk}> to;")
                with c.loops([(f"pass_{key}", "n", volume // chunk)], pipeline=True):
                    c.line(f"{writer}.put(out, {reader}.get({var}));")
                if not shared:
                    c.line("to.flush(out);")

    def _buffered_drain(self, inst: Instance, box: tuple[int, ...], events: list[str]) -> None:
        plan, c = self.plan, self.code
        name = self._function_name(inst)
        shape = "".join(f"[{n}]" for n in box)
        count = math.prod(plan.loops[l].tiles for l in plan.in_pass(events))
        dims = [f"{l}_pe" for l in plan.module_dims[inst.module]]
        send = ", ".join(dims + ["{buffer}"] + (["from_successor"] if "successor" in inst.streams else [])
                         + ["out", "{enable}"])
        c.line(f"{plan.acc.array}_t ping{shape}, pong{shape};  /* one PE box is collected while the other is sent */")
        self._reshape("ping", inst, len(box))
        self._reshape("pong", inst, len(box))
        self._ping_pong(events, count, lambda buffer: f"{name}_collect(own, {buffer});",
                        lambda buffer, enable: f"{name}_send({send.format(buffer=buffer, enable=enable)});",
                        "the last box, alone")

    def _share_calls(self, *calls: str) -> None:
        """One hardware instance of each helper the ping and pong branches both call: the branches
        exclude each other, and without the limit HLS may build an instance per call site (a PE's
        multipliers twice over, which the models do not count)."""
        for call in calls:
            function = call.split("(", 1)[0].strip()
            self.code.line(f"#pragma HLS allocation function instances={function} limit=1")

    def _ping_pong(self, events: list[str], count: int, fill, empty, last_note: str) -> None:
        """AutoSA's double buffering over `count` events: on every event `fill(buffer)` and
        `empty(buffer, enable)` (the previous event's, enabled from the second) on ping and pong, side
        by side in one basic block so that HLS overlaps them; then the last event's `empty` alone."""
        c = self.code
        self._share_calls(fill("ping"), empty("ping", "true"))
        c.line(f"{index_type(count)} event = 0;")
        with c.loops(self._tile_loops(events)):
            c.line("/* both calls in one basic block: HLS runs them side by side */")
            for current, other, head in (("ping", "pong", "if (event % 2 == 0)"), ("pong", "ping", "else")):
                with c.block(head):
                    c.line(fill(current))
                    c.line(empty(other, "event > 0"))
            c.line("event++;")
        last = "ping" if (count - 1) % 2 == 0 else "pong"
        c.line(f"{empty(last, 'true')}  /* {last_note} */")

    def _drain_helpers(self, inst: Instance, name: str) -> None:
        plan = self.plan
        if plan.acc.owners is not None:
            self._owned_drain_helpers(inst, name)
            return
        box = self._acc_box()
        s = inst.streams
        t = f"{plan.acc.array}_t"
        buffer = f"{t} buffer" + "".join(f"[{n}]" for n in box)
        self._emit(f"{name}_collect", [self._stream_arg("own", s["own"], "own"), buffer],
                   f"{inst.module}: the finished PE box into a buffer", lambda: self._copy_box(inst, box, "own"))
        params = [self._pe_param(l) for l in plan.module_dims[inst.module]] + [buffer]
        if "successor" in s:
            params.append(self._stream_arg("successor", s["successor"], "from_successor"))
        params += [self._stream_arg("out", s["out"], "out"), "bool enable"]
        self._emit(f"{name}_send", params, f"{inst.module}: a collected box on (when enabled), then the "
                   "results of the instances behind it", lambda: self._send_body(inst, box))

    def _copy_box(self, inst: Instance, box: tuple[int, ...], key: str) -> None:
        plan, c = self.plan, self.code
        pack = plan.streams[inst.streams[key]].pack
        chunk = math.gcd(pack, self._buffer_pack(inst), box[-1])
        last = len(box) - 1
        c.line(f"chunk_reader<{plan.acc.array}_t, {pack}, {chunk}> from;")
        loops = [(f"collect_d{d}", f"d{d}", n) for d, n in enumerate(box[:-1])]
        loops.append((f"collect_d{last}_chunks", f"w{last}", box[-1] // chunk))
        with c.loops(loops, pipeline=True):
            c.line(f"const packed<{plan.acc.array}_t, {chunk}> chunk = from.get({key});")
            index = "".join(f"[d{d}]" for d in range(last))
            c.line(f"{counted_for('k', chunk)} buffer{index}[w{last} * {chunk} + k] = chunk.lane[k];"
                   "  /* one buffer word (unrolled) */")

    def _buffer_out(self, inst: Instance, box: tuple[int, ...], buffer: str, stream: str, verb: str) -> None:
        """A buffered block of the written array out to `stream`, row major, a chunk per iteration."""
        plan, c = self.plan, self.code
        t = f"{plan.acc.array}_t"
        pack = plan.streams[inst.streams["child" if stream == "to_child" else stream]].pack
        chunk = math.gcd(pack, self._buffer_pack(inst), box[-1])
        last = len(box) - 1
        c.line(f"chunk_writer<{t}, {pack}, {chunk}> to;")
        loops = [(f"{verb}_d{d}", f"d{d}", n) for d, n in enumerate(box[:-1])]
        loops.append((f"{verb}_d{last}_chunks", f"w{last}", box[-1] // chunk))
        with c.loops(loops, pipeline=True):
            c.line(f"packed<{t}, {chunk}> chunk;")
            index = "".join(f"[d{d}]" for d in range(last))
            c.line(f"{counted_for('k', chunk)} chunk.lane[k] = {buffer}{index}[w{last} * {chunk} + k];")
            c.line(f"to.put({stream}, chunk);")
        c.line(f"to.flush({stream});")

    def _send_body(self, inst: Instance, box: tuple[int, ...]) -> None:
        self.code.line("if (!enable) return;")
        self._buffer_out(inst, box, "buffer", "out", "send")
        self._pass_segments(inst, [], box)

    def _first_condition(self) -> str:
        """The reduction's first acc event for these elements: the earlier tiles of every reduction
        loop that encloses the event are all zero."""
        plan = self.plan
        events = plan.event_loops(plan.acc)
        return " && ".join(f"{l}_tile == 0" for l in events
                           if not plan.acc.reference.depends_on(l) and plan.loops[l].tiles > 1)

    def _store_chunk(self, inst: Instance) -> int:
        """Elements the storer takes from its stream at a time: the stream's words, split to fit a
        bus word."""
        own_pack = self.plan.streams[inst.streams["own"]].pack
        return math.gcd(own_pack, self.plan.interface.port(self.plan.acc.array).word_elements)

    def _store(self, inst: Instance, box: tuple[int, ...], *, declare_reader: bool = True) -> None:
        """Each PE's box to its place in DRAM, row by row, a bus word per iteration. The PEs send
        whole results (partial results of a reduction split over tiles were read back into them,
        pass by pass): the storer only writes, whole words in an unconditional affine loop; words
        narrower than the bus from the drain chain are assembled on chip first (as many reads per
        iteration as pieces: the loop's II)."""
        plan, c = self.plan, self.code
        group = plan.acc
        port = plan.interface.port(group.array)
        own_pack = plan.streams[inst.streams["own"]].pack
        pe_dims = plan.module_dims[self._pe_facing_drain()]
        word = port.word_elements
        if not (box[-1] % word == 0 and self._dram_aligned(group, word, pe_dims)):
            # only a factor given by hand can ask for it: the inferred ones divide every box and start
            level = next(m["level"] for m in plan.modules.values()
                         if m["array"] == group.array and m["dram"] and m["kind"] == "drain")
            raise ExportError(f"{group.name}_out_pack_l{level}={word}: {group.array}'s PE boxes "
                              f"({'x'.join(map(str, box))} elements) do not all start on a {word}-element DRAM "
                              f"word; give a power of two dividing the box and where boxes start, or leave it "
                              f"to be inferred")
        chunk = self._store_chunk(inst)
        pieces = word // chunk
        t = f"{group.array}_t"
        last = len(box) - 1
        segment_loops = [(f"store_{l}_pe", f"{l}_pe", plan.loops[l].pes) for l in pe_dims]
        with c.loops(segment_loops):
            if declare_reader:
                c.line(f"chunk_reader<{t}, {own_pack}, {chunk}> from;")
            loops = [(f"store_d{d}", f"d{d}", n) for d, n in enumerate(box[:-1])]
            loops.append((f"store_d{last}_words", f"w{last}", box[-1] // word))
            with c.loops(loops, pipeline=True, ii=pieces):
                position = self._chunk_position(last, word, box[-1] // word)
                coords = [_tidy(total([self.origin(group, d), self.offset_in(group, d, pe_dims, []), f"d{d}"]))
                          for d in range(len(box))]
                if pieces == 1:
                    c.line(f"const packed<{t}, {chunk}> value = from.get(own);")
                else:
                    c.line(f"{port.word_type} value;  /* assembled from {pieces} pieces, then written whole */")
                    with c.block(counted_for("piece", pieces)):
                        c.pragma("HLS unroll")
                        c.line(f"const packed<{t}, {chunk}> part = from.get(own);")
                        with c.block(counted_for("k", chunk)):
                            c.pragma("HLS unroll")
                            c.line(f"value.lane[piece * {chunk} + k] = part.lane[k];")
                pe_words = [product([f"{l}_pe", str(k * plan.loops[l].extent_per_pe // word)])
                            for l, k in group.reference.coefficients(last).items()
                            if l in pe_dims and plan.loops[l].pes > 1]
                nest = (self._event_nest(group) + [(v, n) for _, v, n in segment_loops if n > 1]
                        + [(v, n) for _, v, n in loops])
                address = self._dram_address(port, nest, self._word_address(
                    group, port, coords, total(pe_words + [f"w{last}"])), writes=True)
                if self._store_words(port) > 1:  # its serialize stage packs them into bus words
                    c.line("to_bus.write(value);")
                else:
                    c.line(f"{port.name}[{address}] = value;")
                self._drop_if_unused(position, f"d{last}")

    def _sink(self, inst: Instance) -> None:
        with self.code.loops([("sink_words", "n", self.plan.pe_iterations())], pipeline=True):
            self.code.line("in.read();")

    def _head(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        group = plan.acc
        volume = math.prod(self._acc_box())
        pack = plan.streams[inst.streams["out"]].pack
        with c.loops(self._tile_loops(plan.event_loops(group))):
            c.line(f"packed<{group.array}_t, {pack}> identity;")
            c.line(f"{counted_for('k', pack)} identity.lane[k] = ({group.array}_t){plan.identity};")
            with c.loops([("start_words", "n", -(-volume // pack))], pipeline=True):
                c.line("out.write(identity);")
