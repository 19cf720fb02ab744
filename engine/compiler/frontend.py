"""C kernel file -> Kernel IR: preprocess, parse with pycparser, and read the `#pragma scop` region.

Accepted inside the scop: `for` loops with unit step and affine bounds (either `for (int i = 0; ...)`
or `for (i = 0; ...)`), `if`/`else` with affine conditions (comparisons joined by `&&`, `||`, `!`),
assignments to array elements (`=`, `+=`, `-=`, `*=`) whose values use + - * / and sqrt/fabs,
scalar temporaries (inlined where used), scalar accumulators (promoted to the array element they
are stored into) and local array declarations (on-chip arrays of the design, `ArrayDecl.local`).
An `else` runs under the negation of the `if`'s condition: a union of disjoint convex pieces
(`k != 0` is `k >= 1` or `k <= -1`), one copy of each statement per piece that the enclosing loops
do not make empty; `!=`, `||` and `!` in conditions are split the same way. A branch the loops never
reach is dropped. Everything else is a KernelError with file:line:column.

pycparser parses and prints by recursion, a few frames per level of nesting: the front end runs
with a recursion limit of RECURSION_LIMIT (Python 3.11 keeps Python-to-Python calls off the C stack),
enough for a few hundred nested parentheses or blocks or terms of a sum; deeper nesting is a
one-line KernelError naming the deepest line.
"""
from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from pathlib import Path

import pycparser
from pycparser import c_ast

from engine.compiler.accumulators import promote_accumulators
from engine.compiler.c_expressions import (ExpressionBuilder, c_text, constant_value, location_of,
                                           reject_unsupported, to_affine)
from engine.compiler.ir import Affine, ArrayDecl, BinOp, Expr, Guard, Kernel, Loop, Ref, Statement, expr_refs
from engine.compiler.isl_helpers import domain_set
from engine.compiler.preprocess import preprocess
from engine.compiler.syntax_errors import syntax_error
from engine.errors import KernelError, SourceLocation
from engine.validation import read_json

_TYPE_NAMES = {
    "float": "float", "double": "double",
    "int": "int32", "signed int": "int32", "int32_t": "int32", "long": "int64", "int64_t": "int64",
    "unsigned int": "uint32", "unsigned": "uint32", "uint32_t": "uint32",
    "short": "int16", "short int": "int16", "signed short": "int16", "int16_t": "int16",
    "unsigned short": "uint16", "uint16_t": "uint16",
    "char": "int8", "signed char": "int8", "int8_t": "int8", "unsigned char": "uint8", "uint8_t": "uint8",
}
_ACCEPTED_TYPES = "float, double, int, int16_t/short, int8_t/char (or their unsigned forms)"
_PRAGMA_REDUCTION = re.compile(r"^\s*systolic\s+reduction\s*\(([^)]*)\)\s*$")
RECURSION_LIMIT = 12_000


@contextmanager
def _deep_recursion(limit: int):
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def parse_kernel(path: str | Path, *, defines=None, simd_info: str | Path | None = None,
                 scop: int | None = None) -> Kernel:
    """Read a kernel file. `defines` are -D overrides; `simd_info` is an AutoSA-style reduction file;
    `scop` picks the scop region (1 = the first in the file) of a file with several: without it such
    a file is refused with a list of its regions."""
    pre = preprocess(path, defines)
    try:
        with _deep_recursion(RECURSION_LIMIT):
            return _parse(path, pre, simd_info, scop)
    except RecursionError:
        depth, line = _deepest_nesting(pre.source)
        if depth <= 50:  # not nesting: a long expression, on the longest line
            lines = pre.source.splitlines() or [""]
            line = max(range(len(lines)), key=lambda n: len(lines[n])) + 1
        what = (f"nests parentheses, brackets or blocks {depth} deep" if depth > 50 else
                "holds an expression too long")
        raise KernelError(f"the kernel {what} for the C parser (it recurses once per level; keep nesting "
                          f"under about 300 levels and sums under about 1,000 terms)",
                          SourceLocation(pre.path, line)) from None


