"""Design space + design -> Architecture: the PE, the I/O network and the compute description,
with every size left symbolic in the design's tuning parameters."""
from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction
from dataclasses import replace

import islpy as isl
import networkx as nx
import sympy

from engine.compiler.architecture.dram_runs import dram_pack_name
from engine.compiler.architecture.io_groups import io_groups
from engine.compiler.architecture.io_network import build_io_network
from engine.compiler.architecture.io_reach import io_reach, reach_counts
from engine.compiler.architecture.modules import Architecture
from engine.compiler.architecture.multipliers import multiplier_pairing
from engine.compiler.architecture.owned_drain import with_owned_drains
from engine.compiler.architecture.passes import PassView, architecture_passes
from engine.compiler.architecture.pe import build_pe, carried_depth
from engine.compiler.architecture.pe_set import occupied_pes, pe_set_count, when_one_tile
from engine.compiler.architecture.symbols import DesignSymbols, sizes_are_symbolic
from engine.compiler.band import runs_several_statements
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.compiler.architecture.local_arrays import local_arrays, local_buffers, local_fifos
from engine.compiler.ir import Affine, BinOp, Call, Expr, Guard, Ref, UnaryOp
from engine.compiler.tuning import DTYPE_BITS
from engine.errors import DesignError
from engine.resources import RESOURCES

OPERATORS = json.loads((RESOURCES / "operators.json").read_text())
_OP_NAMES = {"*": "mul", "+": "add", "-": "add", "/": "div", "%": "div"}


def build_architecture(space: DesignSpace, design: Design, *, double_buffering: bool = True,
                       view: PassView | None = None) -> Architecture:
    """`double_buffering`: I/O modules with local buffers keep two, so loading the next block
    overlaps feeding the current one (AutoSA's default; off halves their BRAM and serialises them).
    `view`: the hardware as one pass of a design that runs passes sees it (engine/compiler/architecture/passes.py)."""
    statements = [space.kernel.statement(name) for name in space.band.compute_statements]
    if any(loop not in statements[0].iterators for loop in space.band.loops):
        raise DesignError(f"{design.id}: hardware construction needs band loops that are loops of the source "
                          f"(this band comes from isl's scheduler: {', '.join(space.band.loops)})")
    bits = {name: DTYPE_BITS[decl.dtype] for name, decl in space.kernel.arrays.items()}
    syms = DesignSymbols(design, view.loops if view else ())
    compute = compute_info(space, statements)
    compute["multipliers"] = multiplier_pairing(statements, design.simd_loop,
                                                {n: a.dtype for n, a in space.kernel.arrays.items()},
                                                runs_several_statements(space.kernel, space.band))
    groups = io_groups(space, design, bits, view)
    add_latency = OPERATORS[compute["dtype"]]["add"]["latency"] if compute["ops"].get("add") else 1
    depth = pipeline_depth(compute)
    recurrences = carried_recurrences(space, compute, {g.array for g in groups})
    pe = build_pe(syms, groups, add_latency, depth, recurrences,
                  overlap_drain=double_buffering and len(statements) == 1)
    on_chip = local_arrays(space, syms)
    # a read carried from an earlier iteration can hold a statement back beyond the same-iteration chain
    depth = max(depth, carried_depth(compute["statements"], [a.to_json() for a in on_chip], syms,
                                     next(p.ii for p in pe.phases if p.name == "compute")))
    pes = occupied_pes(space, design)
    pe = replace(pe, buffers=pe.buffers + tuple(local_buffers(on_chip)), depth=depth,
                 count=occupied_pe_count(space, design, syms, pes))
    # each interior network over the PEs that read (write) its array from outside (io_reach.py)
    reach = io_reach(space, design, groups, pes)
    modules, fifos, packing = build_io_network(syms, groups, double_buffering=double_buffering,
                                               reach={name: reached_counts(space, design, syms, r)
                                                      for name, r in reach.items()})
    fifos += local_fifos(on_chip, syms, space, pes)
    arch = Architecture(design.id, design.name, space.kernel.name, design.space_loops, syms.pe_grid, syms.simd,
                        (pe, *modules), tuple(fifos), compute, tuple(groups), tuple(packing), double_buffering,
                        tuple(on_chip), pe_set=None if pes is None else pes.to_str(),
                        io_reach={name: r.to_str() for name, r in reach.items()})
    if view is None:
        # outputs several PEs hold drain each element from its last writer
        update = [{"target": str(s.target), "guards": [guard_text(g) for g in s.guards], "bounds": loop_bounds(s)}
                  for s in statements]
        arch = with_owned_drains(arch, update, design)
    return arch


