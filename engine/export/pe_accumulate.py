"""The PE of a design that runs one statement (an accumulation, or an output written once per
point) -> its Vitis HLS C++: a mixin of `VitisHLSTarget` (engine/export/hls_kernel.py).

Per accumulation event the PE starts its accumulators (the initialisation's constant, or the
identity for partial results; partial results read back in the passes that reload), runs one
pipelined loop over the reduction tiles and its points (a word of every input per iteration, passed
on to the next PE along exterior groups, the statement on every SIMD lane), and passes the finished
block on (adding the previous PE's partial results when the reduction loop is a space loop). Where
the descriptor's PE is `overlapped` (double-buffered accumulators, engine/compiler/architecture/pe.py
`build_pe`), the event's loop is the helper `PE_compute` and the transfer the helper `PE_drain`,
called side by side on ping and pong: the results of one event leave while the next one computes.
"""
from __future__ import annotations

import math
import re

from engine.export.cpp import counted_for, index_type, pack_type as _pack_type
from engine.export.interface import ExportError
from engine.export.io_modules import _tidy
from engine.export.plan import Instance, references


class AccumulatorPE:
    """Mixin: `_pe(inst)` writes the body of the PE function (and `_pe_helpers` its helpers)."""

    def _pe(self, inst: Instance) -> None:
        if self.plan.statements:
            self._pe_statements(inst)
            return
        if self._pe_overlaps():
            self._pe_ping_pong(inst)
            return
        plan, c = self.plan, self.code
        box = self._acc_box()
        self._declare_accumulators([f"local_{plan.acc.array}"], box)
        with c.loops(self._tile_loops(plan.event_loops(plan.acc))):
            self._pe_compute_body(inst, box)
            self._pe_drain_body(inst, box)

    def _pe_overlaps(self) -> bool:
        """Double-buffered accumulators (descriptor: the PE module `overlapped`, pe.py build_pe's
        `overlap_drain`): an event's results are sent while the next event computes."""
        plan = self.plan
        return bool(plan.modules["PE"]["overlapped"]) and not plan.statements and plan.acc.owners is None

    def _declare_accumulators(self, names: list[str], box: tuple[int, ...]) -> None:
        plan, c = self.plan, self.code
        acc = plan.acc
        c.line(f"{acc.array}_t {', '.join(n + ''.join(f'[{k}]' for k in box) for n in names)};")
        if plan.lanes > 1 and plan.simd_loop and acc.reference.depends_on(plan.simd_loop):
            # every lane updates its own accumulator in the same cycle
            for n in names:
                c.pragma(f"HLS array_partition variable={n} cyclic factor={plan.lanes} dim={len(box)}")

    def _pe_helper_streams(self, inst: Instance, drain: bool) -> list[str]:
        """Stream parameters of the PE's compute helper (operands in and passed on, partial results
        reloaded) or drain helper (results out, the previous PEs' partial results in)."""
        plan, s = self.plan, inst.streams
        acc = plan.acc
        if drain:
            keys = [f"{acc.array}_in"] if acc.exterior else []
            keys.append(f"{acc.array}_out")
        else:
            keys = [f"{g.array}_{d}" for g in plan.groups if g.kind == "in" for d in ("in", "out")]
            if plan.reloads and not acc.exterior:
                keys.append(f"{acc.array}_in")
        return [k for k in keys if k in s]

    def _pe_helpers(self, inst: Instance, name: str) -> None:
        """`PE_compute` (one event into the accumulators it is given) and `PE_drain` (a finished
        event's accumulators on, when enabled), which the PE calls side by side on ping and pong."""
        plan, s = self.plan, inst.streams
        box = self._acc_box()
        buffer = f"{plan.acc.array}_t local_{plan.acc.array}" + "".join(f"[{n}]" for n in box)
        events = plan.in_pass(plan.event_loops(plan.acc))
        params = ([self._pe_param(l) for l in plan.module_dims[inst.module]] + [p for p, _ in self._pass_params()]
                  + [self._tile_param(l) for l in events] + [buffer]
                  + [self._stream_arg(k, s[k], k) for k in self._pe_helper_streams(inst, False)])
        self._emit(f"{name}_compute", params, f"{name}: one accumulation event into the accumulators given",
                   lambda: self._pe_compute_body(inst, box))
        params = [buffer] + [self._stream_arg(k, s[k], k) for k in self._pe_helper_streams(inst, True)] + ["bool enable"]

        def drain():
            self.code.line("if (!enable) return;")
            self._pe_drain_body(inst, box)
        self._emit(f"{name}_drain", params, f"{name}: a finished event's results on (when enabled)", drain)

    def _pe_ping_pong(self, inst: Instance) -> None:
        """Every event computes into one set of accumulators while the previous event's results
        leave from the other (both calls in one basic block: HLS runs them side by side); the last
        event's results leave alone."""
        plan = self.plan
        name = self._function_name(inst)
        box = self._acc_box()
        events = plan.in_pass(plan.event_loops(plan.acc))
        count = math.prod(plan.loops[l].tiles for l in events)
        compute = ", ".join([f"{l}_pe" for l in plan.module_dims[inst.module]] + [a for _, a in self._pass_params()]
                            + [f"{l}_tile" for l in events] + ["{buffer}"] + self._pe_helper_streams(inst, False))
        drain = ", ".join(["{buffer}"] + self._pe_helper_streams(inst, True) + ["{enable}"])
        self._declare_accumulators(["ping", "pong"], box)
        self._ping_pong(plan.event_loops(plan.acc), count,
                        lambda buffer: f"{name}_compute({compute.format(buffer=buffer)});",
                        lambda buffer, enable: f"{name}_drain({drain.format(buffer=buffer, enable=enable)});",
                        "the last event's results, alone")

    def _pe_compute_body(self, inst: Instance, box: tuple[int, ...]) -> None:
        """One accumulation event: the start value, the partial results reloaded, then the pipelined
        loop over the reduction tiles and the PE's points."""
        plan, c = self.plan, self.code
        acc = plan.acc
        coords = self.box_coords(acc, plan.space)
        local = f"local_{acc.array}" + "".join(f"[{x}]" for x in coords)
        events = plan.event_loops(acc)
        inner = [l for l in plan.tile_order if l not in events]
        first = self._first_condition()
        chain = acc.exterior
        start = plan.identity or "0"
        if acc.kind == "out":
            start = "0"
        elif plan.init_value is not None and acc.initialised_on_chip:
            conditions = [x for x in (first, f"{chain}_pe == 0" if chain and plan.loops[chain].pes > 1 else "")
                          if x]
            start = f"({' && '.join(conditions)}) ? ({acc.array}_t)({plan.init_value}) : ({acc.array}_t){plan.identity}" \
                if conditions else f"({acc.array}_t)({plan.init_value})"
        c.line(f"const {acc.array}_t start = {start};  /* the initial value, or the identity for partial results */")
        start_line = len(c.lines) - 1
        reloaded = plan.reloads and not chain
        if reloaded:
            self._reload_accumulators(inst, box)
        # one pipelined loop per accumulation event (HLS flattens the perfect nest of the tiles
        # that reduce into these accumulators and their points); as in AutoSA's PE, an
        # accumulator starts from `start` at its first reduction iteration
        with c.loops(self._tile_loops(inner) + self._point_loops("compute"), pipeline=True,
                     ii=self._compute_ii()):
            first_update = self._first_reduction_iteration(inner)
            c.line(f"const bool first = {'!reload && ' + first_update if reloaded else first_update};")
            first_line = len(c.lines) - 1
            words = {}
            for g in plan.groups:
                if g.kind != "in":
                    continue
                stream = plan.streams[inst.streams[f"{g.array}_in"]]
                if stream.pack not in (1, plan.lanes):
                    raise ExportError(f"{g.array} reaches the PEs {stream.pack} elements a word, "
                                      f"not 1 or {plan.lanes}")
                c.line(f"const {_pack_type(g.array, stream.pack)} {g.array}_data = {g.array}_in.read();")
                if f"{g.array}_out" in inst.streams:
                    c.line(f"{g.array}_out.write({g.array}_data);")
                words[g.array] = f"{g.array}_data.lane[{'lane' if stream.pack > 1 else '0'}]"
            self._lanes(words, local)
            self._drop_if_unused(first_line, "first")
        self._drop_if_unused(start_line, "start")

    def _pe_drain_body(self, inst: Instance, box: tuple[int, ...]) -> None:
        """The finished block on, a word per iteration (adding the previous PEs' partial results
        when the reduction is carried from PE to PE)."""
        plan, c = self.plan, self.code
        acc = plan.acc
        out = plan.streams[inst.streams[f"{acc.array}_out"]]
        c.line(f"/* pass the finished {acc.array} block on" +
               (", adding the partial results of the PEs before */" if acc.exterior else " */"))
        if acc.exterior:
            c.line(f"chunk_reader<{acc.array}_t, {plan.streams[inst.streams[f'{acc.array}_in']].pack}, 1> partial;")
        c.line(f"chunk_writer<{acc.array}_t, {out.pack}, 1> result;")
        with c.loops(self._box_loops("drain", box), pipeline=True):
            value = f"local_{acc.array}{''.join(f'[d{d}]' for d in range(len(box)))}"
            if acc.exterior:
                value = f"({acc.array}_t)(partial.get({acc.array}_in).lane[0] {plan.reduce_op} {value})"
            c.line(f"result.put({acc.array}_out, {value});")
        c.line(f"result.flush({acc.array}_out);")

    def _reload_accumulators(self, inst: Instance, box: tuple[int, ...]) -> None:
        """In a pass that reloads, the block's partial results (from the reload modules) are the
        accumulators' start values: read before the block's first update."""
        plan, c = self.plan, self.code
        acc = plan.acc
        pack = plan.streams[inst.streams[f"{acc.array}_in"]].pack
        with c.block("if (reload)"):
            c.line(f"chunk_reader<{acc.array}_t, {pack}, 1> partial;")
            with c.loops(self._box_loops("reload", box), pipeline=True):
                c.line(f"local_{acc.array}{''.join(f'[d{d}]' for d in range(len(box)))} = "
                       f"partial.get({acc.array}_in).lane[0];")

    def _first_reduction_iteration(self, inner: list[str]) -> str:
        """True at an accumulator's first update in this event: every tile and point loop it does
        not depend on (the loops it reduces over inside the PE) at zero."""
        plan = self.plan
        zero = [f"{l}_tile == 0" for l in inner if plan.loops[l].tiles > 1]
        for loop, kind in plan.point_order:
            b = plan.loops[loop]
            if not plan.acc.reference.depends_on(loop) and (b.time if kind == "time" else b.lh) > 1:
                zero.append(f"{loop}_{kind} == 0")
        return " && ".join(zero) or "true"

    def _compute_ii(self) -> int:
        """The PE compute loop's II as the descriptor states it (engine/compiler/architecture/pe.py:
        an accumulation carried by a time loop needs the adder's latency between two updates of one
        accumulator), the one number the models, the simulator and this pragma share."""
        pe = next(m for m in self.plan.descriptor["topology"]["modules"] if m["kind"] == "pe")
        return self._value(next(p for p in pe["phases"] if p["name"] == "compute")["ii"])

    def _lanes(self, words: dict[str, str], local: str) -> None:
        """The statement on every SIMD lane. When the lanes reduce into one accumulator, their
        terms are summed as a balanced tree and added to it once, so the loop-carried recurrence
        is a single operation; otherwise every lane updates its own accumulator."""
        plan, c = self.plan, self.code
        guard = " && ".join(f"{l} < {b.size}" for l, b in plan.loops.items() if b.padded)
        reducing = (plan.lanes > 1 and plan.reduce_op is not None and plan.simd_loop is not None
                    and not plan.acc.reference.depends_on(plan.simd_loop))
        t = f"{plan.acc.array}_t"
        products = self._paired_products(words)
        if reducing:
            c.line(f"{t} term[{plan.lanes}];")
            c.pragma("HLS array_partition variable=term complete")
        with c.block(counted_for("lane", plan.lanes)):
            c.pragma("HLS unroll")
            accumulates = plan.reduce_op is not None
            expression = products or self._rewrite(plan.reduce_operand if accumulates else plan.update_expression,
                                                    words, f"(first ? start : {local})")
            used = {l for l in plan.loops if re.search(rf"\b{l}\b", expression)} | {
                l for l, b in plan.loops.items() if b.padded}
            for l, b in plan.loops.items():
                if l in used:  # below the padded extent: the width of the loop's last index
                    c.line(f"const {index_type(b.tiles * b.t1 - 1)} {l} = {_tidy(self.global_index(l))};")
            if reducing:
                c.line(f"term[lane] = ({guard}) ? ({t})({expression}) : ({t}){plan.identity};" if guard
                       else f"term[lane] = ({t})({expression});")
            elif accumulates:
                # one form for every accumulation, x = (first ? start : x) op e (a padded iteration
                # adds the identity), which the timed C simulation recognises as the PE's recurrence
                term = f"(({guard}) ? ({t})({expression}) : ({t}){plan.identity})" if guard else f"({expression})"
                c.line(f"{local} = (first ? start : {local}) {plan.reduce_op} {term};")
            else:
                c.line(f"if ({guard}) {local} = {expression};" if guard else f"{local} = {expression};")
        if reducing:
            c.line("/* the lanes' terms as a balanced tree, then one update of the accumulator */")
            half = index_type(plan.lanes // 2)
            with c.block(f"for ({half} width = {plan.lanes // 2}; width > 0; width /= 2)"):
                c.pragma("HLS unroll")
                with c.block(f"for ({half} lane = 0; lane < width; lane++)"):
                    c.pragma("HLS unroll")
                    c.line(f"term[lane] = ({t})(term[lane] {plan.reduce_op} term[lane + width]);")
            target = local.replace("lane", "0")
            c.line(f"{target} = (first ? start : {target}) {plan.reduce_op} term[0];")

    def _multiplier_helpers(self) -> None:
        """The helpers the paired 8-bit products call (descriptor compute.multipliers,
        engine/compiler/architecture/multipliers.py), each one multiply bound to a DSP48E2 or to fabric."""
        pairing = self.plan.descriptor["compute"].get("multipliers")
        if pairing is None:
            return
        c = self.code
        ap = "ap_int" if self.plan.descriptor["compute"]["dtype"] == "int8" else "ap_uint"
        c.line(f"/* An exact product of two 8-bit lanes (docs/export.md, 8-bit multiplies). */")
        c.line(f"typedef {ap}<16> product_t;")
        for impl in ("dsp", "fabric") if pairing["form"] == "split" else ("dsp",):
            with c.block(f"static product_t mul_on_{impl}({ap}<8> a, {ap}<8> b)"):
                c.pragma("HLS inline")
                c.line("const product_t p = a * b;")
                c.pragma(f"HLS BIND_OP variable=p op=mul impl={impl}")
                c.line("return p;")
        if pairing["form"] == "split":
            c.line("")
            return
        c.line("/* s * x0 and s * x1 from one 27 x 18 multiply (Xilinx WP486): the pre-adder packs x1 << 18 plus x0,")
        c.line("   s * x0 is the low 18 bits (|s * x0| < 2^17), s * x1 the rest shifted down by 18. */")
        with c.block(f"static void mul2_shared({ap}<8> s, {ap}<8> x0, {ap}<8> x1, product_t &p0, product_t &p1)"):
            c.pragma("HLS inline")
            c.line(f"const {ap}<27> packed = ({ap}<27>)x1 * 262144 + x0;")
            c.line(f"const {ap}<36> p = packed * s;")
            c.pragma("HLS BIND_OP variable=p op=mul impl=dsp")
            c.line(f"const {ap}<18> low = p;  /* keeps the low 18 bits */")
            c.line("p0 = low;")
            c.line("p1 = (p - low) / 262144;")
        c.line("")

    def _paired_products(self, words: dict[str, str]) -> str | None:
        """Where the descriptor pairs the lanes' 8-bit products (compute.multipliers), writes every
        lane's product into `product[]`, a line per DSP-bound or fabric multiply, and returns what a
        lane adds (`product[lane]`); None otherwise."""
        plan, c = self.plan, self.code
        pairing = plan.descriptor["compute"].get("multipliers")
        if pairing is None:
            return None
        x, y = (words[a] for a in pairing["operands"])
        lanes = plan.lanes

        def at(word: str, lane: int) -> str:
            return word.replace("[lane]", f"[{lane}]")
        c.line(f"/* the 8-bit products, lanes in pairs ({pairing['form']}): "
               + ("two products of the shared operand a DSP48E2 */" if pairing["form"] == "shared"
                  else "one multiply on a DSP48E2, one on fabric */"))
        c.line(f"product_t product[{lanes}];")
        c.pragma("HLS array_partition variable=product complete")
        shared = pairing.get("shared")
        other = y if shared == pairing["operands"][0] else x
        for n in range(0, lanes - 1, 2):
            if shared is not None:
                c.line(f"mul2_shared({at(words[shared], n)}, {at(other, n)}, {at(other, n + 1)}, product[{n}], product[{n + 1}]);")
            else:
                c.line(f"product[{n}] = mul_on_dsp({at(x, n)}, {at(y, n)});")
                c.line(f"product[{n + 1}] = mul_on_fabric({at(x, n + 1)}, {at(y, n + 1)});")
        if lanes % 2:
            c.line(f"product[{lanes - 1}] = mul_on_dsp({at(x, lanes - 1)}, {at(y, lanes - 1)});  /* the odd lane */")
        return "product[lane]"

    def _rewrite(self, expression: str, words: dict[str, str], local: str) -> str:
        """The statement with every array reference replaced by the value the PE holds for it."""
        out = expression
        for text, array, _ in sorted(references(expression), key=lambda r: -len(r[0])):
            if array == self.plan.acc.array:
                out = out.replace(text, local)
            elif array in words:
                out = out.replace(text, words[array])
            else:
                raise ExportError(f"reference {text} has no I/O group")
        return out