def _deepest_nesting(source: str) -> tuple[int, int | None]:
    """(deepest nesting of ( [ {, its line) in C source (comments and strings not skipped: a hint)."""
    depth = deepest = 0
    line = where = 1
    for char in source:
        if char in "([{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif char in ")]}":
            depth -= 1
        elif char == "\n":
            line += 1
    return deepest, where if deepest else None


def _parse(path, pre, simd_info, scop: int | None) -> Kernel:
    parser = pycparser.CParser()
    try:
        ast = parser.parse(pre.text, pre.path)
    except pycparser.c_parser.ParseError as exc:
        raise syntax_error(exc, parser, pre.path) from None
    declared, flags = _declared_reductions(ast), ()
    if simd_info is not None:
        named, flags = _reductions_from_simd_info(Path(simd_info))
        declared |= named
    scop, function, scop_loc = _find_scop(ast, pre.path, scop)
    declarations = _Declarations(ast, function)
    builder = _ScopBuilder(declarations)
    builder.block(promote_accumulators(scop, builder.scalar_names(scop)), (), (), ())
    if not builder.statements:
        raise KernelError("the scop region holds no statement: put the loop nest between "
                          "#pragma scop and #pragma endscop", scop_loc)
    local = {n.name for item in scop for n in _walk(item)
             if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.ArrayDecl)}
    arrays = {name: declarations.array(name, local=name in local) for name in builder.used_arrays}
    used_sizes = {k: v for k, v in pre.sizes.items() if re.search(rf"\b{re.escape(k)}\b", pre.source)}
    return Kernel(name=Path(path).stem, path=str(path), source=pre.source, sizes=used_sizes,
                  arrays=arrays, statements=tuple(builder.statements), scop_location=scop_loc,
                  declared_reduction_loops=frozenset(declared), declared_reduction_flags=flags)


def _declared_reductions(ast: c_ast.FileAST) -> set[str]:
    loops: set[str] = set()
    for node in _walk(ast):
        if isinstance(node, c_ast.Pragma):
            match = _PRAGMA_REDUCTION.match(node.string)
            if match:
                names = [name.strip() for name in match.group(1).split(",")]
                if not names or not all(name.isidentifier() for name in names):
                    raise KernelError(f"'#pragma {node.string.strip()}': expected loop names, e.g. "
                                      f"#pragma systolic reduction(k)", location_of(node))
                loops |= set(names)
            elif re.match(r"\s*systolic\b", node.string):
                raise KernelError(f"unknown '#pragma {node.string.strip()[:60]}': the systolic pragma is "
                                  f"'#pragma systolic reduction(LOOP, ...)'", location_of(node))
    return loops


def _reductions_from_simd_info(path: Path) -> tuple[set[str], tuple[bool, ...]]:
    """AutoSA's simd_info.json, `{"kernel3": {"reduction": ["y"]}}` -> (loop names, y/n flags).

    AutoSA lists one "y"/"n" flag per candidate loop; the flags apply, in source order, to the loops
    a statement's own target does not use (for MM: k). Loop names are accepted too and say the same
    without depending on that order.
    """
    info = read_json(path, "reduction file", error=KernelError)
    loops: set[str] = set()
    flags: list[bool] = []
    for entry in info.values() if isinstance(info, dict) else []:
        for item in (entry or {}).get("reduction", []) if isinstance(entry, dict) else []:
            if item in ("y", "n"):
                flags.append(item == "y")
            elif isinstance(item, str) and item.isidentifier():
                loops.add(item)
            else:
                raise KernelError(f'reduction entries are "y"/"n" flags or loop names, e.g. '
                                  f'{{"kernel": {{"reduction": ["y"]}}}}; got {item!r}', SourceLocation(str(path)))
    return loops, tuple(flags)


def _walk(node: c_ast.Node):
    yield node
    for _, child in node.children():
        yield from _walk(child)


