"""The drain of an output several PEs hold (its subscripts miss a space loop, e.g. LU's U[j][i] on an
array along k): each element leaves the array once, from the PE that writes it last
(engine/compiler/last_writer.py, `Group.owners`). A mixin of `VitisHLSTarget`.

The elements move one at a time, in PE order (row major over the PE grid, as the drain chains
collect their boxes) and, inside a PE, row major:
- a PE sends the elements it owns from its box, then flushes the last word;
- a drain instance passes on the elements of the PEs it serves, then those of the instances behind
  it in its chain (a double-buffered one collects its PE's elements into a buffer first, as the
  box drains do); how many of each it passes is a constant table over the instances;
- the storer puts the elements into the output's block (one tile is the whole problem: the
  multi-statement exporter asks for it) and writes the block in whole bus words, elements no
  statement writes as 0, as a PE box of the other designs drains them.
Which PE owns which element is a table too, derived from the last-writer map for these values.
"""
from __future__ import annotations

import math

from engine.export.cpp import counted_for, index_bits, index_type, product, total
from engine.export.interface import ExportError
from engine.export.plan import Group, Instance


class OwnedDrain:
    """Mixin: the PE's, drain instances' and storer's side of a last-writer drain."""

    # ----------------------------------------------------------------- counts
    def _pe_order(self) -> list[tuple[int, ...]]:
        return sorted(self.plan.acc.owners) if self.plan.acc.owners else []

    def _owned_share(self, group: Group, inst: Instance, behind: bool) -> int:
        """Elements of the PEs instance `inst` serves (behind=False) or of those the instances behind
        it in its chain serve (behind=True)."""
        plan = self.plan
        dims = plan.module_dims[inst.module]
        at = {l: v for l, v in zip(dims, inst.index)}
        count = 0
        for pe, elements in group.owners.items():
            where = dict(zip(plan.space, pe))
            if behind:
                if not dims or any(where[l] != at[l] for l in dims[:-1]) or where[dims[-1]] <= at[dims[-1]]:
                    continue
            elif any(where[l] != at[l] for l in dims):
                continue
            count += len(elements)
        return count

    def _count_table(self, name: str, inst: Instance, behind: bool) -> tuple[str, int]:
        """A constant table of the count over every instance of the module; (C expression, largest)."""
        plan = self.plan
        dims = plan.module_dims[inst.module]
        grid = [plan.loops[l].pes for l in dims]
        instances = _grid(grid)
        counts = [self._owned_share(plan.acc, Instance(inst.module, index, inst.role, inst.group), behind)
                  for index in instances]
        most = max(counts, default=0)
        if not dims:
            return str(counts[0]), counts[0]
        self.code.line(f"static const {index_type(most)} {name}[{len(counts)}] = {{{', '.join(map(str, counts))}}};")
        return f"{name}[{_linear(dims, grid)}]", most

    def _counted(self, var: str, count: str, most: int) -> str:
        return f"for ({index_type(most)} {var} = 0; {var} < {count}; {var}++)"

    # ----------------------------------------------------------------- the PE
    def _pe_owned_drain(self, inst: Instance, group: Group, box: tuple[int, ...]) -> None:
        """The elements the PE owns, out of its box `local_<array>`."""
        plan, c = self.plan, self.code
        order = sorted(group.owners)
        firsts, coords = [0], [[] for _ in box]
        for pe in order:
            for element in group.owners[pe]:
                origin = dict(zip(plan.space, pe))
                for d, value in enumerate(element):
                    coeffs, constant = group.reference.subscripts[d]
                    local = value - constant - sum(k * origin[l] * plan.loops[l].extent_per_pe
                                                   for l, k in coeffs if l in origin)
                    if not 0 <= local < box[d]:
                        raise ExportError(f"{group.array}{list(element)}: its last writer's box does not hold it")
                    coords[d].append(local)
            firsts.append(len(coords[0]))
        total_elements = firsts[-1]
        most = max(b - a for a, b in zip(firsts, firsts[1:]))
        out = plan.streams[inst.streams[f"{group.array}_out"]]
        grid = [plan.loops[l].pes for l in plan.space]
        c.line(f"/* pass the {group.array} elements this PE writes last on (each element leaves once) */")
        c.line(f"static const {index_type(total_elements)} {group.array}_first[{len(firsts)}] = "
               f"{{{', '.join(map(str, firsts))}}};")
        for d, values in enumerate(coords):
            c.line(f"static const {index_type(max(box[d] - 1, 0))} {group.array}_d{d}[{max(total_elements, 1)}] = "
                   f"{{{', '.join(map(str, values or [0]))}}};")
        c.line(f"const {index_type(len(order))} {group.array}_pe = {_linear(plan.space, grid)};")
        c.line(f"chunk_writer<{group.array}_t, {out.pack}, 1> {group.array}_result;")
        c.line(f"drain_{group.array}:")
        with c.block(f"for ({index_type(total_elements)} n = {group.array}_first[{group.array}_pe]; "
                     f"n < {group.array}_first[{group.array}_pe + 1]; n++)"):
            c.pragma("HLS pipeline II=1")
            c.pragma(f"HLS loop_tripcount max={most}")
            index = "".join(f"[{group.array}_d{d}[n]]" for d in range(len(box)))
            c.line(f"{group.array}_result.put({group.array}_out, local_{group.array}{index});")
        c.line(f"{group.array}_result.flush({group.array}_out);")

    # ----------------------------------------------------------------- drain instances
    def _owned_volume(self) -> int:
        return max(1, max(len(v) for v in self.plan.acc.owners.values()))

    def _owned_collect(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        own, most = self._count_table("own_elements", inst, False)
        pack = plan.streams[inst.streams["own"]].pack
        c.line(f"chunk_reader<{plan.acc.array}_t, {pack}, 1> from;")
        c.line("collect:")
        with c.block(self._counted("n", own, most)):
            c.pragma("HLS pipeline II=1")
            c.pragma(f"HLS loop_tripcount max={most}")
            c.line("buffer[n] = from.get(own).lane[0];")

    def _owned_send(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        c.line("if (!enable) return;")
        own, most = self._count_table("own_elements", inst, False)
        c.line(f"chunk_writer<{plan.acc.array}_t, {plan.streams[inst.streams['out']].pack}, 1> to;")
        c.line("send:")
        with c.block(self._counted("n", own, most)):
            c.pragma("HLS pipeline II=1")
            c.pragma(f"HLS loop_tripcount max={most}")
            c.line("to.put(out, buffer[n]);")
        self._owned_pass_behind(inst)
        c.line("to.flush(out);")

    def _owned_pass_behind(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        if "successor" not in inst.streams:
            return
        behind, most = self._count_table("behind_elements", inst, True)
        c.line(f"chunk_reader<{plan.acc.array}_t, {plan.streams[inst.streams['successor']].pack}, 1> from_next;")
        c.line("pass_successor:")
        with c.block(self._counted("n", behind, most)):
            c.pragma("HLS pipeline II=1")
            c.pragma(f"HLS loop_tripcount max={most}")
            c.line("to.put(out, from_next.get(from_successor));")

    def _owned_drain_helpers(self, inst: Instance, name: str) -> None:
        plan = self.plan
        s = inst.streams
        buffer = f"{plan.acc.array}_t buffer[{self._owned_volume()}]"
        dims = [self._pe_param(l) for l in plan.module_dims[inst.module]]
        self._emit(f"{name}_collect", dims + [self._stream_arg("own", s["own"], "own"), buffer],
                   f"{inst.module}: the elements its PE writes last into a buffer", lambda: self._owned_collect(inst))
        params = dims + [buffer]
        if "successor" in s:
            params.append(self._stream_arg("successor", s["successor"], "from_successor"))
        params += [self._stream_arg("out", s["out"], "out"), "bool enable"]
        self._emit(f"{name}_send", params, f"{inst.module}: the collected elements on (when enabled), then "
                   "those of the instances behind it", lambda: self._owned_send(inst))

    def _owned_drain(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        module = plan.modules[inst.module]
        events = plan.event_loops(plan.acc)
        if self._collects(inst):
            name = self._function_name(inst)
            dims = [f"{l}_pe" for l in plan.module_dims[inst.module]]
            volume = self._owned_volume()
            c.line(f"{plan.acc.array}_t ping[{volume}], pong[{volume}];  /* one PE's elements are collected "
                   "while the other buffer is sent */")
            self._share_calls(f"{name}_collect(", f"{name}_send(")
            c.line("ap_uint<1> event = 0;")
            send = ", ".join(dims + ["{buffer}"] + (["from_successor"] if "successor" in inst.streams else [])
                             + ["out", "{enable}"])
            with c.loops(self._tile_loops(events)):
                c.line("/* both calls in one basic block: HLS runs them side by side */")
                for current, other, head in (("ping", "pong", "if (event % 2 == 0)"), ("pong", "ping", "else")):
                    with c.block(head):
                        c.line(f"{name}_collect({', '.join(dims + ['own', current])});")
                        c.line(f"{name}_send({send.format(buffer=other, enable='event > 0')});")
                c.line("event++;")
            c.line(f"{name}_send({send.format(buffer='ping', enable='true')});  /* the last elements, alone */")
            return
        if module["dram"]:
            with c.loops(self._tile_loops(events)):
                self._owned_store(inst)
            return
        with c.loops(self._tile_loops(events)):
            own, most = self._count_table("own_elements", inst, False)
            c.line(f"chunk_writer<{plan.acc.array}_t, {plan.streams[inst.streams['out']].pack}, 1> to;")
            c.line(f"chunk_reader<{plan.acc.array}_t, {plan.streams[inst.streams['own']].pack}, 1> from;")
            c.line("pass_own:")
            with c.block(self._counted("n", own, most)):
                c.pragma("HLS pipeline II=1")
                c.pragma(f"HLS loop_tripcount max={most}")
                c.line("to.put(out, from.get(own));")
            self._owned_pass_behind(inst)
            c.line("to.flush(out);")

    def _owned_store(self, inst: Instance) -> None:
        """Every drained element into the block, then the block to DRAM in whole bus words."""
        plan, c = self.plan, self.code
        group = plan.acc
        port = plan.interface.port(group.array)
        word = port.word_elements
        block = group.reference.box(plan.block_extents())
        if block[-1] % word:
            raise ExportError(f"{group.name}_out_pack: {group.array}'s rows ({block[-1]} elements) are not whole "
                              f"{word}-element DRAM words")
        elements = [e for pe in sorted(group.owners) for e in group.owners[pe]]
        t = f"{group.array}_t"
        c.line(f"{t} block{''.join(f'[{n}]' for n in block)} = {{}};  /* elements no statement writes stay 0 */")
        if word > 1:
            c.pragma(f"HLS array_reshape variable=block cyclic factor={word} dim={len(block)}")
        for d in range(len(block)):
            values = [e[d] - group.reference.subscripts[d][1] for e in elements] or [0]
            c.line(f"static const {index_type(max(block[d] - 1, 0))} at_d{d}[{len(values)}] = "
                   f"{{{', '.join(map(str, values))}}};")
        c.line(f"chunk_reader<{t}, {plan.streams[inst.streams['own']].pack}, 1> from;")
        c.line("store_elements:")
        with c.block(counted_for("n", len(elements))):
            c.pragma("HLS pipeline II=1")
            c.line(f"block{''.join(f'[at_d{d}[n]]' for d in range(len(block)))} = from.get(own).lane[0];")
        last = len(block) - 1
        loops = [(f"store_d{d}", f"d{d}", n) for d, n in enumerate(block[:-1])]
        loops.append((f"store_d{last}_words", f"w{last}", block[-1] // word))
        with c.loops(loops, pipeline=True):
            c.line(f"{port.word_type} value;")
            with c.block(counted_for("k", word)):
                c.pragma("HLS unroll")
                c.line(f"value.lane[k] = block{''.join(f'[d{d}]' for d in range(last))}[w{last} * {word} + k];")
            coords = [total([self.origin(group, d), f"d{d}"]) for d in range(len(block))]
            nest = self._event_nest(group) + [(v, n) for _, v, n in loops]
            address = self._dram_address(port, nest, self._word_address(group, port, coords, f"w{last}"), writes=True)
            c.line(f"{port.name}[{address}] = value;")


def _grid(extents: list[int]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for n in extents:
        out = [p + (k,) for p in out for k in range(n)]
    return out


def _linear(dims: list[str], grid: list[int]) -> str:
    """Row-major position of the instance (l_pe arguments) in its grid."""
    expr = "0"
    for l, n in zip(dims, grid):
        expr = f"{l}_pe" if expr == "0" else f"({expr}) * {n} + {l}_pe"
    return expr
