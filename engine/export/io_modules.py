"""The I/O side of the Vitis HLS kernel: DRAM loaders, I/O chain modules with their (double)
buffers and PE feeds, drain chains and DRAM storers, written word-wide from the `KernelPlan`.

Words, not elements (AutoSA's generated I/O, ../shared/reference/autosa-hls-patterns.md): every
loop moves one *chunk* per iteration, the largest number of elements that divides every word it
touches (the input and output streams' packing factors, the buffer's word, the DRAM bus word) and
every box edge it cuts (the box's innermost extent, where this instance's own box starts in it).
With the packing factors the models infer (powers of two dividing the innermost extent of the box
they pack and, at the DRAM level, where every box starts: AutoSA's rule) a chunk is a whole word,
so a loop runs once per word, as the models count; on chip, where a reference's boxes overlap (a
halo such as `w + q`) the chunk shrinks to what divides both. A DRAM factor given by hand that would
make a word straddle two boxes is refused.

DRAM reads and writes are unconditional, affine loops over whole bus words (bursts); a storer fed
words narrower than the bus assembles each bus word on chip first, and never reads DRAM: partial
results of a design that revisits an output block come back through its reload modules, pass by
pass (engine/compiler/architecture/passes.py).
Double buffering is AutoSA's:
the first block is loaded alone, then for every block a `_load` helper (the next block) and a
`_feed` helper (every tile that reuses this block) are called side by side in one basic block on
the ping and pong buffers, so HLS overlaps the next block's load with all of this block's feeds.
"""
from __future__ import annotations

import math
import re

from engine.export.cpp import counted_for, index_bits, index_type, product, total
from engine.export.interface import ExportError
from engine.export.plan import PE_INPUT_PATTERNS, Group, Instance, _int