def _find_scop(ast: c_ast.FileAST, path: str, chosen: int | None = None):
    """(the items of the chosen scop region, its function, its location); `chosen`: 1-based, in the
    order the regions appear in the file."""
    found = []
    for func in ast.ext:
        if not isinstance(func, c_ast.FuncDef):
            continue
        for node in _walk(func.body):
            if isinstance(node, c_ast.Compound) and node.block_items:
                items = node.block_items
                starts = [k for k, item in enumerate(items)
                          if isinstance(item, c_ast.Pragma) and item.string.strip() == "scop"]
                for start in starts:
                    end = next((k for k in range(start + 1, len(items))
                                if isinstance(items[k], c_ast.Pragma)
                                and items[k].string.strip() == "endscop"), None)
                    if end is None:
                        raise KernelError("#pragma scop without a matching #pragma endscop in the same "
                                          "block", location_of(items[start]))
                    found.append((items[start + 1:end], func, location_of(items[start])))
    if not found:
        raise KernelError("no #pragma scop region: mark the loop nest to map with '#pragma scop' "
                          "before it and '#pragma endscop' after it", SourceLocation(path))
    regions = "; ".join(f"scop {n} at line {loc.line} (in {func.decl.name})"
                        for n, (_, func, loc) in enumerate(found, 1))
    if chosen is None and len(found) > 1:
        raise KernelError(f"{len(found)} #pragma scop regions: {regions}; choose one with --scop N",
                          found[1][2])
    if chosen is not None and not 1 <= chosen <= len(found):
        raise KernelError(f"--scop {chosen}: the file has {len(found)} #pragma scop region"
                          f"{'s' if len(found) > 1 else ''} (1..{len(found)}): {regions}", SourceLocation(path))
    items, func, loc = found[(chosen or 1) - 1]
    items = [item for item in items if not isinstance(item, c_ast.Pragma)]
    if not items:
        raise KernelError("the scop region is empty: put the loop nest between #pragma scop and "
                          "#pragma endscop", loc)
    return items, func, loc


class _Declarations:
    """Typedefs, arrays and scalars visible at the scop: globals, the function's parameters and locals."""

    def __init__(self, ast: c_ast.FileAST, function: c_ast.FuncDef):
        self.typedefs: dict[str, c_ast.Node] = {}
        self.decls: dict[str, c_ast.Decl] = {}
        for ext in ast.ext:
            if isinstance(ext, c_ast.Typedef):
                self.typedefs[ext.name] = ext.type
            elif isinstance(ext, c_ast.Decl) and ext.name and not isinstance(ext.type, c_ast.FuncDecl):
                self.decls[ext.name] = ext
        params = function.decl.type.args.params if function.decl.type.args else []
        for param in params:
            if isinstance(param, c_ast.Decl) and param.name:
                self.decls[param.name] = param
        for node in _walk(function.body):
            if isinstance(node, c_ast.Decl) and node.name and node.name not in self.decls:
                self.decls[node.name] = node

    def rank(self, ident: c_ast.ID) -> int:
        decl = self.decls.get(ident.name)
        if decl is None:
            raise KernelError(f"'{ident.name}' is not declared: declare the array with constant sizes "
                              f"(e.g. float {ident.name}[N][N];) or define the size", location_of(ident))
        node, rank = decl.type, 0
        while isinstance(node, c_ast.ArrayDecl):
            rank += 1
            node = node.type
        if isinstance(node, c_ast.PtrDecl):
            raise KernelError(f"'{ident.name}' is a pointer: declare it as an array with constant sizes "
                              f"(e.g. float {ident.name}[N][N])", location_of(ident))
        return rank

    def array(self, name: str, *, local: bool = False) -> ArrayDecl:
        decl = self.decls[name]
        node, shape = decl.type, []
        while isinstance(node, c_ast.ArrayDecl):
            if node.dim is None:
                raise KernelError(f"array '{name}' needs a constant size in every dimension",
                                  location_of(decl))
            shape.append(constant_value(node.dim))
            node = node.type
        return ArrayDecl(name, self._dtype(node, decl), tuple(shape), location_of(decl), local)

    def _dtype(self, node: c_ast.Node, decl: c_ast.Decl) -> str:
        while isinstance(node, c_ast.TypeDecl):
            node = node.type
        if isinstance(node, c_ast.IdentifierType):
            names = " ".join(node.names)
            if names in _TYPE_NAMES:
                return _TYPE_NAMES[names]
            if len(node.names) == 1 and names in self.typedefs:
                return self._dtype(self.typedefs[names], decl)
        raise KernelError(f"'{decl.name}' has element type '{c_text(node) if node else '?'}', which is "
                          f"not supported: use {_ACCEPTED_TYPES}", location_of(decl))


