"""Turns an isl set into isl's generated AST, and that AST into the number of statement executions.

The count comes from running the AST (loops, guards and isl's integer arithmetic), not from isl's
cardinality, so it checks loop-count formulas against what isl's code generator really emits.
The AST is first compiled into Python closures; a loop whose body does not read its iterator
contributes trip count x body count, with the trip count solved from `it <= e` / `it < e` bounds.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Callable

import islpy as isl

Env = dict[str, int]
Fn = Callable[[Env], int]

_OP = isl.ast_expr_op_type
_NODE = isl.ast_node_type


def ast_for(domain: isl.Set | isl.UnionSet) -> isl.AstNode:
    """isl's AST for visiting every point of `domain` once, in lexicographic order (schedule = identity)."""
    listed = domain.get_set_list() if isinstance(domain, isl.UnionSet) else isl.SetList.from_set(domain)
    sets = [listed.get_at(i) for i in range(listed.n_set())]
    width = max((s.dim(isl.dim_type.set) for s in sets), default=0)
    schedule = isl.UnionMap.empty(domain.get_space())
    for s in sets:
        n = s.dim(isl.dim_type.set)
        identity = isl.Map.identity(s.get_space().map_from_set()).intersect_domain(s)
        padded = identity.reset_tuple_id(isl.dim_type.out).add_dims(isl.dim_type.out, width - n)
        for k in range(n, width):
            padded = padded.fix_val(isl.dim_type.out, k, 0)
        schedule = schedule.union(isl.UnionMap.from_map(padded))
    build = isl.AstBuild.from_context(isl.Set("{ : }", context=domain.get_ctx()))
    return build.node_from_schedule_map(schedule)


def count_executions(node: isl.AstNode, params: dict[str, int] | None = None) -> int:
    """How many times user statements run when the AST is executed."""
    run, _ = _node(node)
    return run(dict(params or {}))


def count_points(domain: isl.Set | isl.UnionSet, params: dict[str, int] | None = None) -> int:
    return count_executions(ast_for(domain), params)


def evaluate(expr: isl.AstExpr, values: dict[str, int] | None = None) -> int:
    """The integer value of an isl AST expression, with isl's division semantics; booleans are 0/1."""
    return _expr(expr)[0](dict(values or {}))


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _fold(f: Callable[[int, int], int], args: list[Fn]) -> Fn:
    first, rest = args[0], args[1:]

    def run(env: Env) -> int:
        acc = first(env)
        for a in rest:
            acc = f(acc, a(env))
        return acc
    return run


_BINARY: dict[object, Callable[[int, int], int]] = {
    _OP.add: lambda a, b: a + b,
    _OP.sub: lambda a, b: a - b,
    _OP.mul: lambda a, b: a * b,
    _OP.div: _tdiv,
    _OP.fdiv_q: lambda a, b: a // b,
    _OP.pdiv_q: lambda a, b: a // b,
    _OP.pdiv_r: lambda a, b: a % b,
    _OP.zdiv_r: lambda a, b: a % b,
    _OP.min: min,
    _OP.max: max,
    _OP.eq: lambda a, b: int(a == b),
    _OP.le: lambda a, b: int(a <= b),
    _OP.lt: lambda a, b: int(a < b),
    _OP.ge: lambda a, b: int(a >= b),
    _OP.gt: lambda a, b: int(a > b),
    _OP.and_: lambda a, b: int(bool(a and b)),
    _OP.or_: lambda a, b: int(bool(a or b)),
}


