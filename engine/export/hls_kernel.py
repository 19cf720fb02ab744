"""Design descriptor + concrete parameter values -> Vitis HLS C++ sources of the kernel
(`kernel_kernel.cpp`, `kernel_kernel.h`), written by `VitisHLSTarget` from the `KernelPlan`.

One function per module kind (AutoSA's naming: `A_L3_in`, `A_L2_in`, `PE`, `C_L1_out`, ...), a
`_boundary` variant for the last instance of a daisy chain (it forwards nothing), and per PE line a
sink (`A_PE_sink`, AutoSA's dummy module) for data the last PE would forward, or a head
(`C_PE_head`) that starts a reduction carried from PE to PE. `kernel0` declares every FIFO with its
depth (engine/compiler/fifo_depths.py) and calls every instance with its grid index, in data-flow
order so that a sequential C simulation never reads an empty stream.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace

from engine.export.cpp import Code, index_type, pack_type as _pack_type, product, total
from engine.export.interface import ExportError, c_type
from engine.export.plan import (
    Group,
    Instance,
    KernelPlan,
    build_plan,
)
from engine.export.dram_layout import DramLayout, port_layout
from engine.export.drain_modules import DrainModules
from engine.export.io_modules import IOModules, _tidy
from engine.models.dram import DEFAULT_LAYOUT, AxiSettings
from engine.export.owned_drain import OwnedDrain
from engine.export.pe_accumulate import AccumulatorPE
from engine.export.pe_statements import StatementsPE
from engine.export.target import Target


def kernel_export(descriptor: dict, values: dict[str, int], *, report: dict | None = None,
                  layout: str = DEFAULT_LAYOUT, axi: AxiSettings = AxiSettings(),
                  crossings: dict | None = None) -> tuple[dict[str, str], dict]:
    """({"kernel_kernel.cpp": ..., "kernel_kernel.h": ...}, each port's DRAM layout and words:
    `DramLayout.dram_summary`). `report` (engine.models.report's evaluate_configuration) adds the
    predicted latency and resources to the header comment; `layout` and `axi` are the DRAM layout and
    the m_axi settings (engine/export/dram_layout.py); `crossings` the SLR-crossing FIFOs of a
    floorplan (engine/floorplan/pipeline.py), written deeper and marked."""
    target = VitisHLSTarget(layout=layout, axi=axi)
    return (target.sources(build_plan(descriptor, values, crossings=crossings), report=report),
            target.dram_summary())


def crossing_streams(descriptor: dict, values: dict[str, int], crossings: dict) -> dict:
    """kernel0's stream name -> CrossingPipeline, for the FIFOs `crossings` puts across SLRs."""
    plan = build_plan(descriptor, values, crossings=crossings)
    return {name: s.crossing for name, s in plan.streams.items() if s.crossing is not None}


def kernel_processes(descriptor: dict, values: dict[str, int], *,
                     layout: str = DEFAULT_LAYOUT) -> list[tuple[tuple, str, tuple[int, ...]]]:
    """Every process call of kernel0 as (the floorplan node it belongs to, the function it calls, its
    grid index): a PE-line sink or head belongs to its PE, a storer's serialize stage (in the DRAM
    `layout`, engine/export/dram_layout.py) to its storer."""
    plan = build_plan(descriptor, values)
    target = VitisHLSTarget(layout=layout)
    target.plan = plan
    pe = next(name for name, m in plan.modules.items() if m["kind"] == "pe")
    calls = [((pe if inst.role in ("sink", "head") else inst.module, inst.index), target._function_name(inst),
              inst.index) for inst in plan.instances]
    for port in target._serialized_outputs():
        storer = next(inst for inst in plan.instances if inst.module == target._storer_module(port))
        calls.append(((storer.module, storer.index), f"{storer.module}_serialize", ()))
    return calls


def kernel_sources(descriptor: dict, values: dict[str, int], **options) -> dict[str, str]:
    """The sources of `kernel_export` alone."""
    return kernel_export(descriptor, values, **options)[0]


class VitisHLSTarget(AccumulatorPE, StatementsPE, OwnedDrain, DrainModules, IOModules, DramLayout, Target):
    """Vitis HLS C++: `hls::stream` FIFOs, m_axi ports, `#pragma HLS dataflow` in `kernel0`."""

    def __init__(self, *, layout: str = DEFAULT_LAYOUT, axi: AxiSettings = AxiSettings()):
        port_layout(layout, "in")  # an unknown layout is refused before any code is written
        self.layout, self.axi = layout, axi

    def sources(self, plan: KernelPlan, *, report: dict | None = None) -> dict[str, str]:
        self.plan = plan
        self.code = Code()
        self._reset_nests()
        self._preamble(report)
        emitted: set[str] = set()
        for inst in plan.instances:
            name = self._function_name(inst)
            if name not in emitted:
                emitted.add(name)
                if plan.statements and inst.role == "drain":
                    # a PE running several statements drains several outputs: each drain chain is
                    # written as the drain of its own output
                    self.plan = replace(plan, acc=plan.group(inst.group))
                self._function(inst, name)
                self.plan = plan
        self._serialize_stages()
        self._top()
        return {"kernel_kernel.h": self._header(report), "kernel_kernel.cpp": self.code.text()}

    # ----------------------------------------------------------------- header and helpers
    def _summary(self, report: dict | None) -> list[str]:
        plan, d = self.plan, self.plan.descriptor
        shape = " x ".join(str(n) for n in plan.pe_grid) or "1"
        lines = [f"Systolic array for kernel '{d['kernel']['name']}', design {d['design']['id']} ({d['design']['name']})",
                 f"  dataflow: space loops [{', '.join(plan.space)}] (data moves between PEs along them), "
                 f"time loops [{', '.join(d['design']['time_loops'])}]",
                 f"  PE array: {self._pe_array(shape)}, {plan.lanes} SIMD lane(s) on loop {plan.simd_loop}",
                 "  problem: " + ", ".join(f"{l}={b.size}" for l, b in plan.loops.items()),
                 "  parameters: " + ", ".join(f"{k}={v}" for k, v in sorted(plan.values.items()))]
        lines += self._data_paths()
        padded = [f"{l} to {b.tiles * b.t1}" for l, b in plan.loops.items() if b.padded]
        if padded:
            lines.append("  padded (whole tiles; padded iterations are skipped): " + ", ".join(padded))
        if report:
            lines.append(f"  predicted latency: {report['latency_cycles']:.0f} cycles "
                         f"(bottleneck {report.get('bottleneck', '?')})")
            lines.append(f"  predicted resources: DSP {report['dsp']:.0f}, BRAM18K {report['bram18k']:.0f}, "
                         f"URAM {report['uram']:.0f}, LUT {report['lut']:.0f}, FF {report['ff']:.0f}")
        if plan.pass_loops:
            count = math.prod(plan.loops[l].tiles for l in plan.pass_loops)
            lines.append(f"  passes: tile loops [{', '.join(plan.pass_loops)}] run as {count} sequential calls of the "
                         f"dataflow region (kernel0_pass); partial results of {plan.acc.array} are read back "
                         "in the passes after a block's first")
        elif plan.reloads:
            lines.append(f"  partial results of {plan.acc.array}: every event reads its block back (no initialisation)")
        if plan.skipped_modules and not plan.reloads and plan.acc.reloads:
            lines.append(f"  no partial result is read back at these values: modules {', '.join(plan.skipped_modules)} "
                         "are not instantiated")
        return lines

    def _pe_array(self, shape: str) -> str:
        """The PEs kernel0 calls: the grid, or the PEs of it the array holds (descriptor topology.pe_set)."""
        missing = len(self.plan.missing_pes)
        if not missing:
            return f"{shape} PEs"
        held = math.prod(self.plan.pe_grid) - missing
        sinks = {i.index for i in self.plan.instances if i.role == "sink" and i.index in self.plan.missing_pes}
        return (f"{held} PEs of a {shape} grid (where the iteration domain has points: "
                f"{self.plan.descriptor['topology']['pe_set']})" +
                (f"; a sink takes what the I/O modules send each of {len(sinks)} others" if sinks else ""))

    def _data_paths(self) -> list[str]:
        """One line per array: the I/O modules it crosses, instances, words and double buffering."""
        plan = self.plan
        lines = ["  data paths (elements per word; 2x = double buffered, load or collect beside feed or send):"]
        for g in plan.groups:
            ins = [m for m in plan.modules.values() if m.get("array") == g.array and m["kind"] == "io"]
            outs = [m for m in plan.modules.values() if m.get("array") == g.array and m["kind"] == "drain"]
            def describe(m):
                # the instances built (fewer than the grid where a network reaches some PEs only)
                count = (sum(1 for i in plan.instances if i.module == m["name"])
                         or (math.prod(self._value(x) for x in m["grid"]) if m["grid"] else 1))
                words = {s.pack for i in plan.instances if i.module == m["name"] for s in
                         (plan.streams[n] for k, n in i.streams.items() if k in ("in", "next", "out", "successor"))}
                width = "/".join(str(w) for w in sorted(words)) or str(plan.interface.port(g.array).word_elements)
                return (f"{m['name']}{' x' + str(count) if count > 1 else ''} ({width}"
                        f"{', DRAM' if m['dram'] else ''}{', 2x' if m['overlapped'] and m['buffers'] else ''})")
            along = f", PE to PE along {g.exterior}" if g.exterior else ""
            if ins:
                path = " -> ".join(describe(m) for m in sorted(ins, key=lambda m: -m["level"]))
                lines.append(f"    {g.array} in: {path} -> PEs{along}")
            if outs:
                path = " -> ".join(describe(m) for m in sorted(outs, key=lambda m: m["level"]))
                lines.append(f"    {g.array} out: PEs{along} -> {path}")
        return lines

    def _header(self, report: dict | None) -> str:
        plan = self.plan
        c = Code()
        c.line("/*")
        for line in self._summary(report):
            c.line(" * " + line if line else " *")
        c.line(" */")
        c.line("#ifndef KERNEL_KERNEL_H")
        c.line("#define KERNEL_KERNEL_H")
        c.line("")
        c.line("#include <stdint.h>")
        c.line("")
        c.line("/* N elements moved together: one FIFO word or one m_axi bus word. */")
        c.line("template <typename T, int N>")
        with c.block("struct packed", "};"):
            c.line("T lane[N];")
        c.line("")
        for g in plan.groups:
            c.line(f"typedef {g.ctype} {g.array}_t;")
        for a in plan.descriptor.get("local_arrays", []):
            c.line(f"typedef {c_type(a['dtype'])} {a['name']}_t;  /* declared in the scop: on chip only */")
        for port in plan.interface.ports:
            c.line(f"typedef packed<{port.array}_t, {port.word_elements}> {port.word_type};"
                   f"  /* {port.array}: {' x '.join(map(str, port.padded_shape))} padded, row-major */")
            if self._store_words(port) > 1:
                c.line(f"typedef packed<{port.array}_t, {self._store_words(port) * port.word_elements}> "
                       f"{self.dram_word_type(port)};  /* {port.array} on DRAM: full bus words (serialized) */")
        c.line("")
        c.line(f'extern "C" void kernel0({self._ports()});')
        c.line("")
        self._layout_header(c)
        c.line("")
        c.line("#endif")
        return c.text()

    def _preamble(self, report: dict | None) -> None:
        c = self.code
        c.line("/*")
        for line in self._summary(report):
            c.line(" * " + line if line else " *")
        c.line(" */")
        c.line('#include <ap_int.h>')
        c.line('#include <hls_stream.h>')
        c.line('#include "kernel_kernel.h"')
        c.line("")
        c.line("/* Loop counters and indices are ap_uint<b>, b the bits of the largest value they take (a counter's")
        c.line("   exit value included); index_bits gives b where the bound is a template parameter. */")
        c.line("constexpr int index_bits(unsigned long n) { return n < 2 ? 1 : 1 + index_bits(n / 2); }")
        c.line("")
        for array, pack in sorted({(s.array, s.pack) for s in self.plan.streams.values()}):
            c.line(f"typedef packed<{array}_t, {pack}> {_pack_type(array, pack)};")
        c.line("")
        c.line("/* Chunks of G elements (single elements when G = 1) into words of N, G dividing N: a block travels as")
        c.line("   whole words, the last one zero-filled; one write per word. */")
        c.line("template <typename T, int N, int G>")
        with c.block("struct chunk_writer", "};"):
            c.line("packed<T, N> word;")
            c.line("ap_uint<index_bits(N)> fill;")
            with c.block("chunk_writer() : fill(0)"):
                c.line("for (ap_uint<index_bits(N)> k = 0; k < N; k++) word.lane[k] = 0;")
            with c.block("void put(hls::stream<packed<T, N> > &out, const packed<T, G> &chunk)"):
                with c.block("for (ap_uint<index_bits(G)> k = 0; k < G; k++)"):
                    c.pragma("HLS unroll")
                    c.line("word.lane[fill + k] = chunk.lane[k];")
                c.line("fill += G;")
                with c.block("if (fill == N)"):
                    c.line("out.write(word);")
                    c.line("fill = 0;")
            with c.block("void put(hls::stream<packed<T, N> > &out, T value)"):
                c.line("packed<T, G> chunk;")
                c.line("chunk.lane[0] = value;")
                c.line("put(out, chunk);")
            with c.block("void flush(hls::stream<packed<T, N> > &out)"):
                with c.block("if (fill > 0)"):
                    c.line("for (ap_uint<index_bits(N)> k = fill; k < N; k++) word.lane[k] = 0;")
                    c.line("out.write(word);")
                    c.line("fill = 0;")
        c.line("")
        c.line("/* Words of N elements out as chunks of G (G divides N): one read per whole word. */")
        c.line("template <typename T, int N, int G>")
        with c.block("struct chunk_reader", "};"):
            c.line("packed<T, N> word;")
            c.line("ap_uint<index_bits(N)> next;")
            c.line("chunk_reader() : next(N) {}")
            with c.block("packed<T, G> get(hls::stream<packed<T, N> > &in)"):
                with c.block("if (next == N)"):
                    c.line("word = in.read();")
                    c.line("next = 0;")
                c.line("packed<T, G> chunk;")
                with c.block("for (ap_uint<index_bits(G)> k = 0; k < G; k++)"):
                    c.pragma("HLS unroll")
                    c.line("chunk.lane[k] = word.lane[next + k];")
                c.line("next += G;")
                c.line("return chunk;")
        c.line("")
        self._multiplier_helpers()

    # ----------------------------------------------------------------- index expressions
    def local(self, loop: str) -> str:
        """A loop's point index relative to the PE's first point, from the PE loop variables."""
        b = self.plan.loops[loop]
        terms = []
        if b.time > 1:
            terms.append(product([f"{loop}_time", str(b.lh * b.lanes)]))
        if b.lh > 1:
            terms.append(product([f"{loop}_lh", str(b.lanes)]))
        if b.lanes > 1:
            terms.append("lane")
        return total(terms)

    def pe_offset(self, loop: str) -> str:
        b = self.plan.loops[loop]
        return product([f"{loop}_pe", str(b.extent_per_pe)]) if b.space and b.pes > 1 else "0"

    def global_index(self, loop: str) -> str:
        b = self.plan.loops[loop]
        return total([product([f"{loop}_tile", str(b.t1)]) if b.tiles > 1 else "0",
                      self.pe_offset(loop), self.local(loop)])

    def box_coords(self, group: Group, dims: list[str]) -> list[str]:
        """Coordinates inside the box an instance over `dims` holds, at the current PE point."""
        out = []
        for d in range(len(group.reference.subscripts)):
            terms = []
            for loop, c in group.reference.coefficients(d).items():
                b = self.plan.loops[loop]
                if b.space and loop not in dims and b.pes > 1:
                    raise ExportError(f"{group.name} varies along {loop} but is fed along it")
                terms.append(product([str(c), f"({self.local(loop)})"]) if self.local(loop) != "0" else "0")
            out.append(_tidy(total(terms)))
        return out

    def origin(self, group: Group, d: int) -> str:
        """First element of the tile's block along dimension d, from the tile indices."""
        coeffs, constant = group.reference.subscripts[d]
        terms = [product([str(c), f"{l}_tile", str(self.plan.loops[l].t1)]) for l, c in coeffs
                 if self.plan.loops[l].tiles > 1]
        return total(terms + ([str(constant)] if constant else []))

    def offset_in(self, group: Group, d: int, dims: list[str], within: list[str]) -> str:
        """Where the box over `dims` starts inside the box over `within` (a prefix of dims)."""
        terms = []
        for loop, c in group.reference.coefficients(d).items():
            if loop in dims and loop not in within:
                terms.append(product([str(c), self.pe_offset(loop)]) if self.pe_offset(loop) != "0" else "0")
        return total(terms)

    # ----------------------------------------------------------------- functions
    def _function_name(self, inst: Instance) -> str:
        """Chain members that forward nothing (the last of their chain) get a `_boundary` variant."""
        if inst.role not in ("io", "drain") or not inst.boundary:
            return inst.module
        # the head of a chain talks to the level above (its own word width), the last one forwards nothing
        key = "next" if inst.role == "io" else "successor"
        if inst.alone:
            return inst.module + "_alone"
        return inst.module + ("_boundary" if key not in inst.streams else "_head" if inst.first else "")

    def _stream_arg(self, key: str, stream_name: str, c_name: str) -> str:
        s = self.plan.streams[stream_name]
        return f"hls::stream<{_pack_type(s.array, s.pack)}> &{c_name}"

    def _signature(self, inst: Instance) -> list[tuple[str, str]]:
        """(C parameter, argument in kernel0) in order."""
        plan = self.plan
        params: list[tuple[str, str]] = []
        # every call carries its grid index (a sink or head its PE's), as AutoSA's do: Vitis HLS names a
        # process called with constant arguments after them (`PE_0_1_U0`), which the floorplan's
        # constraints rely on (engine/export/constraints.py)
        module = (next(n for n, m in plan.modules.items() if m["kind"] == "pe") if inst.role in ("sink", "head")
                  else inst.module)
        dims = plan.module_dims[module]
        params += [(self._pe_param(loop), str(v)) for loop, v in zip(dims, inst.index)]
        params += self._pass_params()
        s = inst.streams
        if inst.role == "pe":
            arrays = [g.array for g in plan.groups] + [a["name"] for a in plan.descriptor.get("local_arrays", [])]
            for array in arrays:
                for key in (f"{array}_in", f"{array}_out"):
                    if key in s:
                        params.append((self._stream_arg(key, s[key], key), s[key]))
            return params
        if inst.role in ("sink", "head"):
            key = "in" if inst.role == "sink" else "out"
            return params + [(self._stream_arg(key, s[key], key), s[key])]
        group = plan.group(inst.group)
        module = plan.modules[inst.module]
        port = plan.interface.port(group.array)
        if inst.role == "io":
            if module["dram"]:
                params.append((f"const {port.word_type} *{port.name}", port.name))
            else:
                params.append((self._stream_arg("in", s["in"], "in"), s["in"]))
            if "next" in s:
                params.append((self._stream_arg("next", s["next"], "to_next"), s["next"]))
            params.append((self._stream_arg("child", s["child"], "to_child"), s["child"]))
        else:
            params.append((self._stream_arg("own", s["own"], "own"), s["own"]))
            if "successor" in s:
                params.append((self._stream_arg("successor", s["successor"], "from_successor"), s["successor"]))
            if module["dram"] and self._store_words(port) > 1:  # to its serialize stage (dram_layout.py)
                params.append((f"hls::stream<{port.word_type}> &to_bus", self._bus_stream(port)))
            elif module["dram"]:
                params.append((f"{port.word_type} *{port.name}", port.name))
            else:
                params.append((self._stream_arg("out", s["out"], "out"), s["out"]))
        return params

    def _pass_params(self) -> list[tuple[str, str]]:
        """The pass's tile indices and whether it reloads partial results: arguments of every process
        (engine/compiler/architecture/passes.py); none when the kernel runs in one pass."""
        plan = self.plan
        params = [(self._tile_param(l), f"{l}_tile") for l in plan.pass_loops]
        if plan.reloads:
            params.append(("int reload", "reload"))
        return params

    def _pe_param(self, loop: str) -> str:
        """A PE grid index argument: the type of the counter over the PEs along `loop`."""
        return f"{index_type(self.plan.loops[loop].pes)} {loop}_pe"

    def _tile_param(self, loop: str) -> str:
        """A tile index argument: the type of the counter over the tiles of `loop`."""
        return f"{index_type(self.plan.loops[loop].tiles)} {loop}_tile"

    def _function(self, inst: Instance, name: str) -> None:
        if self._prefetches(inst):
            self._prefetch_helpers(inst, name)
        elif inst.role == "pe" and self._pe_overlaps():
            self._pe_helpers(inst, name)
        elif self._collects(inst):
            self._drain_helpers(inst, name)
        body = {"pe": self._pe, "io": self._io, "drain": self._drain, "sink": self._sink, "head": self._head}[inst.role]
        self._emit(name, [p for p, _ in self._signature(inst)], self._purpose(inst), lambda: body(inst))

    def _emit(self, name: str, params: list[str], purpose: str, body) -> None:
        c = self.code
        c.line(f"/* {purpose} */")
        head = len(c.lines)
        with c.block(f"static void {name}({', '.join(params)})"):
            c.pragma("HLS inline off")  # a process (or a helper overlapped with another) of its own
            body()
        text = "\n".join(c.lines[head + 1:])
        for param in params:
            scalar = re.fullmatch(r"(int|ap_uint<\d+>) (\w+)", param)
            if scalar and not re.search(rf"\b{scalar.group(2)}\b", text):
                # every instance gets its index for the reader; unused ones stay nameless for g++
                c.lines[head] = c.lines[head].replace(param, f"{scalar.group(1)} /* {scalar.group(2)} */")
        c.line("")

    def _purpose(self, inst: Instance) -> str:
        plan = self.plan
        if inst.role == "pe" and plan.statements:
            names = ", ".join(st["name"] for st in plan.descriptor["compute"]["update"])
            return (f"Processing element: statements {names} under their guards at each point, the scop's "
                    "local arrays kept in the PE or passed to the next PE.")
        if inst.role == "pe":
            return (f"Processing element: {plan.lanes} SIMD lane(s) of {plan.update_target} = "
                    f"{plan.update_expression}, accumulated in local registers.")
        if inst.role == "sink":
            outside = (", or a PE outside the iteration domain (not instantiated) would read"
                       if plan.missing_pes else "")
            return f"Consumes the {inst.group} words the last PE of a line would pass on{outside}."
        if inst.role == "head":
            return f"Starts the {inst.group} reduction carried from PE to PE with the identity."
        module = plan.modules[inst.module]
        phases = "; ".join(p["body"] for p in module["phases"])
        return f"{inst.module} (level {module['level']}{', DRAM' if module['dram'] else ''}): {phases}."

    # ----------------------------------------------------------------- modules
    def _tile_loops(self, loops: list[str]) -> list[tuple[str, str, int]]:
        """The tile loops a process runs in one pass (the pass loops' indices are its arguments)."""
        return [(f"{l}_tiles", f"{l}_tile", self.plan.loops[l].tiles) for l in self.plan.in_pass(loops)]

    def _point_loops(self, prefix: str) -> list[tuple[str, str, int]]:
        out = []
        for loop, kind in self.plan.point_order:
            b = self.plan.loops[loop]
            out.append((f"{prefix}_{loop}_{kind}", f"{loop}_{kind}", b.time if kind == "time" else b.lh))
        return out

    def _box_loops(self, prefix: str, box: tuple[int, ...]) -> list[tuple[str, str, int]]:
        return [(f"{prefix}_d{d}", f"d{d}", n) for d, n in enumerate(box)]

    # ----------------------------------------------------------------- top
    def _top(self) -> None:
        """kernel0: one dataflow region; with passes, a loop over them calling the region (a function
        of its own, `inline off`), so that every DRAM write of a pass completes before the next
        pass reads it."""
        plan, c = self.plan, self.code
        passes = self._pass_params()
        region = "kernel0_pass" if plan.pass_loops else "kernel0"
        if plan.pass_loops:
            c.line("/* One pass: every output block visited once, its partial result read before it is written. */")
            c.line(f"static void {region}({self._ports()}, {', '.join(p for p, _ in passes)}) {{")
            c.depth += 1
            c.pragma("HLS inline off")
        else:
            c.line(f'extern "C" void kernel0({self._ports()}) {{')
            c.depth += 1
            self._interface_pragmas()
        if plan.reloads and not plan.pass_loops:  # no initialisation: every event reads its block back
            c.line("const int reload = 1;")
        c.line("")
        c.pragma("HLS dataflow")
        c.line("")
        for s in plan.streams.values():
            c.line(f'hls::stream<{_pack_type(s.array, s.pack)}> {s.name}("{s.name}");')
            if s.crossing is not None:
                p = s.crossing
                c.line(f"/* SLR crossing SLR{p.source_slr} -> SLR{p.target_slr}: {p.latency} pipeline stage(s), depth "
                       f"+{p.extra_depth} (engine/floorplan/pipeline.py; placed by floorplan.tcl) */")
            c.pragma(f"HLS stream variable={s.name} depth={s.depth}")
            if s.storage:
                c.pragma(f"HLS bind_storage variable={s.name} type=fifo impl={s.storage}")
        self._serialize_streams()
        c.line("")
        for inst in plan.instances:
            args = ", ".join(a for _, a in self._signature(inst))
            c.line(f"{self._function_name(inst)}({args});")
        self._serialize_calls()
        c.depth -= 1
        c.line("}")
        if not plan.pass_loops:
            return
        c.line("")
        c.line(f'extern "C" void kernel0({self._ports()}) {{')
        c.depth += 1
        self._interface_pragmas()
        c.line("")
        c.line("/* sequential passes over the tile loops that revisit an output block "
               "(engine/compiler/architecture/passes.py) */")
        with c.loops([(f"pass_{l}", f"{l}_tile", plan.loops[l].tiles) for l in plan.pass_loops]):
            reductions = [l for l in plan.pass_loops if not plan.acc.reference.depends_on(l)]
            reload = "1" if plan.reload_always else " || ".join(f"{l}_tile > 0" for l in reductions)
            c.line(f"const int reload = {reload};  /* partial results of an earlier pass are read back */")
            ports = ", ".join(p.name for p in plan.interface.ports)
            c.line(f"{region}({ports}, {', '.join(a for _, a in passes)});")
        c.depth -= 1
        c.line("}")
