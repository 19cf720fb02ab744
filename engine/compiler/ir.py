"""The kernel IR: what the C front end turns a `#pragma scop` region into.

Frozen dataclasses, so passes return new values instead of editing shared ones. Loops, guards and
subscripts are affine (`Affine`); statement right-hand sides are small expression trees (`Expr`)
that the HLS exporter prints back as C. The polyhedral model (isl) is built from this IR.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator, Union

from engine.errors import SourceLocation


@dataclass(frozen=True)
class Affine:
    """sum(coeff * var) + const with integer coefficients; variables are loop iterators."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(coeffs: dict[str, int] | None = None, const: int = 0) -> "Affine":
        items = tuple(sorted((v, c) for v, c in (coeffs or {}).items() if c != 0))
        return Affine(items, const)

    @staticmethod
    def var(name: str) -> "Affine":
        return Affine(((name, 1),), 0)

    @property
    def coeffs(self) -> dict[str, int]:
        return dict(self.terms)

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(v for v, _ in self.terms)

    def coeff(self, name: str) -> int:
        return self.coeffs.get(name, 0)

    def is_constant(self) -> bool:
        return not self.terms

    def __add__(self, other: "Affine") -> "Affine":
        merged = self.coeffs
        for v, c in other.terms:
            merged[v] = merged.get(v, 0) + c
        return Affine.of(merged, self.const + other.const)

    def __neg__(self) -> "Affine":
        return self.scaled(-1)

    def __sub__(self, other: "Affine") -> "Affine":
        return self + (-other)

    def scaled(self, factor: int) -> "Affine":
        return Affine.of({v: c * factor for v, c in self.terms}, self.const * factor)

    def substitute(self, values: dict[str, "Affine"]) -> "Affine":
        result = Affine.of({}, self.const)
        for v, c in self.terms:
            result = result + (values[v].scaled(c) if v in values else Affine.of({v: c}))
        return result

    def __str__(self) -> str:
        parts: list[str] = []
        for v, c in self.terms:
            term = v if abs(c) == 1 else f"{abs(c)}*{v}"
            parts.append(("- " if c < 0 else "+ ") + term)
        if self.const or not parts:
            parts.append(("- " if self.const < 0 else "+ ") + str(abs(self.const)))
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]


@dataclass(frozen=True)
class Access:
    """An array element `array[index0][index1]...` with affine subscripts."""

    array: str
    index: tuple[Affine, ...]

    def __str__(self) -> str:
        return self.array + "".join(f"[{i}]" for i in self.index)


@dataclass(frozen=True)
class Const:
    value: int | float
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Ref:
    access: Access

    def __str__(self) -> str:
        return str(self.access)


@dataclass(frozen=True)
class IterRef:
    """A loop iterator used as a value (e.g. `A[i][j] = i + j`)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class BinOp:
    op: str
    lhs: "Expr"
    rhs: "Expr"

    def __str__(self) -> str:
        return f"({self.lhs} {self.op} {self.rhs})"


@dataclass(frozen=True)
class UnaryOp:
    op: str
    operand: "Expr"

    def __str__(self) -> str:
        return f"({self.op}{self.operand})"


@dataclass(frozen=True)
class Call:
    """A math-library operator written as a call: `sqrt(x)`, `fabs(x)` (MATH_CALLS in c_expressions)."""

    name: str  # as written (sqrt, sqrtf, fabs, fabsf)
    op: str  # the operator it is, a key of resources/operators.json: sqrt, abs
    args: tuple["Expr", ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


Expr = Union[Const, Ref, IterRef, BinOp, UnaryOp, Call]


def expr_refs(expr: Expr) -> Iterator[Access]:
    """Every array access read by an expression, left to right."""
    if isinstance(expr, Ref):
        yield expr.access
    elif isinstance(expr, BinOp):
        yield from expr_refs(expr.lhs)
        yield from expr_refs(expr.rhs)
    elif isinstance(expr, UnaryOp):
        yield from expr_refs(expr.operand)
    elif isinstance(expr, Call):
        for arg in expr.args:
            yield from expr_refs(arg)


@dataclass(frozen=True)
class Loop:
    """`for (name = lower; name < upper; name++)`; bounds are affine in outer iterators."""

    name: str
    lower: Affine
    upper: Affine  # exclusive
    uid: int  # distinguishes two loops that reuse a name in sibling nests
    location: SourceLocation


@dataclass(frozen=True)
class Guard:
    """An affine condition `expr >= 0` (or `== 0`) from an `if` around a statement."""

    expr: Affine
    equality: bool = False


@dataclass(frozen=True)
class Statement:
    name: str  # S0, S1, ... in textual order
    loops: tuple[Loop, ...]
    guards: tuple[Guard, ...]
    target: Access
    expr: Expr
    position: tuple[int, ...]  # textual position among siblings at each depth (len = len(loops) + 1)
    location: SourceLocation
    text: str = ""  # the statement as written, for messages

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(loop.name for loop in self.loops)

    def reads(self) -> list[Access]:
        return list(expr_refs(self.expr))


@dataclass(frozen=True)
class ArrayDecl:
    name: str
    dtype: str  # float, double, int32, int16, int8
    shape: tuple[int, ...]
    location: SourceLocation
    local: bool = False  # declared inside the scop: an on-chip array of the design, not a port


@dataclass(frozen=True)
class Kernel:
    """A parsed scop: statements over declared arrays, with the sizes that were used."""

    name: str
    path: str
    source: str
    sizes: dict[str, int]
    arrays: dict[str, ArrayDecl]
    statements: tuple[Statement, ...]
    scop_location: SourceLocation
    declared_reduction_loops: frozenset[str] = field(default_factory=frozenset)
    declared_reduction_flags: tuple[bool, ...] = ()  # AutoSA y/n flags, see reductions.py

    def copy(self, **changes) -> "Kernel":
        return replace(self, **changes)

    def statement(self, name: str) -> Statement:
        return next(s for s in self.statements if s.name == name)