class _ScopBuilder:
    """Walks the scop's statements, keeping the loop stack, guards and textual positions."""

    def __init__(self, declarations: _Declarations):
        self.declarations = declarations
        self.statements: list[Statement] = []
        self.used_arrays: dict[str, None] = {}
        self.loop_uid = 0
        self.assigned_scalars: set[str] = set()

    def scalar_names(self, items) -> set[str]:
        names = {n.name for item in items for n in _walk(item) if isinstance(n, c_ast.Decl) and n.name}
        names |= {name for name, decl in self.declarations.decls.items()
                  if isinstance(decl.type, c_ast.TypeDecl)}
        return names

    # -- blocks and loops -------------------------------------------------------------------------
    # `prefix` holds the textual position at each enclosing loop depth; `counter` numbers the
    # siblings at the current depth and is shared by the bodies of `if`s and bare `{}` blocks.
    def block(self, items, loops: tuple[Loop, ...], guards: tuple[Guard, ...], prefix: tuple[int, ...],
              temporaries: dict[str, Expr] | None = None, counter: list[int] | None = None) -> None:
        temporaries = dict(temporaries or {}) if counter is None else temporaries
        counter = [0] if counter is None else counter
        for item in items:
            if isinstance(item, c_ast.Decl) and isinstance(item.type, c_ast.ArrayDecl):
                if item.init is not None:
                    raise KernelError(f"local array '{item.name}' has an initialiser: assign its elements "
                                      f"in the loops instead", location_of(item))
                continue  # a local array: _Declarations knows it, the arrays map marks it local
            if isinstance(item, c_ast.Decl) and not isinstance(item.type, c_ast.FuncDecl):
                if item.init is not None:
                    self.temporary(item.name, item.init, loops, temporaries, item)
                continue
            if isinstance(item, c_ast.Assignment) and isinstance(item.lvalue, c_ast.ID):
                self.temporary(item.lvalue.name, item, loops, temporaries, item)
            elif isinstance(item, c_ast.For):
                self.for_loop(item, loops, guards, prefix + (counter[0],), temporaries)
                counter[0] += 1
            elif isinstance(item, c_ast.Compound):
                self.block(item.block_items or [], loops, guards, prefix, temporaries, counter)
            elif isinstance(item, c_ast.If):
                condition = self.conditions(item.cond, loops, guards)
                # a branch (or a piece of a split condition) that the enclosing loops and guards
                # never reach is dead code and dropped, as a C compiler would
                branches = [(condition, item.iftrue)]
                if item.iffalse is not None:
                    branches.append((_negation(condition, (loops, guards)), item.iffalse))
                for pieces, branch in branches:
                    for piece in pieces:
                        if not _is_empty(loops, guards + piece):
                            self.block(_body(branch), loops, guards + piece, prefix, dict(temporaries), counter)
            elif isinstance(item, c_ast.Assignment):
                self.assignment(item, loops, guards, prefix + (counter[0],), temporaries)
                counter[0] += 1
            elif not isinstance(item, c_ast.EmptyStatement):
                raise reject_unsupported(item, "the scop")

    def for_loop(self, node: c_ast.For, loops, guards, prefix, temporaries) -> None:
        outer = {loop.name for loop in loops}
        name, lower = self.loop_init(node)
        if name in outer:
            raise KernelError(f"loop variable '{name}' is already used by an enclosing loop", location_of(node))
        upper = self.loop_upper(node, name, outer)
        self.loop_step(node, name)
        self.loop_uid += 1
        loop = Loop(name, to_affine(lower, outer, "loop lower bound"), upper, self.loop_uid, location_of(node))
        body = node.stmt.block_items if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
        self.block(body or [], loops + (loop,), guards, prefix, temporaries)

    def loop_init(self, node: c_ast.For) -> tuple[str, c_ast.Node]:
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            return init.decls[0].name, init.decls[0].init
        if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            return init.lvalue.name, init.rvalue
        raise KernelError("loop must start with 'int i = <affine>' or 'i = <affine>'", location_of(node))

    def loop_upper(self, node: c_ast.For, name: str, outer: set[str]) -> Affine:
        cond = node.cond
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">="):
            left_is_var = isinstance(cond.left, c_ast.ID) and cond.left.name == name
            right_is_var = isinstance(cond.right, c_ast.ID) and cond.right.name == name
            if left_is_var and cond.op in ("<", "<="):
                bound, inclusive = cond.right, cond.op == "<="
            elif right_is_var and cond.op in (">", ">="):
                bound, inclusive = cond.left, cond.op == ">="
            else:
                bound = None
            if bound is not None:
                if name in {n.name for n in _walk(bound) if isinstance(n, c_ast.ID)}:
                    raise KernelError(f"the bound of loop '{name}' uses '{name}' itself: bounds may use "
                                      f"only enclosing loop iterators and sizes", location_of(bound))
                upper = to_affine(bound, outer, "loop upper bound")
                return upper + Affine.of({}, 1) if inclusive else upper
        raise KernelError(f"loop condition must be '{name} < <affine>' or '{name} <= <affine>'",
                          location_of(cond or node))

    def loop_step(self, node: c_ast.For, name: str) -> None:
        step = node.next
        ok = (isinstance(step, c_ast.UnaryOp) and step.op in ("p++", "++")
              and isinstance(step.expr, c_ast.ID) and step.expr.name == name)
        if isinstance(step, c_ast.Assignment) and isinstance(step.lvalue, c_ast.ID) and step.lvalue.name == name:
            rhs = c_text(step.rvalue).replace(" ", "")
            ok = (step.op == "+=" and rhs == "1") or (step.op == "=" and rhs in (f"{name}+1", f"1+{name}"))
        if not ok:
            raise KernelError(f"loop step must be {name}++ (unit stride)", location_of(step or node))

    def conditions(self, cond: c_ast.Node, loops: tuple[Loop, ...], guards: tuple[Guard, ...] = ()
                   ) -> list[tuple[Guard, ...]]:
        """An affine condition as disjoint conjunctions of guards (one piece unless it has ||, != or !),
        pieces the enclosing loops and guards leave empty dropped (see _prune)."""
        iterators = {loop.name for loop in loops}
        context = (loops, guards)
        if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
            return _prune(context, _and(self.conditions(cond.left, loops, guards),
                                        self.conditions(cond.right, loops, guards)))
        if isinstance(cond, c_ast.BinaryOp) and cond.op == "||":
            left = self.conditions(cond.left, loops, guards)
            right = _prune(context, _and(_negation(left, context), self.conditions(cond.right, loops, guards)))
            return _prune(context, left + right)
        if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
            return _negation(self.conditions(cond.expr, loops, guards), context)
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "==", "!="):
            left = to_affine(cond.left, iterators, "condition")
            right = to_affine(cond.right, iterators, "condition")
            one = Affine.of({}, 1)
            if cond.op == "!=":
                return [(Guard(left - right - one),), (Guard(right - left - one),)]
            return [({"<": Guard(right - left - one), "<=": Guard(right - left),
                      ">": Guard(left - right - one), ">=": Guard(left - right),
                      "==": Guard(left - right, equality=True)}[cond.op],)]
        raise KernelError(f"condition '{c_text(cond)}' is not supported: use affine comparisons "
                          f"(< <= > >= == !=) joined by &&, || and !", location_of(cond))

    # -- statements -------------------------------------------------------------------------------
    def expressions(self, loops, temporaries) -> ExpressionBuilder:
        return ExpressionBuilder({l.name for l in loops}, temporaries, self.resolve_array)

    def resolve_array(self, ident: c_ast.ID) -> tuple[str, int]:
        if ident.name in self.assigned_scalars:
            raise KernelError(f"scalar '{ident.name}' is read where its value is not known (it is "
                              f"assigned in another block, or an array it reads was written since): "
                              f"compute it in the same block before its use", location_of(ident))
        rank = self.declarations.rank(ident)
        self.used_arrays[ident.name] = None
        return ident.name, rank

    def temporary(self, name: str, node, loops, temporaries: dict[str, Expr], where) -> None:
        value_node = node.rvalue if isinstance(node, c_ast.Assignment) else node
        op = node.op if isinstance(node, c_ast.Assignment) else "="
        if op != "=" or name in {n.name for n in _walk(value_node) if isinstance(n, c_ast.ID)}:
            raise KernelError(f"scalar '{name}' carries a value from one iteration to the next: "
                              f"accumulate into an array element instead (e.g. C[i][j] += ...)",
                              location_of(where))
        if name in {loop.name for loop in loops}:
            raise KernelError(f"loop variable '{name}' is assigned inside its loop", location_of(where))
        temporaries[name] = self.expressions(loops, temporaries).expr(value_node)
        self.assigned_scalars.add(name)

    def assignment(self, node: c_ast.Assignment, loops, guards, position, temporaries) -> None:
        if node.op not in ("=", "+=", "-=", "*="):
            raise KernelError(f"assignment '{node.op}' is not supported: use =, +=, -= or *=",
                              location_of(node))
        if not isinstance(node.lvalue, c_ast.ArrayRef):
            raise reject_unsupported(node.lvalue, "an assignment target")
        builder = self.expressions(loops, temporaries)
        target = builder.access(node.lvalue)
        value = builder.expr(node.rvalue)
        if node.op != "=":
            value = BinOp(node.op[0], Ref(target), value)
        for name, expr in list(temporaries.items()):  # a later store may change a temporary's operands
            if any(ref.array == target.array for ref in _refs(expr)):
                del temporaries[name]
        self.statements.append(Statement(
            name=f"S{len(self.statements)}", loops=loops, guards=guards, target=target, expr=value,
            position=position, location=location_of(node), text=c_text(node) + ";"))


