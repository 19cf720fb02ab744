"""pycparser expression nodes -> IR: affine forms for bounds and subscripts, expression trees for values.

Every rejection names the construct and says what would be accepted instead.
"""
from __future__ import annotations

from typing import Callable

from pycparser import c_ast
from pycparser.c_generator import CGenerator

from engine.compiler.ir import Access, Affine, BinOp, Call, Const, Expr, IterRef, Ref, UnaryOp
from engine.compiler.preprocess import source_name
from engine.errors import KernelError, SourceLocation

_GENERATOR = CGenerator()
# Math-library calls accepted in the scop, as operators with their own cost (resources/operators.json).
MATH_CALLS = {"sqrt": "sqrt", "sqrtf": "sqrt", "fabs": "abs", "fabsf": "abs"}


def location_of(node: c_ast.Node | None, fallback: str = "") -> SourceLocation:
    coord = getattr(node, "coord", None)
    if coord is None:
        return SourceLocation(fallback)
    return SourceLocation(source_name(coord.file), coord.line, coord.column)


def c_text(node: c_ast.Node) -> str:
    return _GENERATOR.visit(node)


def parse_int_constant(node: c_ast.Constant) -> int | None:
    if not node.type.endswith("int") and node.type not in ("long", "short", "char"):
        return None
    text = node.value.rstrip("uUlL")
    if node.type == "char":
        return None
    return int(text, 0) if not (len(text) > 1 and text[0] == "0" and text[1:].isdigit()) else int(text, 8)


def constant_value(node: c_ast.Node) -> int:
    """Evaluate an integer constant expression (array sizes after macro expansion)."""
    if isinstance(node, c_ast.Constant):
        value = parse_int_constant(node)
        if value is not None:
            return value
    elif isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        value = constant_value(node.expr)
        return -value if node.op == "-" else value
    elif isinstance(node, c_ast.BinaryOp) and node.op in _INT_OPS:
        return _INT_OPS[node.op](constant_value(node.left), constant_value(node.right))
    elif isinstance(node, c_ast.ID):
        raise KernelError(f"'{node.name}' has no value: define it (#define {node.name} 64) "
                          f"or pass -D {node.name}=<value>", location_of(node))
    raise KernelError(f"'{c_text(node)}' is not an integer constant expression", location_of(node))


def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _c_div, "%": lambda a, b: a - _c_div(a, b) * b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
}


def to_affine(node: c_ast.Node, iterators: set[str], what: str) -> Affine:
    """An affine form over loop iterators; `what` says where it stands (for messages)."""
    if isinstance(node, c_ast.Constant):
        value = parse_int_constant(node)
        if value is None:
            raise KernelError(f"{what} '{c_text(node)}' must be an integer", location_of(node))
        return Affine.of({}, value)
    if isinstance(node, c_ast.ID):
        if node.name in iterators:
            return Affine.var(node.name)
        raise KernelError(f"'{node.name}' in {what} is neither an enclosing loop iterator nor a defined "
                          f"size: define it (#define {node.name} 64) or pass -D {node.name}=<value>",
                          location_of(node))
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        inner = to_affine(node.expr, iterators, what)
        return -inner if node.op == "-" else inner
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
        left = to_affine(node.left, iterators, what)
        right = to_affine(node.right, iterators, what)
        return left + right if node.op == "+" else left - right
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        left = to_affine(node.left, iterators, what)
        right = to_affine(node.right, iterators, what)
        if left.is_constant():
            return right.scaled(left.const)
        if right.is_constant():
            return left.scaled(right.const)
    if isinstance(node, c_ast.BinaryOp) and node.op in ("/", "%", "<<", ">>"):
        left = to_affine(node.left, iterators, what)
        right = to_affine(node.right, iterators, what)
        if left.is_constant() and right.is_constant():
            try:
                return Affine.of({}, _INT_OPS[node.op](left.const, right.const))
            except ZeroDivisionError:
                raise KernelError(f"division by zero in {what}", location_of(node)) from None
    raise KernelError(f"{what} '{c_text(node)}' is not affine: use sums of loop iterators times "
                      f"integer constants plus a constant", location_of(node))


def reject_unsupported(node: c_ast.Node, context: str) -> KernelError:
    """The error for a construct the polyhedral front end cannot take."""
    loc = location_of(node)
    if isinstance(node, c_ast.FuncCall):
        name = c_text(node.name)
        return KernelError(f"call to '{name}' in {context}: function calls are not supported inside "
                           f"the scop except {', '.join(sorted(MATH_CALLS))}; write the computation with "
                           f"+ - * / on array elements", loc)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("*", "&"):
        return KernelError(f"pointer expression '{c_text(node)}' in {context}: pointers are not "
                           f"supported; index declared arrays with affine subscripts", loc)
    if isinstance(node, c_ast.StructRef):
        return KernelError(f"'{c_text(node)}' in {context}: structs and pointers are not supported", loc)
    if isinstance(node, (c_ast.While, c_ast.DoWhile)):
        return KernelError("while loops are not supported: write a for loop with affine bounds "
                           "(for (int i = 0; i < N; i++))", loc)
    return KernelError(f"'{c_text(node)}' ({type(node).__name__}) is not supported in {context}", loc)


class ExpressionBuilder:
    """Turns right-hand sides into IR, resolving iterators, temporaries and read-only scalars."""

    def __init__(self, iterators: set[str], temporaries: dict[str, Expr],
                 resolve_array: Callable[[c_ast.ID], tuple[str, int]]):
        self.iterators = iterators
        self.temporaries = temporaries
        self.resolve_array = resolve_array  # name -> (array name, rank); raises if unknown

    def access(self, node: c_ast.ArrayRef | c_ast.ID) -> Access:
        subscripts: list[c_ast.Node] = []
        base = node
        while isinstance(base, c_ast.ArrayRef):
            subscripts.append(base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID):
            raise reject_unsupported(base, "an array reference")
        name, rank = self.resolve_array(base)
        subscripts.reverse()
        if len(subscripts) != rank:
            raise KernelError(f"'{c_text(node)}' uses {len(subscripts)} subscripts but '{name}' has "
                              f"{rank} dimensions", location_of(node))
        index = tuple(to_affine(s, self.iterators, "array subscript") for s in subscripts)
        return Access(name, index)

    def expr(self, node: c_ast.Node) -> Expr:
        if isinstance(node, c_ast.Constant):
            if node.type in ("string", "char"):
                raise KernelError(f"'{node.value}' is not a number", location_of(node))
            return Const(_number(node), node.value)
        if isinstance(node, c_ast.ID):
            if node.name in self.iterators:
                return IterRef(node.name)
            if node.name in self.temporaries:
                return self.temporaries[node.name]
            return Ref(self.access(node))
        if isinstance(node, c_ast.ArrayRef):
            return Ref(self.access(node))
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/", "%"):
            return BinOp(node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            inner = self.expr(node.expr)
            return UnaryOp("-", inner) if node.op == "-" else inner
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) \
                and node.name.name in MATH_CALLS:
            args = node.args.exprs if node.args else []
            if len(args) != 1:
                raise KernelError(f"'{c_text(node)}': {node.name.name} takes one argument", location_of(node))
            return Call(node.name.name, MATH_CALLS[node.name.name], (self.expr(args[0]),))
        if isinstance(node, c_ast.Cast):
            return UnaryOp(f"({c_text(node.to_type)})", self.expr(node.expr))
        raise reject_unsupported(node, "an expression")


def _number(node: c_ast.Constant) -> int | float:
    value = parse_int_constant(node)
    if value is not None:
        return value
    return float(node.value.rstrip("fFlL"))