def _expr(e: isl.AstExpr) -> tuple[Fn, frozenset[str]]:
    """A closure evaluating `e` over an environment of iterator/parameter values, and the names it reads."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        value = e.get_val().to_python()
        return (lambda env: value), frozenset()
    if kind == isl.ast_expr_type.id:
        name = e.get_id().get_name()
        return itemgetter(name), frozenset([name])
    op = e.get_op_type()
    parts = [_expr(e.get_op_arg(i)) for i in range(e.get_op_n_arg())]
    args = [f for f, _ in parts]
    names = frozenset().union(*(n for _, n in parts))
    if op == _OP.minus:
        (a,) = args
        return (lambda env: -a(env)), names
    if op in (_OP.cond, _OP.select):
        c, t, f = args
        return (lambda env: t(env) if c(env) else f(env)), names
    if op == _OP.and_then:
        a, b = args
        return (lambda env: int(bool(a(env) and b(env)))), names
    if op == _OP.or_else:
        a, b = args
        return (lambda env: int(bool(a(env) or b(env)))), names
    if op in _BINARY:
        return _fold(_BINARY[op], args), names
    raise ValueError(f"unsupported isl AST expression {e.to_C_str()!r}")


def _upper_bound(cond: isl.AstExpr, it: str) -> tuple[Fn, int] | None:
    """(e, slack) if `cond` reads `it <= e - slack` with `e` free of `it`, else None."""
    if cond.get_type() != isl.ast_expr_type.op:
        return None
    op = cond.get_op_type()
    if op in (_OP.and_, _OP.and_then):
        bounds = [_upper_bound(cond.get_op_arg(i), it) for i in range(cond.get_op_n_arg())]
        if any(b is None for b in bounds):
            return None
        fns = [(lambda env, f=f, s=s: f(env) - s) for f, s in bounds]
        return _fold(min, fns), 0
    orient = {_OP.le: (0, 0), _OP.lt: (0, 1), _OP.ge: (1, 0), _OP.gt: (1, 1)}
    if op not in orient:
        return None
    side, slack = orient[op]
    var, bound = cond.get_op_arg(side), cond.get_op_arg(1 - side)
    if var.get_type() != isl.ast_expr_type.id or var.get_id().get_name() != it:
        return None
    fn, names = _expr(bound)
    return None if it in names else (fn, slack)


def _node(n: isl.AstNode) -> tuple[Fn, frozenset[str]]:
    """A closure returning how many user statements `n` runs, and the names it reads."""
    kind = n.get_type()
    if kind == _NODE.user:
        return (lambda env: 1), frozenset()
    if kind == _NODE.mark:
        return _node(n.mark_get_node())
    if kind == _NODE.block:
        children = n.block_get_children()
        parts = [_node(children.get_at(i)) for i in range(children.n_ast_node())]
        fns = [f for f, _ in parts]
        return (lambda env: sum(f(env) for f in fns)), frozenset().union(*(s for _, s in parts))
    if kind == _NODE.if_:
        cond, cond_names = _expr(n.if_get_cond())
        then, then_names = _node(n.if_get_then_node())
        other, other_names = _node(n.if_get_else_node()) if n.if_has_else_node() else ((lambda env: 0), frozenset())
        return (lambda env: then(env) if cond(env) else other(env)), cond_names | then_names | other_names
    if kind == _NODE.for_:
        return _for(n)
    raise ValueError(f"unsupported isl AST node {n.to_C_str()!r}")


def _for(n: isl.AstNode) -> tuple[Fn, frozenset[str]]:
    it = n.for_get_iterator().get_id().get_name()
    init, init_names = _expr(n.for_get_init())
    cond, cond_names = _expr(n.for_get_cond())
    inc, inc_names = _expr(n.for_get_inc())
    body, body_names = _node(n.for_get_body())
    names = (init_names | cond_names | inc_names | body_names) - {it}
    bound = _upper_bound(n.for_get_cond(), it) if it not in inc_names else None

    def values(env: Env) -> range | list[int]:
        start, step = init(env), inc(env)
        if bound is not None and step > 0:
            return range(start, bound[0](env) - bound[1] + 1, step)
        out, env[it] = [], start
        while cond(env):
            out.append(env[it])
            env[it] += inc(env)
        return out

    def run(env: Env) -> int:
        span = values(env)
        if it not in body_names:
            return len(span) * body(env) if span else 0
        total = 0
        for value in span:
            env[it] = value
            total += body(env)
        return total
    return run, names