class IOModules:
    """Mixin of `VitisHLSTarget`: the functions of I/O, drain, sink and head instances."""

    # ----------------------------------------------------------------- shapes and chunks
    def _io_shape(self, inst: Instance):
        plan = self.plan
        group = plan.group(inst.group)
        module = plan.modules[inst.module]
        dims = plan.module_dims[inst.module]
        within = [] if module["dram"] else dims[:-1]
        own = group.reference.box(plan.served_extents(dims))
        feeds_pes = any(f["source"] == inst.module and f["pattern"] in PE_INPUT_PATTERNS
                        for f in plan.descriptor["topology"]["fifos"])
        return group, module, dims, within, own, feeds_pes

    def _buffer_pack(self, inst: Instance) -> int:
        """Elements per word of the buffer a module keeps (the descriptor's buffer pack)."""
        module = self.plan.modules[inst.module]
        if not module["buffers"]:
            return 1
        return self._value(module["buffers"][0]["pack"])

    def _value(self, expression: str) -> int:
        return _int(expression, self.plan.values)

    def _edge_steps(self, group: Group, dims: list[str], within: list[str]) -> list[int]:
        """Where, along the innermost stored dimension, the boxes of the instances over `dims`
        start inside the box over `within`: the steps between neighbours."""
        last = len(group.reference.subscripts) - 1
        steps = []
        for loop, c in group.reference.coefficients(last).items():
            b = self.plan.loops[loop]
            if loop in dims and loop not in within and b.space and b.pes > 1:
                steps.append(c * b.extent_per_pe)
        return steps

    def _load_chunk(self, inst: Instance) -> int:
        plan = self.plan
        group, module, dims, within, own, feeds_pes = self._io_shape(inst)
        incoming = group.reference.box(plan.served_extents(within))
        s = inst.streams
        sizes = [incoming[-1] if incoming else 1, own[-1] if own else 1, *self._edge_steps(group, dims, within)]
        if module["dram"]:
            port = plan.interface.port(group.array)
            sizes.append(port.word_elements)
            if not self._dram_aligned(group, port.word_elements, []):
                raise self._misaligned(group, port, incoming)
        else:
            sizes.append(plan.streams[s["in"]].pack)
        if "next" in s:
            sizes.append(plan.streams[s["next"]].pack)
        sizes.append(self._buffer_pack(inst) if feeds_pes else plan.streams[s["child"]].pack)
        chunk = math.gcd(*sizes)
        if module["dram"] and chunk != plan.interface.port(group.array).word_elements:
            raise self._misaligned(group, plan.interface.port(group.array), incoming)
        return chunk

    def _misaligned(self, group: Group, port, box) -> ExportError:
        """A DRAM word that would straddle two boxes: only a packing factor given by hand can ask
        for one (the inferred ones divide every box and where it starts)."""
        level = next(m["level"] for m in self.plan.modules.values()
                     if m["array"] == group.array and m["dram"] and m["kind"] == "io")
        name = f"{group.name}_in_pack_l{level}"
        return ExportError(f"{name}={port.word_elements}: {group.array}'s boxes ({'x'.join(map(str, box))} elements) "
                           f"do not all start on a {port.word_elements}-element DRAM word; give a power of two "
                           f"dividing the box and where boxes start, or leave it to be inferred")

    def _dram_aligned(self, group: Group, word: int, pe_dims: list[str]) -> bool:
        """Every box of this group (a tile's, or a PE's inside it when `pe_dims` are given) starts
        on a bus-word boundary of its row in DRAM."""
        last = len(group.reference.subscripts) - 1
        coeffs, constant = group.reference.subscripts[last]
        steps = [constant] + [c * self.plan.loops[l].t1 for l, c in coeffs if self.plan.loops[l].tiles > 1]
        steps += self._edge_steps(group, pe_dims, [])
        return all(step % word == 0 for step in steps)

    def _chunk_position(self, last: int, chunk: int, chunks: int) -> int:
        """Declare the element position of chunk `w<last>` (of `chunks`) along the innermost
        dimension; returns the line, which `_drop_if_unused` removes when the body never reads it."""
        t = index_type((chunks - 1) * chunk)
        self.code.line(f"const {t} d{last} = w{last} * {chunk};" if chunk > 1 else f"const {t} d{last} = w{last};")
        return len(self.code.lines) - 1

    def _drop_if_unused(self, line: int, name: str) -> None:
        if not any(re.search(rf"\b{name}\b", text) for text in self.code.lines[line + 1:]):
            del self.code.lines[line]

    # ----------------------------------------------------------------- address expressions
    def _word_address(self, group: Group, port, coords: list[str], last_word: str) -> str:
        """Bus-word index of the element at the start of chunk `last_word` of row `coords` (every
        term a whole number of words: the caller checked the alignment)."""
        word = port.word_elements
        strides = [math.prod(port.padded_shape[d + 1:]) for d in range(len(port.padded_shape))]
        terms = [product([f"({c})", str(st // word)]) for c, st in zip(coords[:-1], strides[:-1])]
        coeffs, constant = group.reference.subscripts[-1]
        terms += [product([f"{l}_tile", str(c * self.plan.loops[l].t1 // word)]) for l, c in coeffs
                  if self.plan.loops[l].tiles > 1]
        terms += [str(constant // word)] if constant else []
        return _tidy(total(terms + [last_word]))

    def _prefetches(self, inst: Instance) -> bool:
        """Double-buffered modules feeding the PEs load the next block while the current one feeds."""
        if inst.role != "io":
            return False
        _, module, _, _, _, feeds_pes = self._io_shape(inst)
        return feeds_pes and module["overlapped"]

    def _io(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        group, module, _, _, own, feeds_pes = self._io_shape(inst)
        events = plan.event_loops(group)
        partial = group is plan.acc  # reload modules: a PE box of partial results per event
        tile_loops = events if partial else plan.tile_order
        inner = [l for l in tile_loops if l not in events] if feeds_pes else []
        first = " && ".join(f"{l}_tile == 0" for l in inner if plan.loops[l].tiles > 1)
        shape = "".join(f"[{n}]" for n in own)
        if partial:
            self._reload_guard(inst, feeds_pes)
        if self._prefetches(inst):
            name = self._function_name(inst)
            blocks = math.prod(plan.loops[l].tiles for l in plan.in_pass(events))
            args = ", ".join(self._load_args(inst))
            c.line(f"{group.array}_t ping{shape}, pong{shape};  /* one block is loaded while the other feeds */")
            self._reshape("ping", inst, len(own))
            self._reshape("pong", inst, len(own))
            self._share_calls(f"{name}_load(", f"{name}_feed(")
            c.line(f"{name}_load({args}, ping, 0, true);  /* the first block, alone */")
            blocks_loops, _ = self._block_loops(inst)
            c.line(f"{index_type(blocks + 1)} block = 0;")
            with c.loops(blocks_loops):
                c.line("/* both calls in one basic block: HLS runs them side by side (the next block loads "
                       "while every tile of this one feeds) */")
                for current, other, head in (("ping", "pong", "if (block % 2 == 0)"), ("pong", "ping", "else")):
                    with c.block(head):
                        c.line(f"{name}_load({args}, {other}, block + 1, block + 1 < {blocks});")
                        c.line(f"{name}_feed({current}, to_child);")
                c.line("block++;")
            return
        if feeds_pes:
            c.line(f"{group.array}_t buffer{shape};")
            self._reshape("buffer", inst, len(own))
            loops = self._tile_loops(tile_loops)
        else:
            loops = self._tile_loops(events)
        with c.loops(loops):
            with c.block(f"if ({first})" if first else "/* load the next block */", tail="}"):
                self._load_body(inst, "buffer")
            if feeds_pes:
                self._feed_body(inst, "buffer")

    def _reload_guard(self, inst: Instance, feeds_pes: bool) -> None:
        """Reload modules work in the passes that read partial results back. The one feeding the
        first PE of a reduction carried from PE to PE sends the identity in the other passes (the
        start of the chain's partial sum)."""
        plan, c = self.plan, self.code
        if plan.reload_always:
            return
        if not (feeds_pes and plan.acc.exterior):
            c.line("if (!reload) return;  /* nothing to read back in this pass */")
            return
        volume = math.prod(plan.acc.reference.box(plan.pe_extents()))
        pack = plan.streams[inst.streams["child"]].pack
        with c.block("if (!reload)"):
            c.line("/* no partial result yet: the chain's partial sums start from the identity */")
            with c.loops([("identity_" + label, var, trip)
                          for label, var, trip in self._tile_loops(plan.event_loops(plan.acc))]):
                c.line(f"packed<{plan.acc.array}_t, {pack}> identity;")
                c.line(f"{counted_for('k', pack)} identity.lane[k] = ({plan.acc.array}_t){plan.identity};")
                with c.loops([("identity_words", "n", -(-volume // pack))], pipeline=True):
                    c.line("to_child.write(identity);")
            c.line("return;")

    def _reshape(self, variable: str, inst: Instance, dims: int) -> None:
        pack = self._buffer_pack(inst)
        if pack > 1 and dims:
            # one buffer word holds `pack` elements of the innermost dimension: a chunk is written and
            # the SIMD lanes are read in one access
            self.code.pragma(f"HLS array_reshape variable={variable} cyclic factor={pack} dim={dims}")

    def _load_args(self, inst: Instance) -> list[str]:
        dims = self.plan.module_dims[inst.module]
        module = self.plan.modules[inst.module]
        source = self.plan.interface.port(self.plan.group(inst.group).array).name if module["dram"] else "in"
        return ([f"{l}_pe" for l in dims] + [f"{l}_tile" for l in self.plan.pass_loops] + [source]
                + (["to_next"] if "next" in inst.streams else []))

    def _prefetch_helpers(self, inst: Instance, name: str) -> None:
        group, module, dims, _, own, _ = self._io_shape(inst)
        s = inst.streams
        buffer = f"{group.array}_t buffer" + "".join(f"[{n}]" for n in own)
        if module["dram"]:
            port = self.plan.interface.port(group.array)
            source = f"const {port.word_type} *{port.name}"
        else:
            source = self._stream_arg("in", s["in"], "in")
        params = [self._pe_param(l) for l in dims] + [self._tile_param(l) for l in self.plan.pass_loops] + [source]
        if "next" in s:
            params.append(self._stream_arg("next", s["next"], "to_next"))
        blocks = math.prod(self.plan.loops[l].tiles for l in self.plan.in_pass(self.plan.event_loops(group)))
        # the block number, 0 .. blocks (the last call, disabled, passes `blocks`)
        self._emit(f"{name}_load", params + [buffer, f"{index_type(blocks)} block", "bool enable"],
                   f"{inst.module}: one block in (when enabled), forwarded down the chain, this instance's box kept",
                   lambda: self._load_helper(inst))
        _, tiles = self._block_loops(inst)

        def feed_block():
            with self.code.loops(tiles):
                self._feed_body(inst, "buffer")
        self._emit(f"{name}_feed", [buffer, self._stream_arg("child", s["child"], "to_child")],
                   f"{inst.module}: every tile of PE iterations a block serves, fed from it", feed_block)

    def _block_loops(self, inst: Instance) -> tuple[list, list]:
        """A double-buffered input's tile loops, split: those that step from block to block (the
        caller's loop, one load || feed pair an iteration) and the innermost ones whose tiles reuse
        one block (inside the feed helper)."""
        plan = self.plan
        group = plan.group(inst.group)
        events = plan.event_loops(group)
        tile_loops = events if group is plan.acc else plan.tile_order
        loops = self._tile_loops(tile_loops)
        inner = {f"{l}_tile" for l in tile_loops if l not in events}
        split = len(loops)
        while split and loops[split - 1][1] in inner:
            split -= 1
        if any(var in inner for _, var, _ in loops[:split]):
            raise ExportError(f"{inst.module}: a tile loop that reuses a block runs outside one that changes it")
        return loops[:split], loops[split:]

    def _feed_partial(self, inst: Instance, buffer: str) -> None:
        """A reload module feeding the PEs: the PE's box of partial results once per event, row
        major, in words of the PE stream (the order the PE reads its accumulators in)."""
        box = self.plan.acc.reference.box(self.plan.pe_extents())
        self.code.line("/* feed the PE its block of partial results, row major */")
        self._buffer_out(inst, box, buffer, "to_child", "feed")

    def _load_helper(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        group, module, *_ = self._io_shape(inst)
        c.line("if (!enable) return;")
        if module["dram"]:
            # the block's tile indices from its number (block = the event loops, outermost first)
            stride = 1
            for loop in reversed(plan.in_pass(plan.event_loops(group))):
                tiles = plan.loops[loop].tiles
                if tiles > 1:  # the type of the tile loop's counter
                    c.line(f"const {index_type(tiles)} {loop}_tile = (block / {stride}) % {tiles};")
                stride *= tiles
        self._load_body(inst, "buffer")

    def _load_body(self, inst: Instance, buffer: str) -> None:
        plan, c = self.plan, self.code
        group, module, dims, within, own, feeds_pes = self._io_shape(inst)
        incoming = group.reference.box(plan.served_extents(within))
        s = inst.streams
        chunk = self._load_chunk(inst)
        t = f"{group.array}_t"
        offsets = [self.offset_in(group, d, dims, within) for d in range(len(own))]
        port = plan.interface.port(group.array)
        if not module["dram"]:
            c.line(f"chunk_reader<{t}, {plan.streams[s['in']].pack}, {chunk}> from_parent;")
        if "next" in s:
            c.line(f"chunk_writer<{t}, {plan.streams[s['next']].pack}, {chunk}> forward;")
        if not feeds_pes:
            c.line(f"chunk_writer<{t}, {plan.streams[s['child']].pack}, {chunk}> keep;")
        last = len(incoming) - 1
        loops = [(f"load_d{d}", f"d{d}", n) for d, n in enumerate(incoming[:-1])]
        loops.append((f"load_d{last}_chunks", f"w{last}", incoming[-1] // chunk))
        with c.loops(loops, pipeline=True):
            position = self._chunk_position(last, chunk, incoming[-1] // chunk)
            coords = [_tidy(total([self.origin(group, d), f"d{d}"])) for d in range(len(incoming))]
            if module["dram"]:
                nest = self._event_nest(group) + [(f"d{d}", n) for d, n in enumerate(incoming[:-1])]
                address = self._dram_address(port, nest + [(f"w{last}", incoming[-1] // chunk)],
                                             self._word_address(group, port, coords, f"w{last}"), writes=False)
                c.line(f"const packed<{t}, {chunk}> chunk = {port.name}[{address}];")
            else:
                c.line(f"const packed<{t}, {chunk}> chunk = from_parent.get(in);")
            if "next" in s:
                c.line("forward.put(to_next, chunk);")
            inside = " && ".join(
                f"d{d} >= {o} && d{d} < {_tidy(total([o, str(n)]))}" if o != "0" else f"d{d} < {n}"
                for d, (o, n) in enumerate(zip(offsets, own)) if o != "0" or n != incoming[d])
            if feeds_pes:
                index = [_tidy(total([f"d{d}", _neg(o)])) for d, o in enumerate(offsets)]
                if chunk > 1:
                    index[-1] = _tidy(total([index[-1], "k"]))
                slot = "".join(f"[{x}]" for x in index)
                target = (f"{counted_for('k', chunk)} {buffer}{slot} = chunk.lane[k];  /* one buffer word (unrolled) */"
                          if chunk > 1 else f"{buffer}{slot} = chunk.lane[0];")
            else:
                target = "keep.put(to_child, chunk);"
            c.line(f"if ({inside}) {target}" if inside else target)
            self._drop_if_unused(position, f"d{last}")
        if "next" in s:
            c.line("forward.flush(to_next);")
        if not feeds_pes:
            c.line("keep.flush(to_child);")

    def _feed_body(self, inst: Instance, buffer: str) -> None:
        c = self.code
        group, _, dims, _, _, _ = self._io_shape(inst)
        if group is self.plan.acc:
            self._feed_partial(inst, buffer)
            return
        coords = self.box_coords(group, dims)
        lanes = self.plan.streams[inst.streams["child"]].pack
        c.line("/* feed the PEs: one word per PE iteration */")
        with c.loops(self._point_loops("feed"), pipeline=True):
            c.line(f"packed<{group.array}_t, {lanes}> word;")
            with c.block(counted_for("lane", lanes)):
                c.pragma("HLS unroll")
                c.line(f"word.lane[lane] = {buffer}{''.join(f'[{x}]' for x in coords)};")
            c.line("to_child.write(word);")

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


def _neg(offset: str) -> str:
    return "0" if offset == "0" else f"-({offset})"


def _tidy(text: str) -> str:
    """Drop `+ 0` and `+ -(x)` noise from generated index arithmetic."""
    return text.replace("+ -(", "- (")