def reached_counts(space: DesignSpace, design: Design, syms: DesignSymbols,
                   reach: isl.Set) -> tuple[sympy.Expr, sympy.Expr]:
    """(L1 instances, rows of them) of a network over `reach` (io_reach.py), under the one-tile
    condition of the PE set (pe_set.py `when_one_tile`)."""
    pes, rows = reach_counts(reach)
    box_rows = syms.pes(design.space_loops[0]) if len(design.space_loops) == 2 else sympy.Integer(1)
    return (when_one_tile(space, design, syms, pes, syms.pe_count),
            when_one_tile(space, design, syms, rows, box_rows))


def occupied_pe_count(space: DesignSpace, design: Design, syms: DesignSymbols,
                      pes: isl.Set | None) -> sympy.Expr:
    """The PEs the array holds: `pes` (pe_set.py `occupied_pes`: one PE per space-loop value that
    some iteration takes, when each space loop has one tile, `l_t1` at least its extent) counted, so
    a triangular iteration domain gets a triangle of PEs (LU along k and j at N = 32: 528, not
    32 x 32); the box of the grid otherwise (tiles, or PEs split by latency hiding or SIMD, each see
    other values), and always for a model built for every size (symbols.symbolic_sizes)."""
    box = syms.pe_count
    if pes is None:
        return box
    return when_one_tile(space, design, syms, pe_set_count(pes), box)


def compute_info(space: DesignSpace, statements) -> dict:
    """Operators of every statement the PE runs (each statement has its own: a guarded statement's
    operators are hardware whether or not its guard holds), the data type they are costed for, and
    per statement its guards, operators and latency."""
    ops: Counter[str] = Counter()
    per_statement = []
    for stmt in statements:
        own: Counter[str] = Counter()
        _count_ops(stmt.expr, own)
        ops.update(own)
        per_statement.append({"name": stmt.name, "target": stmt.target.array, "bounds": loop_bounds(stmt),
                              "ops": dict(own), "guards": [guard_text(g) for g in stmt.guards],
                              "inputs": _same_iteration_sources(space, stmt.name, statements)})
    reads = {ref.array for stmt in statements for ref in stmt.reads()}
    dtypes = [space.kernel.arrays[a].dtype for a in reads] or [space.kernel.arrays[statements[0].target.array].dtype]
    dtype = max(dtypes, key=lambda t: DTYPE_BITS[t] + (100 if t in ("float", "double") else 0))
    table = OPERATORS[dtype]
    unsupported = [op for op in ops if not isinstance(table.get(op), dict)]
    if unsupported:
        known = ", ".join(op for op, entry in table.items() if isinstance(entry, dict))
        raise DesignError(f"the compute statement uses {', '.join(unsupported)} on {dtype}, which "
                          f"resources/operators.json does not cost; it costs {known}")
    for stmt, entry in zip(statements, per_statement):
        entry["latency"] = sum(table[op]["latency"] for op in entry["ops"])
        # the operators between a read of each array and the statement's value (the path a value
        # received from a neighbour or from an earlier iteration runs through)
        entry["from"] = _path_latencies(stmt.expr, table)
    return {"ops": dict(ops), "dtype": dtype, "statement": statements[0].text, "statements": per_statement,
            "operations": operation_count(space, {e["name"]: sum(e["ops"].values()) for e in per_statement})}


def operation_count(space: DesignSpace, ops: dict[str, int]) -> dict:
    """The arithmetic the band performs, the numerator of every throughput: each `+ - * / %` of a
    statement's right-hand side (the pycparser tree as engine/compiler/ir.py holds it; `+=` is its
    `+`) and each call counts one operation, times the statement's executions as isl counts them
    over its domain (LU's triangle, not its box). `total`: every operation of the problem;
    `per_iteration`: total over the band's points, an integer for a kernel whose statements run at
    every point (MM 2, MTTKRP 3: two multiplies and the add). `ops`: statement -> its operations."""
    total = sum(n * space.model.instance_count(name) for name, n in ops.items())
    points = space.band.point_count(space.model.domains)
    per_iteration = Fraction(total, points) if points else Fraction(0)
    return {"total": total,
            "per_iteration": int(per_iteration) if per_iteration.denominator == 1 else round(float(per_iteration), 4)}


def kernel_operations(space: DesignSpace) -> dict:
    """compute.operations of the space's kernel (the same for every design: the band's statements)."""
    return compute_info(space, [space.kernel.statement(n) for n in space.band.compute_statements])["operations"]


