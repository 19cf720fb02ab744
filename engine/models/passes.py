"""Symbolic model of a design + the models of its passes -> the latency of a design that runs its
outer tile loops as sequential passes (engine/compiler/architecture/passes.py).

A design that revisits an output block (MM <[i,k],j>) calls its dataflow region once per pass, and
nothing overlaps across a pass boundary: latency = (passes that read nothing back) x (latency of
such a pass) + (passes that read partial results back) x (latency of one of those), each pass being
the same architecture with the pass loops' tile counts at 1 (DesignSymbols' pass view). Where the
reduction loops among the pass loops have one tile (no block is revisited) there is one pass and the
latency is the design's own: a Piecewise on R, the product of those tile counts, so one expression
serves every configuration, lambdifies to numpy and evaluates over intervals (engine/models/interval.py).
Resources and off-chip traffic are the design's (the same hardware runs every pass).
"""
from __future__ import annotations

import dataclasses

import sympy

from engine.compiler.architecture.modules import Architecture
from engine.compiler.architecture.passes import architecture_passes
from engine.compiler.architecture.symbols import DesignSymbols
from engine.compiler.design import Design
from engine.models.dram import DramPorts
from engine.models.symbolic import SymbolicModel, build_symbolic_model, stored_layouts


def with_passes(model: SymbolicModel, design: Design, passes: dict[str, Architecture],
                problem_size: dict[str, int], dram: DramPorts) -> SymbolicModel:
    """`model` with the latency of its passes (unchanged when the design never runs passes); `dram`
    as `model` was built with."""
    if not passes:
        return model
    info = architecture_passes(design, model.architecture.groups)
    syms = DesignSymbols(design)
    count = info.count(syms.tiles)
    revisits = info.reduction_tiles(syms.tiles)
    later = build_symbolic_model(passes["reload"], problem_size, dram, model.architecture.groups,
                                 stored_layouts(design)).latency
    if "first" in passes:
        first = build_symbolic_model(passes["first"], problem_size, dram, model.architecture.groups,
                                     stored_layouts(design)).latency
        total = count / revisits * first + (count - count / revisits) * later
    else:
        total = count * later
    latency = sympy.Piecewise((model.latency, revisits <= 1), (total, True))
    return dataclasses.replace(model, latency=latency)
