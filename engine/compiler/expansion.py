"""Kernel -> the same kernel with its reused scop-local arrays in single-assignment form (array
expansion: what AutoSA's `--live-range-reordering` lets its LU kernel do).

An array declared inside the scop never leaves the design: its values go from their writer to
their readers through PE registers and FIFOs, so how the source reuses its memory does not matter.
When the source writes an element more than once (AutoSA's LU: `V[i][j]` rewritten at every step
k), that reuse shows up as anti and output dependences with negative distances, which would rule out
the band the flow dependences allow. Such an array gets one more subscript per loop iterator that
tells its writes apart (`V[i][j]` -> `V[i][j][k]`, the fewest, in loop order), and each of its reads
the subscripts of the write it reads, from isl's exact dataflow (`V[i][j]` read at step k is
`V[i][j][k - 1]`). The meaning is unchanged: every read gets the value it got before.

design_space.py applies it where the band as written is not permutable otherwise (a kernel whose
band is keeps its arrays, and its designs, as written).

An array is left as written (and the passes after this one judge it as it is) when its writers run
in different loops, when some read has no writer inside the scop (it would read memory the scop
never set), or when a read's writer is not one affine function of the reader's iterators.
"""
from __future__ import annotations

from dataclasses import replace

import islpy as isl

from engine.compiler import isl_helpers as ih
from engine.compiler.ir import Access, Affine, BinOp, Call, Expr, Kernel, Ref, UnaryOp
from engine.compiler.polyhedral import PolyhedralModel, build_model


def expand_local_arrays(kernel: Kernel) -> Kernel:
    """`kernel` with every reused local array expanded (see the module docstring); `kernel` itself
    when none is."""
    if not any(decl.local for decl in kernel.arrays.values()):
        return kernel
    model = build_model(kernel)
    rewrites: dict[tuple[str, Access], Access] = {}  # (statement, access as written) -> expanded
    shapes: dict[str, tuple[int, ...]] = {}
    for name in sorted(model.written_arrays()):
        if kernel.arrays[name].local:
            found = _expand(model, name)
            if found is not None:
                rewrites.update(found[0])
                shapes[name] = found[1]
    if not shapes:
        return kernel
    statements = tuple(replace(s, target=rewrites.get((s.name, s.target), s.target),
                               expr=_rewrite(s.expr, s.name, rewrites)) for s in kernel.statements)
    arrays = {n: replace(d, shape=shapes[n]) if n in shapes else d for n, d in kernel.arrays.items()}
    return kernel.copy(statements=statements, arrays=arrays)


def _expand(model: PolyhedralModel, array: str):
    writes = model.accesses(writes=True, array=array)
    if writes.is_injective():
        return None  # already one write per element
    writers = [r for r in model.references if r.is_write and r.access.array == array]
    loops = {model.kernel.statement(r.statement).iterators for r in writers}
    if len(loops) != 1:
        return None
    iterators = next(iter(loops))
    extra = _distinguishing_iterators(writers, iterators)
    if extra is None:
        return None
    expanded = {r.statement: Access(array, r.access.index + tuple(Affine.var(v) for v in extra)) for r in writers}
    expanded_writes = ih.union_of(ih.access_map(r.statement, iterators, array, expanded[r.statement].index,
                                           model.domains[r.statement]) for r in writers)
    rewrites = {(s, model.kernel.statement(s).target): a for s, a in expanded.items()}
    for ref in model.references:
        if ref.is_write or ref.access.array != array:
            continue
        flow = ih.compute_dependences(isl.UnionMap.from_map(ref.relation), model.schedule, must=writes)
        element = flow.reverse().apply_range(expanded_writes)  # reader instance -> expanded element
        reader = model.kernel.statement(ref.statement).iterators
        index = (_as_written(element, ref, reader, extra, model.domains[ref.statement])
                 or _single_affine(element, ref.relation.domain(), reader))
        if index is None:
            return None
        rewrites[(ref.statement, ref.access)] = Access(array, index)
    box = expanded_writes.range().coalesce()
    shape = model.kernel.arrays[array].shape
    sizes = []
    for d in range(len(extra)):
        piece = isl.Set.from_union_set(box)
        low = piece.dim_min_val(len(shape) + d).to_python()
        if low < 0:
            return None
        sizes.append(piece.dim_max_val(len(shape) + d).to_python() + 1)
    return rewrites, shape + tuple(sizes)


