"""Kernel IR -> the golden loop nest as C text: the scop's loops and statements exactly as the source
computes them (temporaries inlined, `+=` written out), with sizes as numbers. Back ends compile it
next to the generated hardware to check results (C simulation, the XRT host program)."""
from __future__ import annotations

from engine.compiler.ir import Kernel, Statement


def _condition(stmt: Statement) -> str:
    return " && ".join(f"({g.expr}) {'==' if g.equality else '>='} 0" for g in stmt.guards)


def golden_loop_nest(kernel: Kernel, *, indent: str = "  ") -> str:
    """The scop's statements in their loops. Arrays are referred to by their names, so the caller
    declares them (e.g. as `float A[64][64]` or as parameters of a function)."""
    lines: list[str] = []
    open_loops: list[int] = []  # uids of the loops currently open
    for stmt in sorted(kernel.statements, key=lambda s: s.position):
        uids = [loop.uid for loop in stmt.loops]
        common = 0
        while common < min(len(open_loops), len(uids)) and open_loops[common] == uids[common]:
            common += 1
        while len(open_loops) > common:
            open_loops.pop()
            lines.append(indent * (len(open_loops) + 1) + "}")
        for loop in stmt.loops[common:]:
            depth = len(open_loops) + 1
            lines.append(f"{indent * depth}for (int {loop.name} = {loop.lower}; {loop.name} < {loop.upper}; "
                         f"{loop.name}++) {{")
            open_loops.append(loop.uid)
        body = f"{stmt.target} = {stmt.expr};"
        if stmt.guards:
            body = f"if ({_condition(stmt)}) {body}"
        lines.append(indent * (len(open_loops) + 1) + body)
    while open_loops:
        open_loops.pop()
        lines.append(indent * (len(open_loops) + 1) + "}")
    return "\n".join(lines)
