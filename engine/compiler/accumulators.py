"""Scalar accumulators -> the array element they end in (a source-to-source step on the C AST).

    float acc = 0;                          C[i][j] = 0;
    for (k...) acc += A[i][k] * B[k][j];    for (k...) C[i][j] += A[i][k] * B[k][j];
    C[i][j] = acc;                   ->

This undoes the scalar replacement people write by hand, so that the accumulation becomes a
reduction on C that the polyhedral model sees. It applies only when C[i][j] is not touched between
the initialisation and the final store and the scalar is not used after the store.
"""
from __future__ import annotations

import copy

from pycparser import c_ast


def promote_accumulators(items: list[c_ast.Node], scalars: set[str]) -> list[c_ast.Node]:
    """Rewrite one block's items (recursing into nested blocks); `scalars` are the candidate names."""
    items = [_recurse(item, scalars) for item in items]
    changed = True
    while changed:
        changed = False
        for store_at, item in enumerate(items):
            promoted = _try_promote(items, store_at, item, scalars)
            if promoted is not None:
                items = promoted
                changed = True
                break
    return items


def _recurse(node: c_ast.Node, scalars: set[str]) -> c_ast.Node:
    if isinstance(node, c_ast.Compound) and node.block_items:
        node = copy.copy(node)
        node.block_items = promote_accumulators(node.block_items, scalars)
    elif isinstance(node, c_ast.For) and node.stmt is not None:
        node = copy.copy(node)
        node.stmt = _recurse(node.stmt, scalars)
    elif isinstance(node, c_ast.If):
        node = copy.copy(node)
        node.iftrue = _recurse(node.iftrue, scalars) if node.iftrue else None
        node.iffalse = _recurse(node.iffalse, scalars) if node.iffalse else None
    return node


def _try_promote(items, store_at, item, scalars) -> list[c_ast.Node] | None:
    if not (isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.rvalue, c_ast.ID)
            and isinstance(item.lvalue, c_ast.ArrayRef) and item.rvalue.name in scalars):
        return None
    name, target = item.rvalue.name, item.lvalue
    init_at = next((j for j in range(store_at - 1, -1, -1) if _initialises(items[j], name)), None)
    if init_at is None:
        return None
    between = items[init_at + 1:store_at]
    if not any(_accumulates(node, name) for node in between):
        return None
    array = _base_name(target)
    if any(array in _names_in(node) for node in items[init_at:store_at]):
        return None
    if any(name in _names_in(node) for node in items[store_at + 1:]):
        return None
    init = items[init_at]
    if isinstance(init, c_ast.Decl):
        if init.init is None:
            return None
        init = c_ast.Assignment("=", copy.deepcopy(target), init.init, init.coord)
    rewritten = [_replace_id(node, name, target) for node in [init, *between]]
    return [*items[:init_at], *rewritten, *items[store_at + 1:]]


def _initialises(node: c_ast.Node, name: str) -> bool:
    if isinstance(node, c_ast.Decl) and node.name == name:
        return True
    return (isinstance(node, c_ast.Assignment) and node.op == "=" and isinstance(node.lvalue, c_ast.ID)
            and node.lvalue.name == name and name not in _names_in(node.rvalue))


def _accumulates(node: c_ast.Node, name: str) -> bool:
    for child in _walk(node):
        if isinstance(child, c_ast.Assignment) and isinstance(child.lvalue, c_ast.ID) \
                and child.lvalue.name == name and (child.op != "=" or name in _names_in(child.rvalue)):
            return True
    return False


def _base_name(ref: c_ast.Node) -> str:
    while isinstance(ref, c_ast.ArrayRef):
        ref = ref.name
    return ref.name if isinstance(ref, c_ast.ID) else ""


def _walk(node: c_ast.Node):
    yield node
    for _, child in node.children():
        yield from _walk(child)


def _names_in(node: c_ast.Node) -> set[str]:
    return {n.name for n in _walk(node) if isinstance(n, c_ast.ID)}


class _IdReplacer(c_ast.NodeVisitor):
    def __init__(self, name: str, target: c_ast.Node):
        self.name, self.target = name, target

    def generic_visit(self, node):
        for attr in getattr(node, "__slots__", ()):
            child = getattr(node, attr, None)
            if isinstance(child, c_ast.ID) and child.name == self.name:
                setattr(node, attr, copy.deepcopy(self.target))
            elif isinstance(child, c_ast.Node):
                self.visit(child)
            elif isinstance(child, list):
                for k, item in enumerate(child):
                    if isinstance(item, c_ast.ID) and item.name == self.name:
                        child[k] = copy.deepcopy(self.target)
                    elif isinstance(item, c_ast.Node):
                        self.visit(item)


def _replace_id(node: c_ast.Node, name: str, target: c_ast.Node) -> c_ast.Node:
    node = copy.deepcopy(node)
    if isinstance(node, c_ast.ID) and node.name == name:
        return copy.deepcopy(target)
    _IdReplacer(name, target).visit(node)
    return node