def _distinguishing_iterators(writers, iterators: tuple[str, ...]) -> tuple[str, ...] | None:
    """The fewest iterators, kept in loop order, that make the writes injective once appended."""
    def injective(extra: tuple[str, ...]) -> bool:
        return ih.union_of(ih.access_map(r.statement, iterators, "X", r.access.index + tuple(Affine.var(v) for v in extra),
                                    r.relation.domain()) for r in writers).is_injective()

    chosen: tuple[str, ...] = ()
    for name in iterators:
        if injective(chosen):
            break
        chosen += (name,)
    if not injective(chosen):
        return None
    for name in chosen:
        fewer = tuple(v for v in chosen if v != name)
        if injective(fewer):
            chosen = fewer
    return chosen


def _as_written(element: isl.UnionMap, ref, iterators: tuple[str, ...], extra: tuple[str, ...],
                domain: isl.Set) -> tuple[Affine, ...] | None:
    """The read's subscripts as written, then each added iterator shifted by a constant
    (`V[i][j]` -> `V[i][j][k - 1]`), if that is exactly the element each read instance reads;
    None otherwise. isl's own form of the same function may use a guard's equality instead
    (`prev_V[i][k][k]` where j == k), which hides that the read follows the written subscripts."""
    if element.is_empty():
        return None
    relation = isl.Map.from_union_map(element)
    reads = ref.relation.domain()
    if not relation.domain().is_equal(reads):
        return None  # some read has no writer in the scop
    point = reads.sample_point()
    at = {name: point.get_coordinate_val(isl.dim_type.set, k).to_python() for k, name in enumerate(iterators)}
    image = relation.intersect_domain(isl.Set.from_point(point)).range().sample_point()
    written = len(ref.access.index)
    shifted = tuple(Affine.of({v: 1}, image.get_coordinate_val(isl.dim_type.set, written + d).to_python() - at[v])
                    for d, v in enumerate(extra))
    index = ref.access.index + shifted
    candidate = ih.access_map(ref.statement, iterators, ref.access.array, index, reads)
    return index if candidate.is_equal(relation) else None


def _single_affine(element: isl.UnionMap, reads: isl.Set, iterators: tuple[str, ...]) -> tuple[Affine, ...] | None:
    """The element each read instance reads as one affine subscript tuple over the reader's
    iterators, or None: a read without a writer, several writers, or different functions by piece."""
    if element.is_empty():
        return None
    relation = isl.Map.from_union_map(element).coalesce()
    if not relation.domain().is_equal(reads) or not relation.is_single_valued():
        return None
    pieces: list[isl.MultiAff] = []
    relation.as_pw_multi_aff().foreach_piece(lambda _, multi: pieces.append(multi))
    found: set[tuple[Affine, ...]] = set()
    for multi in pieces:
        index = []
        for d in range(multi.dim(isl.dim_type.out)):
            aff = multi.get_aff(d)
            if aff.dim(isl.dim_type.div) or not aff.get_denominator_val().is_one():
                return None
            coeffs = {name: aff.get_coefficient_val(isl.dim_type.in_, k).to_python()
                      for k, name in enumerate(iterators)}
            index.append(Affine.of(coeffs, aff.get_constant_val().to_python()))
        found.add(tuple(index))
    return found.pop() if len(found) == 1 else None


def _rewrite(expr: Expr, statement: str, rewrites: dict[tuple[str, Access], Access]) -> Expr:
    if isinstance(expr, Ref):
        return Ref(rewrites.get((statement, expr.access), expr.access))
    if isinstance(expr, BinOp):
        return BinOp(expr.op, _rewrite(expr.lhs, statement, rewrites), _rewrite(expr.rhs, statement, rewrites))
    if isinstance(expr, UnaryOp):
        return UnaryOp(expr.op, _rewrite(expr.operand, statement, rewrites))
    if isinstance(expr, Call):
        return Call(expr.name, expr.op, tuple(_rewrite(a, statement, rewrites) for a in expr.args))
    return expr