def operations_label(operations: dict) -> str:
    """`2 ops per iteration`: what a GOP/s figure counts (compute.operations)."""
    return f"{operations['per_iteration']:g} ops per iteration"


def guard_text(guard: Guard) -> str:
    """A guard as an affine C condition over the band loops: `j - k == 0`, `i - k - 1 >= 0`."""
    return f"{guard.expr} {'==' if guard.equality else '>='} 0"


def loop_bounds(stmt) -> list[str]:
    """The bounds of a statement's loops that depend on other loops (LU's `j >= k`), as affine C
    conditions like guards: a PE iterating a box of points runs the statement only inside them."""
    conditions = []
    for loop in stmt.loops:
        var = Affine.var(loop.name)
        if not loop.lower.is_constant():
            conditions.append(guard_text(Guard(var - loop.lower)))
        if not loop.upper.is_constant():
            conditions.append(guard_text(Guard(loop.upper - var - Affine.of({}, 1))))
    return conditions


def pipeline_depth(compute: dict) -> int:
    """PE pipeline depth: the latencies of the operator kinds a statement uses (division and
    square root included, resources/operators.json), plus reading and writing the operands. With
    several statements in one iteration, a statement starts when the statements it reads from in
    the same iteration (`inputs`) have finished: the depth is the longest chain of latencies.""" 
    statements = compute.get("statements", [])
    if len(statements) <= 1:
        table = OPERATORS[compute["dtype"]]
        return sum(table[op]["latency"] for op in compute["ops"]) + 2
    ready: dict[str, int] = {}
    for s in statements:  # textual order: a statement's same-iteration sources come before it
        ready[s["name"]] = max([ready.get(source, 0) for source in s["inputs"]], default=0) + s["latency"]
    return max(ready.values()) + 2


def _path_latencies(expr: Expr, table: dict) -> dict[str, int]:
    """Array -> the latency of the operators from a read of it to the expression's value (the
    longest such path where it is read several times)."""
    if isinstance(expr, Ref):
        return {expr.access.array: 0}
    if isinstance(expr, BinOp):
        children, own = (expr.lhs, expr.rhs), table[_OP_NAMES[expr.op]]["latency"]
    elif isinstance(expr, UnaryOp):
        children, own = (expr.operand,), 0
    elif isinstance(expr, Call):
        children, own = expr.args, table[expr.op]["latency"]
    else:
        return {}
    paths: dict[str, int] = {}
    for child in children:
        for array, latency in _path_latencies(child, table).items():
            paths[array] = max(paths.get(array, 0), latency + own)
    return paths


def carried_recurrences(space: DesignSpace, compute: dict, exterior: set[str]) -> list[dict]:
    """The PE's recurrences through the scop's local arrays: a value a statement writes at one band
    point and a statement reads at a later point (a flow dependence of constant distance `distance`,
    per band loop), whose reader leads, through statements of the same point, back to the writer.
    `latency`: the operators on that cycle (resources/operators.json, from the read array to each
    statement's value, `compute.statements[].from`). Dependences through the kernel's own arrays
    (`exterior`: the accumulations) are accumulation_ii's."""
    statements = {s["name"]: s for s in compute.get("statements", [])}
    targets = {stmt.name: stmt.target.array for stmt in (space.kernel.statement(n) for n in statements)}
    readers: dict[str, list[str]] = {name: [] for name in statements}
    for s in statements.values():
        for source in s["inputs"]:
            readers[source].append(s["name"])
    found = []
    for dep, distance in _carried_flow(space, statements, exterior):
        # the longest same-point chain from the reader (dep.sink) to the writer (dep.source)
        best: dict[str, int] = {dep.sink: statements[dep.sink]["from"].get(dep.array, 0)}
        for name in statements:  # textual order: a statement's same-point sources come before it
            if name not in best:
                continue
            for reader in readers[name]:
                latency = best[name] + statements[reader]["from"].get(targets[name], 0)
                best[reader] = max(best.get(reader, -1), latency)
        if dep.source in best and best[dep.source] > 0:
            found.append({"latency": best[dep.source], "source": dep.source, "sink": dep.sink, "array": dep.array,
                          "distance": distance})
    return found + _chained_recurrences(space, statements, targets, readers, exterior)


