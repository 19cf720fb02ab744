"""Kernel IR -> reductions: which statements accumulate into their target, and along which loops.

A statement `X[f] = X[f] op e` (op in + - *, e not reading X) is a reduction along every one of its
loops that f does not use: its updates of one element may run in any order, so the dependences it
has on itself through X do not constrain loop permutation, and the accumulation chain follows
whatever order the space-time schedule gives. Users can declare more (`#pragma systolic
reduction(k)` or an AutoSA simd_info.json): a statement that reads its own target element is then a
reduction along each declared loop its target does not use. AutoSA's "y"/"n" flags name those loops
by position: the n-th flag is about the n-th loop (in source order) the target does not use.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.compiler.ir import BinOp, Kernel, Ref, Statement, expr_refs


@dataclass(frozen=True)
class Reduction:
    statement: str
    array: str
    op: str  # '+', '*', or 'declared'
    loops: tuple[str, ...]  # the statement's loops along which it accumulates


def find_reductions(kernel: Kernel) -> dict[str, Reduction]:
    found: dict[str, Reduction] = {}
    for stmt in kernel.statements:
        invariant = tuple(l.name for l in stmt.loops
                          if not any(l.name in index.variables for index in stmt.target.index))
        op = _reduction_operator(stmt)
        if op is not None and invariant:
            found[stmt.name] = Reduction(stmt.name, stmt.target.array, op, invariant)
            continue
        flagged = {name for name, flag in zip(invariant, kernel.declared_reduction_flags) if flag}
        declared = tuple(name for name in invariant if name in kernel.declared_reduction_loops | flagged)
        if declared and stmt.target in set(stmt.reads()):
            found[stmt.name] = Reduction(stmt.name, stmt.target.array, "declared", declared)
    return found


def _reduction_operator(stmt: Statement) -> str | None:
    expr = stmt.expr
    if not isinstance(expr, BinOp) or expr.op not in ("+", "-", "*"):
        return None
    own = Ref(stmt.target)
    if expr.lhs == own:
        rest = expr.rhs
    elif expr.rhs == own and expr.op != "-":
        rest = expr.lhs
    else:
        return None
    if any(ref.array == stmt.target.array for ref in expr_refs(rest)):
        return None
    return "+" if expr.op in ("+", "-") else "*"
