"""Exported kernel source (src/kernel_kernel.cpp) -> an instrumented copy for the timed C simulation,
plus the tables that say what the recorder's ids mean: dataflow processes, streams and their depths,
pipelined loop nests with their II, parallel helper groups and recurrence sites.

It relies on the conventions of the emitter (engine/export/hls_kernel.py), checked here and named in
the error when they do not hold:
- `kernel0` has `#pragma HLS dataflow`, or calls (once per pass, in a loop) the one function that
  has it; after the pragma every dataflow process is one call statement on a
  line of its own, `Name(args);`; every FIFO is `hls::stream<T> name("name");` with a
  `#pragma HLS stream variable=name depth=D`;
- `#pragma HLS pipeline II=N` is the first line of the body of a `for` loop; that loop and the
  `for` loops around it that contain nothing else (labelled or not) form a perfect nest, which HLS
  flattens: its pipeline fills once per entry;
- a PE's datapath loop is labelled `compute_...` (or holds an accumulation): it fills the PE's
  pipeline depth, the PE's other loops (result transfers) a transfer's;
- a statement of the scop is `[if (guard)] target[..] = expression;  /* Sk */` on one line, its
  variables named store_X / local_X / X_data / X_from_L after the scop array X; a word written to
  a stream is assembled as `word.lane[k] = ...;` in the block of its `.write(word);`;
- a helper marked `#pragma HLS inline off` called on consecutive lines of one block with other such
  calls that share no stream runs in parallel with them (double buffering).

The copy runs each dataflow process of a region call as a coroutine (SYSTOLIC_TRACE_SPAWN, all of
them run by SYSTOLIC_TRACE_RUN before the region returns: bounded streams, systolic_trace.h), and
passes kernel0's m_axi pointers to the functions that use them as traced `dram_ptr`s (every bus word
read or written on DRAM is reported, `_dram_pointers`).

The copy (only in the build folder; the export stays as Vitis reads it) carries `#line` directives,
so g++ reports errors at the lines of the user's file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.csim.cpp_source import (
    balanced,
    function_at,
    Function,
    parse_functions,
    indent,
    Source,
    split_args,
    TraceError,
)

FLOAT_TYPES = {"float": "float", "double": "double"}


@dataclass(frozen=True)
class Process:
    index: int
    function: str
    label: str  # e.g. PE(0,1): the function and its leading integer arguments
    line: int
    dram_read: bool  # takes a read-only m_axi port of kernel0
    dram_write: bool  # takes a writable m_axi port


@dataclass(frozen=True)
class Loop:
    id: int
    function: str
    line: int  # of the pipeline pragma
    ii: int
    labels: tuple[str, ...]  # the nest's labels, outermost first (empty strings where unlabelled)
    computes: bool  # the PE's datapath: labelled compute_..., or holds an accumulation `x = x op ...`


@dataclass(frozen=True)
class Site:
    """An accumulation into an element of a floating-point array inside a pipelined loop."""
    id: int
    loop: int
    line: int
    array: str
    dtype: str  # float or double
    operator: str  # add or mul


@dataclass(frozen=True)
class Group:
    id: int
    function: str
    line: int
    members: tuple[str, ...]  # helper functions called in parallel


@dataclass
class Instrumented:
    source: str
    processes: list[Process]
    loops: dict[int, Loop]
    streams: dict[str, int]  # stream name -> depth
    sites: dict[int, Site]
    groups: dict[int, Group]
    functions: list[str] = field(default_factory=list)
    ports: list[str] = field(default_factory=list)  # kernel0's m_axi pointer arguments, in order (port ids)
    dram_params: dict[str, list[str]] = field(default_factory=dict)  # function -> its traced pointer parameters


_CALL = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*;\s*$")
_LABEL = re.compile(r"^\s*\w+\s*:\s*$")
_FOR = re.compile(r"^\s*for\s*\(")
_PIPELINE = re.compile(r"^\s*#\s*pragma\s+HLS\s+pipeline\b(.*)$", re.IGNORECASE)
_STREAM_DECL = re.compile(r"^\s*hls::stream\s*<.*>\s+(\w+)\s*(?:\(\s*\"([^\"]*)\"\s*\))?\s*;")
_STREAM_PRAGMA = re.compile(r"^\s*#\s*pragma\s+HLS\s+stream\b(.*)$", re.IGNORECASE)
# an accumulation `x[..] = (x[..] op ...` or `x[..] op= ...`, possibly guarded by `if (...)` (padding)
_GUARD = r"^(\s*(?:if\s*\(.*\)\s*)?)"
# x[..] = (x[..] op ..., or the exporter's x[..] = (first ? start : x[..]) op ... (a first update starts it)
_ACCUMULATE = re.compile(_GUARD + r"(\w+)((?:\[[^\]]*\])+)\s*=\s*\(*\s*(?:\w+\s*\?\s*\w+\s*:\s*)?\2\s*"
                         r"((?:\[[^\]]*\])+)\s*\)?\s*([-+*])")
_COMPOUND = re.compile(_GUARD + r"(\w+)((?:\[[^\]]*\])+)\s*([-+*])=")
_DATAFLOW = re.compile(r"^\s*#\s*pragma\s+HLS\s+dataflow\b", re.IGNORECASE)
_TYPEDEF = re.compile(r"\btypedef\s+([\w\s]+?)\s+(\w+)\s*;")
DEFAULT_DEPTH = 2  # Vitis HLS's default FIFO depth


def _stream_params(f: Function) -> list[bool]:
    return ["hls::stream" in p for p in f.params]


def _resolve_type(name: str, typedefs: dict[str, str]) -> str:
    seen = set()
    while name in typedefs and name not in seen:
        seen.add(name)
        name = typedefs[name]
    return name


def instrument(text: str, *, path: str, header: str = "", top: str = "kernel0",
               statements: list[dict] | None = None) -> Instrumented:
    """The instrumented copy of a kernel source (`path` is what `#line` and errors name).
    `statements`: the descriptor's `compute.statements` (their operator latencies from each array
    they read, `from`), to time straight-line PE statements (`_straight_line`)."""
    src = Source(text, path)
    functions = parse_functions(src)
    if top not in functions:
        raise TraceError(f"{path}: no definition of {top}")
    kernel = _region(src, functions, top)
    typedefs = {m.group(2): " ".join(m.group(1).split()) for m in _TYPEDEF.finditer(header + "\n" + text)}
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    replace: dict[int, str] = {}

    # -- kernel0 (or the region it calls once per pass): streams and dataflow processes -----------------
    body = range(kernel.open + 1, kernel.close)
    dataflow = next((k for k in body if _DATAFLOW.match(src.lines[k])), None)
    if kernel.name != top:
        for k in range(functions[top].open + 1, functions[top].close):
            m = _CALL.match(src.code[k])
            if m and m.group(1) == kernel.name:
                before.setdefault(k, []).append("SYSTOLIC_TRACE_PASS();")
    ports = {}
    for param in kernel.params:
        m = re.match(r"^(const\s+)?[\w:<>]+\s*\*\s*(\w+)$", param.strip())
        if m:
            ports[m.group(2)] = m.group(1) is None  # writable
    declared: dict[str, str] = {}  # variable -> stream name
    depths: dict[str, int] = {}  # variable -> depth
    processes: list[Process] = []
    labels: dict[str, int] = {}
    for k in body:
        line = src.lines[k]
        m = _STREAM_DECL.match(line)
        if m:
            declared[m.group(1)] = m.group(2) or "unnamed"
            continue
        m = _STREAM_PRAGMA.match(line)
        if m:
            var = re.search(r"\bvariable\s*=\s*(\w+)", m.group(1))
            depth = re.search(r"\bdepth\s*=\s*(\d+)", m.group(1))
            if var and depth:
                depths[var.group(1)] = int(depth.group(1))
            continue
        m = _CALL.match(src.code[k])
        if m and k > dataflow and src.depth[k] == src.depth[kernel.open] + 1 and m.group(1) in functions:
            args = split_args(m.group(2))
            ints = []
            for a in args:
                if not re.fullmatch(r"-?\d+", a):
                    break
                ints.append(a)
            label = f"{m.group(1)}({','.join(ints)})" if ints else m.group(1)
            labels[label] = labels.get(label, 0) + 1
            if labels[label] > 1:
                label = f"{label}#{labels[label]}"
            processes.append(Process(len(processes), m.group(1), label, k + 1,
                                     any(a in ports and not ports[a] for a in args) or
                                     any(a in ports and ports[a] and _reads_port(src, functions[m.group(1)], args, a)
                                         for a in args),
                                     any(a in ports and ports[a] for a in args)))
            # each process runs as a coroutine of the region call (systolic_trace.h `spawn`), all of them
            # by SYSTOLIC_TRACE_RUN before the region returns: streams hold a bounded number of words
            replace[k] = f"{indent(src.lines[k])}SYSTOLIC_TRACE_SPAWN({len(processes) - 1}, {src.code[k].strip()});"
    if not processes:
        raise TraceError(f"{src.where(dataflow)}: no dataflow process call (`Name(args);` on a line of its own) "
                         f"after '#pragma HLS dataflow'")
    before.setdefault(kernel.close, []).append("SYSTOLIC_TRACE_RUN();")
    streams = {}
    for var, name in declared.items():
        streams[name] = depths.get(var, DEFAULT_DEPTH)

    # -- pipelined loop nests --------------------------------------------------------------------------
    loops: dict[int, Loop] = {}
    bodies: list[tuple[int, int, int]] = []  # (first line, last line, loop id) of each innermost body
    for k, line in enumerate(src.lines):
        m = _PIPELINE.match(line)
        if not m or re.search(r"\boff\b", m.group(1), re.IGNORECASE):
            continue
        ii = re.search(r"\bII\s*=\s*(\d+)", m.group(1), re.IGNORECASE)
        inner = src.prev_code(k)
        while inner >= 0 and src.lines[inner].lstrip().startswith("#"):  # other pragmas of the loop first
            inner = src.prev_code(inner)
        if inner < 0 or not _FOR.match(src.code[inner]) or not src.code[inner].rstrip().endswith("{"):
            raise TraceError(f"{src.where(k)}: '#pragma HLS pipeline' is not the first line of a for loop's body")
        function = function_at(functions, k)
        if function is None:
            raise TraceError(f"{src.where(k)}: '#pragma HLS pipeline' outside a function")
        start, end, nest_labels = inner, src.close[inner], []
        while True:
            label_line = src.prev_code(start)
            label = ""
            if label_line >= 0 and _LABEL.match(src.code[label_line]):
                label = src.code_line(label_line).rstrip(":").strip()
            nest_labels.insert(0, label)
            outer = src.prev_code(label_line if label else start)
            while outer > function.open and src.lines[outer].lstrip().startswith("#"):
                outer = src.prev_code(outer)  # the outer loop's own pragmas (loop_tripcount) keep it perfect
            if (outer > function.open and _FOR.match(src.code[outer]) and src.code[outer].rstrip().endswith("{")
                    and src.close.get(outer) == src.next_code(end)):
                start, end = outer, src.close[outer]
                continue
            if label:
                start = label_line
            break
        if src.code_line(end) != "}":
            raise TraceError(f"{src.where(end)}: a pipelined loop nest must end with '}}' on a line of its own")
        loop_id = len(loops)
        last_pragma = k
        following = src.next_code(last_pragma)
        while following < len(src.lines) and src.lines[following].lstrip().startswith("#"):
            last_pragma, following = following, src.next_code(following)
        before.setdefault(start, []).insert(0, f"{{ SYSTOLIC_TRACE_ENTER({loop_id});")
        after.setdefault(end, []).append(f"SYSTOLIC_TRACE_EXIT({loop_id}); }}")
        after.setdefault(last_pragma, []).append(f"SYSTOLIC_TRACE_ITER({loop_id});")
        inner_close = src.close[inner]
        # the PE's datapath: an accumulation, or the emitter's compute loop (statements that
        # accumulate nothing, LU's, still fill the PE's pipeline)
        computes = (any(label.startswith("compute_") for label in nest_labels)
                    or any(_ACCUMULATE.match(src.code[j]) or _COMPOUND.match(src.code[j]) for j in range(k, inner_close)))
        loops[loop_id] = Loop(loop_id, function.name, k + 1, int(ii.group(1)) if ii else 1, tuple(nest_labels),
                              computes)
        bodies.append((k, inner_close, loop_id))

    # -- recurrences: accumulations into floating-point array elements ------------------------------
    sites: dict[int, Site] = {}
    for first, last, loop_id in bodies:
        function = functions[loops[loop_id].function]
        for j in range(first, last):
            m = _ACCUMULATE.match(src.code[j])
            if m and m.group(3) != m.group(4):
                m = None
            if m:
                array, index, op = m.group(2), m.group(3), m.group(5)
            else:
                m = _COMPOUND.match(src.code[j])
                if not m:
                    continue
                array, index, op = m.group(2), m.group(3), m.group(4)
            guard, statement = src.lines[j][:m.end(1)], src.lines[j][m.end(1):].strip()
            dtype = _array_type(src, function, array, typedefs)
            if dtype not in FLOAT_TYPES:
                continue
            site = Site(len(sites), loop_id, j + 1, array, FLOAT_TYPES[dtype], "mul" if op == "*" else "add")
            sites[site.id] = site
            if not statement.endswith(";"):
                continue  # a statement over several lines: not instrumented (documented limit)
            replace[j] = f"{guard}{{ {statement} SYSTOLIC_TRACE_UPDATE({site.id}, {array}{index}); }}"

    _straight_line(src, functions, bodies, statements or [], before, replace)
    top_ports, dram_params = _dram_pointers(src, functions, top, replace, after)

    # -- parallel helper calls -------------------------------------------------------------------------
    groups: dict[int, Group] = {}
    for f in functions.values():
        if f.name in (top, kernel.name):
            continue
        k = f.open + 1
        while k < f.close:
            run = []
            j = k
            while j < f.close:
                m = _CALL.match(src.code[j])
                callee = functions.get(m.group(1)) if m else None
                if not (callee and callee.inline_off and (not run or src.depth[j] == src.depth[run[0][0]])):
                    break
                if not run:
                    p = src.prev_code(j)
                    if p >= 0 and not src.code[p].rstrip().endswith((";", "{", "}", ":")):
                        break  # the body of an if / for without braces: not a statement of the block
                args = split_args(m.group(2))
                mine = {a for a, s in zip(args, _stream_params(callee)) if s}
                if any(mine & other for _, _, other in run):
                    break
                run.append((j, callee.name, mine))
                nxt = src.next_code(j)
                if nxt >= f.close or not _CALL.match(src.code[nxt]):
                    break
                j = nxt
            if len(run) >= 2:
                g = len(groups)
                groups[g] = Group(g, f.name, run[0][0] + 1, tuple(name for _, name, _ in run))
                before.setdefault(run[0][0], []).append(f"SYSTOLIC_TRACE_FORK({g}, {len(run)});")
                for member, (line, _, _) in enumerate(run):
                    replace[line] = (f"{indent(src.lines[line])}SYSTOLIC_TRACE_CALL({g}, {member}); "
                                     f"{src.lines[line].strip()} SYSTOLIC_TRACE_RETURN();")
                after.setdefault(run[-1][0], []).append(f"SYSTOLIC_TRACE_JOIN({g}, {len(run)});")
                k = run[-1][0] + 1
            else:
                k += 1

    out = ['#include "systolic_trace.h"', f'#line 1 "{path}"']
    for k, line in enumerate(src.lines):
        if k in before:
            out += before[k] + [f'#line {k + 1} "{path}"']
        out.append(replace.get(k, line))
        if k in after:
            out += after[k] + [f'#line {k + 2} "{path}"']
    return Instrumented("\n".join(out), processes, loops, streams, sites, groups, list(functions), top_ports,
                        dram_params)


# `[if (guard)] target[..] = expression;  /* S3 */`: a statement of the scop as the exporter writes it
_STATEMENT = re.compile(r"^(\s*(?:if\s*\(.*\)\s*)?)(\w+)((?:\[[^\]]*\])*)\s*=\s*(.*);\s*$")
_TAG = re.compile(r"/\*\s*(S\d+)\s*\*/\s*$")
_WRITE = re.compile(r"^\s*(\w+)\.write\((\w+)\)\s*;\s*$")
_NAME = re.compile(r"\b([A-Za-z_]\w*)\b")


def _array_of(name: str) -> str | None:
    """The scop array a PE variable holds: store_X / local_X (kept in the PE), X_data (an input
    word), X_from_L (a value received along space loop L)."""
    m = re.fullmatch(r"(?:store|local)_(\w+)", name) or re.fullmatch(r"(\w+)_from_\w+", name) \
        or re.fullmatch(r"(\w+)_data", name)
    return m.group(1) if m else None


def _straight_line(src: Source, functions: dict[str, Function], bodies: list[tuple[int, int, int]],
                   statements: list[dict], before: dict[int, list[str]], replace: dict[int, str]) -> None:
    """Operator latencies on the dependence path of straight-line code: a PE body outside any
    pipelined loop (a PE with no time loop) runs as a sequence of states, and a value it computes
    from one it read is ready only after the operators between them. Each tagged statement
    (`/* Sk */`) records its target's ready cycle: the latest of its sources' plus the latency of
    the operators from that source (`statements[].from`, resources/operators.json through the
    descriptor); each stream write of a word assembled from such values waits for them
    (SYSTOLIC_TRACE_AT); a pipelined loop after them waits for all of them (the recorder)."""
    latency = {s["name"]: s.get("from", {}) for s in statements}
    if not latency:
        return
    pipelined = [(first, last) for first, last, _ in bodies]
    ids: dict[str, int] = {}

    def ready(names: list[str], paths: dict[str, int] | None) -> str:
        terms = []
        for name in dict.fromkeys(names):
            array = _array_of(name)
            if array is None or (paths is not None and array not in paths):
                continue
            ids.setdefault(name, len(ids))
            terms.append(f"SYSTOLIC_TRACE_READY({ids[name]}) + {paths[array] if paths is not None else 0}")
        return f"std::max<long>({{0L, {', '.join(terms)}}})" if terms else "0L"

    for f in functions.values():
        for k in range(f.open + 1, f.close):
            if any(first <= k <= last for first, last in pipelined):
                continue
            tag = _TAG.search(src.lines[k])
            m = _STATEMENT.match(src.code[k]) if tag else None
            if m and tag.group(1) in latency:
                guard, target, index, expression = m.groups()
                ids.setdefault(target, len(ids))
                value = ready(_NAME.findall(expression), latency[tag.group(1)])
                replace[k] = (f"{guard}{{ {target}{index} = {expression}; "
                              f"SYSTOLIC_TRACE_VALUE({ids[target]}, {value}); }}")
                continue
            m = _WRITE.match(src.code[k])
            if not m or not ids:
                continue
            word, names = m.group(2), []
            j = src.prev_code(k)
            while j > f.open and src.depth[j] == src.depth[k] and not _WRITE.match(src.code[j]):
                assigned = re.match(rf"^\s*{word}\.lane\[[^\]]*\]\s*=\s*(.*);\s*$", src.code[j])
                if assigned:
                    names += _NAME.findall(assigned.group(1))
                j = src.prev_code(j)
            if any(name in ids for name in names):
                before.setdefault(k, []).append(f"SYSTOLIC_TRACE_AT({ready([n for n in names if n in ids], None)});")


def _region(src: Source, functions: dict[str, Function], top: str) -> Function:
    """The function holding the dataflow region: `top` itself, or the one function with
    `#pragma HLS dataflow` that `top` calls (once per pass, engine/compiler/architecture/passes.py)."""
    def has_dataflow(f: Function) -> bool:
        return any(_DATAFLOW.match(src.lines[k]) for k in range(f.open + 1, f.close))
    if has_dataflow(functions[top]):
        return functions[top]
    kernel = functions[top]
    called = {m.group(1) for k in range(kernel.open + 1, kernel.close) for m in [_CALL.match(src.code[k])] if m}
    regions = [f for name, f in functions.items() if name in called and has_dataflow(f)]
    if len(regions) != 1:
        raise TraceError(f"{src.where(kernel.open)}: {top} has no '#pragma HLS dataflow' and calls "
                         f"{'no' if not regions else 'more than one'} function that has one")
    return regions[0]


_POINTER = re.compile(r"^((?:const\s+)?[\w:<>, ]+?)\s*\*\s*(?:__restrict\w*\s+)?(\w+)$")


def _dram_pointers(src: Source, functions: dict[str, Function], top: str, replace: dict[int, str],
                   after: dict[int, list[str]]) -> tuple[list[str], dict[str, list[str]]]:
    """DRAM accesses traced: `top` registers its pointer arguments (the m_axi ports) on entry, and
    every function they are handed to (transitively, by position in a call) takes them as a
    `systolic_trace::dram_ptr`, which reports each word it reads or writes. Returns (the ports in
    order, function -> its traced parameters)."""
    kernel = functions[top]
    ports = [m.group(2) for m in (_POINTER.match(p.strip()) for p in kernel.params) if m]
    if not ports:
        return [], {}
    after.setdefault(kernel.open, []).extend(f"SYSTOLIC_TRACE_DRAM_PORT({k}, {name});" for k, name in enumerate(ports))
    traced: dict[str, set[int]] = {}  # function -> positions of its parameters that hold a port
    work = [(top, set(ports))]
    while work:
        name, pointers = work.pop()
        f = functions[name]
        for k in range(f.open + 1, f.close):
            for m in re.finditer(r"\b(\w+)\s*\(", src.code[k]):
                callee = functions.get(m.group(1))
                if callee is None or callee.name == top:
                    continue
                args = split_args(balanced(src.code[k], m.end()))
                positions = {i for i, a in enumerate(args) if a in pointers and i < len(callee.params)}
                new = positions - traced.get(callee.name, set())
                if not new:
                    continue
                traced.setdefault(callee.name, set()).update(new)
                names = set()
                for i in traced[callee.name]:
                    pm = _POINTER.match(callee.params[i].strip())
                    if pm:
                        names.add(pm.group(2))
                work.append((callee.name, names))
    dram_params = {}
    for name, positions in traced.items():
        f = functions[name]
        line = replace.get(f.open, src.lines[f.open])
        params = []
        for i in sorted(positions):
            pm = _POINTER.match(f.params[i].strip())
            if pm is None:
                continue
            line = line.replace(f.params[i].strip(), f"systolic_trace::dram_ptr<{pm.group(1)}> {pm.group(2)}", 1)
            params.append(pm.group(2))
        replace[f.open] = line
        dram_params[name] = params
    return ports, dram_params


def _array_type(src: Source, function: Function, array: str, typedefs: dict[str, str]) -> str:
    """The resolved element type of a local array or an array parameter of `function`."""
    pattern = re.compile(rf"\b([\w:]+)\s+{re.escape(array)}\s*\[")
    for p in function.params:
        m = pattern.search(p)
        if m:
            return _resolve_type(m.group(1), typedefs)
    for j in range(function.open, function.close):
        m = pattern.search(src.code[j])
        if m:
            return _resolve_type(m.group(1), typedefs)
    return ""


def _reads_port(src: Source, function: Function, args: list[str], port: str) -> bool:
    """A writable m_axi port the process also reads (`x = PORT[...]` in its body)."""
    if args.index(port) >= len(function.params):
        return False
    name = function.params[args.index(port)].split("*")[-1].strip()
    body = "\n".join(src.code[function.open + 1:function.close])
    return re.search(rf"=\s*{re.escape(name)}\s*\[", body) is not None


def instrument_file(kernel_cpp: Path, header: Path | None = None) -> Instrumented:
    return instrument(kernel_cpp.read_text(), path=str(kernel_cpp),
                      header=header.read_text() if header is not None and header.is_file() else "")
