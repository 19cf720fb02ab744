"""The input side of the Vitis HLS kernel: DRAM loaders and I/O chain modules with their (double)
buffers and PE feeds, written word-wide from the `KernelPlan` (drain chains and DRAM storers:
engine/export/drain_modules.py).

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

from engine.export.cpp import counted_for, index_type, product, total
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


def _neg(offset: str) -> str:
    return "0" if offset == "0" else f"-({offset})"


def _tidy(text: str) -> str:
    """Drop `+ 0` and `+ -(x)` noise from generated index arithmetic."""
    return text.replace("+ -(", "- (")
