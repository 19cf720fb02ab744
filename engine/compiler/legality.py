"""Band + dependences -> nothing, or a LegalityError naming the statement, dependence and reason.

AutoSA's conditions (sec. 3.2): (1) the transformation preserves the semantics: the band is
permutable (band.py guarantees it or fails); (2) every dependence is uniform, piece by piece;
(3) some loop has flow/read distances of 0 or 1 only, so it can be a space loop.
"""
from __future__ import annotations

from dataclasses import replace

from engine.compiler.band import Band
from engine.compiler.dependences import Dependences
from engine.compiler.ir import Kernel
from engine.compiler.isl_helpers import fixed_distance
from engine.compiler.space_time import carried_distances, space_loop_candidates
from engine.errors import LegalityError


def check_uniform(kernel: Kernel, band: Band, deps: Dependences) -> None:
    for dep in deps.validity + deps.reduction + deps.read:
        if fixed_distance(band.in_band(dep)) is None:
            stmt = kernel.statement(dep.sink)
            raise LegalityError(f"{dep.kind} dependence {dep} on '{dep.array}' is not uniform "
                                f"(its distance changes with the iteration), so no systolic array "
                                f"can carry it: {stmt.text}", _line_only(stmt.location))


def check_space_loops(kernel: Kernel, band: Band, deps: Dependences) -> None:
    if space_loop_candidates(band, deps):
        return
    reasons = []
    for loop in band.loops:
        bad = sorted(d for d in carried_distances(band, deps.flow + deps.read, loop) if d[0] < 0 or d[1] > 1)
        reasons.append(f"{loop}: distance {bad[0][0] if bad[0][0] < 0 else bad[0][1]}")
    raise LegalityError("no loop can be a space loop: each carries a flow or read dependence with a "
                        "distance other than 0 or 1 (" + ", ".join(reasons) + ")", kernel.scop_location)


def _line_only(location):
    return replace(location, column=None)