def _carried_flow(space: DesignSpace, statements: dict, exterior: set[str]):
    """(dependence, distance per band loop) for the flow dependences between the PE's statements
    through local arrays (not `exterior`) whose distance is constant and not zero."""
    for dep in space.dependences.flow:
        if dep.source not in statements or dep.sink not in statements or dep.array in exterior:
            continue
        ranges = space.band.distance_ranges(dep)
        if any(lo != hi for lo, hi in ranges) or all(lo == 0 for lo, _ in ranges):
            continue
        yield dep, dict(zip(space.band.loops, (lo for lo, _ in ranges)))


def _chained_recurrences(space: DesignSpace, statements: dict, targets: dict, readers: dict,
                         exterior: set[str]) -> list[dict]:
    """Recurrences whose cycle runs through two or more carried dependences (LU's 1-D array along j:
    V of step k is prev_V of step k + 1, divided at i = k + 1 into an L_tmp that the next i
    iteration multiplies into V again; 28 cycles over N + 1 iterations): the simple cycles of the
    graph of same-point chains (`inputs`) and carried flow dependences, each with the operators
    on it and the sum of its dependences' distances. One carried dependence: carried_recurrences."""
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(statements)
    zero = {l: 0 for l in space.band.loops}
    for name in statements:
        for reader in readers[name]:
            graph.add_edge(name, reader, latency=statements[reader]["from"].get(targets[name], 0), distance=zero,
                           carried=False)
    for dep, distance in _carried_flow(space, statements, exterior):
        graph.add_edge(dep.source, dep.sink, latency=statements[dep.sink]["from"].get(dep.array, 0),
                       distance=distance, carried=True)
    found = []
    for cycle in nx.simple_cycles(graph):
        hops = [list(graph.get_edge_data(a, b).values()) for a, b in zip(cycle, cycle[1:] + cycle[:1])]
        for edges in itertools.product(*hops):
            if sum(e["carried"] for e in edges) < 2:
                continue
            latency = sum(e["latency"] for e in edges)
            distance = {l: sum(e["distance"][l] for e in edges) for l in space.band.loops}
            if latency > 0 and any(distance.values()):
                found.append({"latency": latency, "source": cycle[0], "sink": cycle[0], "array": None,
                              "distance": distance})
    return found


def _same_iteration_sources(space: DesignSpace, name: str, statements) -> list[str]:
    """The statements whose values `name` reads in the same band iteration (flow dependences of
    distance 0 on every band loop): the chain a PE iteration's pipeline runs through."""
    names = {s.name for s in statements}
    return sorted({dep.source for dep in space.dependences.flow
                   if dep.sink == name and dep.source in names and dep.source != name
                   and all(r == (0, 0) for r in space.band.distance_ranges(dep))},
                  key=lambda s: int(s[1:]))


def _count_ops(expr: Expr, ops: Counter) -> None:
    if isinstance(expr, BinOp):
        ops[_OP_NAMES[expr.op]] += 1
        _count_ops(expr.lhs, ops)
        _count_ops(expr.rhs, ops)
    elif isinstance(expr, UnaryOp):
        _count_ops(expr.operand, ops)
    elif isinstance(expr, Call):
        ops[expr.op] += 1
        for arg in expr.args:
            _count_ops(arg, ops)


def pass_architectures(space: DesignSpace, design: Design, arch: Architecture) -> dict[str, Architecture]:
    """The hardware as one pass sees it, for a design that runs passes: {"first": a pass that
    reads nothing back (when the accumulator is initialised on chip), "reload": a pass that reads
    partial results back}; empty when the design never runs passes."""
    passes = architecture_passes(design, arch.groups)
    if not passes.reductions:
        return {}
    kinds = (("first", False), ("reload", True)) if passes.initialised else (("reload", True),)
    return {name: _design_dram_words(build_architecture(space, design, double_buffering=arch.double_buffering,
                                                        view=PassView(passes.loops, reload)), arch)
            for name, reload in kinds}


def _design_dram_words(pass_arch: Architecture, arch: Architecture) -> Architecture:
    """A pass reads and writes the design's DRAM ports: where its boxes start along a row and how
    they lie in the padded array are the whole array's (a pass sees one tile of its pass loops, so
    its own view would take every box to start a row and a natural-layout run to span whole rows:
    found with the timed C simulation, CNN o-h__h-w-i-p-q.o with w_t1 = 1 read and wrote its partial
    results in one-beat bursts, charged as 9-beat runs). The DRAM-facing packing factors are the design's."""
    design = {p.name: p for p in arch.packing}
    facing = {dram_pack_name(m.name, m.kind, m.level) for m in pass_arch.modules if m.dram}
    return replace(pass_arch, packing=tuple(design.get(p.name, p) if p.name in facing else p
                                            for p in pass_arch.packing))
