"""Kernel IR -> polyhedral model: iteration domains, read/write access relations, original schedule.

The original schedule is the classic 2d+1 form: `S[i, j, k] -> [p0, i, p1, j, p2, k, p3]` where
p_d is the statement's textual position among its siblings at depth d, padded with zeros so every
statement has the same number of schedule dimensions.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from engine.compiler import isl_helpers as ih
from engine.compiler.ir import Access, Kernel, Statement
from engine.errors import KernelError


@dataclass(frozen=True)
class Reference:
    """One array access of one statement, with its isl relation."""

    statement: str
    access: Access
    relation: isl.Map  # { S[...] -> A[...] } restricted to the statement's domain
    is_write: bool


@dataclass(frozen=True)
class PolyhedralModel:
    kernel: Kernel
    domains: dict[str, isl.Set]
    references: tuple[Reference, ...]
    schedule: isl.UnionMap

    @property
    def domain(self) -> isl.UnionSet:
        result = isl.UnionSet.empty(isl.Space.params_alloc(ih.CTX, 0))
        for d in self.domains.values():
            result = result.union(isl.UnionSet.from_set(d))
        return result

    def accesses(self, *, writes: bool, array: str | None = None) -> isl.UnionMap:
        result = isl.UnionMap.empty(isl.Space.params_alloc(ih.CTX, 0))
        for ref in self.references:
            if ref.is_write == writes and (array is None or ref.access.array == array):
                result = result.union(isl.UnionMap.from_map(ref.relation))
        return result

    def written_arrays(self) -> set[str]:
        return {ref.access.array for ref in self.references if ref.is_write}

    def instance_count(self, statement: str | None = None) -> int:
        """Exact number of executions of one statement (or of all statements), counted by isl over
        the domain as written (triangular and guarded domains included), not from loop extents."""
        names = [statement] if statement is not None else list(self.domains)
        return sum(ih.count_points(self.domains[name]) for name in names)


def build_model(kernel: Kernel) -> PolyhedralModel:
    domains: dict[str, isl.Set] = {}
    references: list[Reference] = []
    depth = max(len(s.loops) for s in kernel.statements)
    schedule = None
    for stmt in kernel.statements:
        domain = ih.domain_set(stmt.name, stmt.iterators, [(l.lower, l.upper) for l in stmt.loops],
                               stmt.guards)
        if domain.is_empty():
            raise KernelError(f"statement '{stmt.text}' never executes: its loop bounds or conditions "
                              f"are empty", stmt.location)
        domains[stmt.name] = domain
        _check_in_bounds(kernel, stmt, stmt.target, domain)
        references.append(Reference(stmt.name, stmt.target, _relation(stmt, stmt.target, domain), True))
        for access in dict.fromkeys(stmt.reads()):
            _check_in_bounds(kernel, stmt, access, domain)
            references.append(Reference(stmt.name, access, _relation(stmt, access, domain), False))
        stmt_schedule = isl.UnionMap.from_map(_original_schedule(stmt, depth).intersect_domain(domain))
        schedule = stmt_schedule if schedule is None else schedule.union(stmt_schedule)
    return PolyhedralModel(kernel, domains, tuple(references), schedule)


def _relation(stmt: Statement, access: Access, domain: isl.Set) -> isl.Map:
    return ih.access_map(stmt.name, stmt.iterators, access.array, access.index, domain)


def _original_schedule(stmt: Statement, depth: int) -> isl.Map:
    dims: list[str] = []
    for d, loop in enumerate(stmt.loops):
        dims += [str(stmt.position[d]), loop.name]
    dims.append(str(stmt.position[len(stmt.loops)]))
    dims += ["0"] * (2 * depth + 1 - len(dims))
    return isl.Map(f"{{ {stmt.name}[{', '.join(stmt.iterators)}] -> [{', '.join(dims)}] }}", context=ih.CTX)


def _check_in_bounds(kernel: Kernel, stmt: Statement, access: Access, domain: isl.Set) -> None:
    decl = kernel.arrays[access.array]
    if not decl.shape:
        return
    touched = _relation(stmt, access, domain).range()
    extent = isl.Set(f"{{ {access.array}[{', '.join(f'a{d}' for d in range(len(decl.shape)))}] : "
                     + " and ".join(f"0 <= a{d} < {n}" for d, n in enumerate(decl.shape)) + " }", context=ih.CTX)
    if not touched.is_subset(extent):
        raise KernelError(f"'{access}' goes outside '{access.array}' (declared "
                          f"{''.join(f'[{n}]' for n in decl.shape)}) for some iterations", stmt.location)