def _body(node: c_ast.Node) -> list:
    return (node.block_items or []) if isinstance(node, c_ast.Compound) else [node]


def _and(left: list[tuple[Guard, ...]], right: list[tuple[Guard, ...]]) -> list[tuple[Guard, ...]]:
    return [a + b for a in left for b in right]


def _negation(pieces: list[tuple[Guard, ...]], context) -> list[tuple[Guard, ...]]:
    """not (p1 or p2 ...) = (not p1) and (not p2) ..., each `not p` as disjoint convex pieces:
    not (g1 and g2 ...) = (not g1) or (g1 and not g2) or ..., and e != 0 is e >= 1 or e <= -1."""
    one = Affine.of({}, 1)
    result: list[tuple[Guard, ...]] = [()]
    for piece in pieces:
        negated: list[tuple[Guard, ...]] = []
        for m, guard in enumerate(piece):
            if guard.equality:
                opposite = [Guard(guard.expr - one), Guard(-guard.expr - one)]
            else:  # not (e >= 0): -e - 1 >= 0
                opposite = [Guard(-guard.expr - one)]
            negated += [tuple(piece[:m]) + (g,) for g in opposite]
        result = _prune(context, _and(result, negated))
    return result


def _prune(context, pieces: list[tuple[Guard, ...]]) -> list[tuple[Guard, ...]]:
    """Drop the pieces the loops and guards of `context` make empty (which keeps nested negations
    small); if all are empty keep one, so that a condition is never an empty disjunction."""
    loops, guards = context
    kept = [piece for piece in pieces if not _is_empty(loops, guards + piece)]
    return kept or pieces[:1]


def _is_empty(loops: tuple[Loop, ...], guards: tuple[Guard, ...]) -> bool:
    names = [loop.name for loop in loops]
    return domain_set("P", names, [(l.lower, l.upper) for l in loops], guards).is_empty()


def _refs(expr: Expr):
    return list(expr_refs(expr))
