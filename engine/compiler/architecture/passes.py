"""Tile-loop order + the written array's reduction loops -> the kernel's sequential passes: the one
place that decides which tile loops run as passes, how many passes there are and which of them
reload partial results (the exporter, the model and the simulator all read it).

A design whose tile loops put a reduction loop of the accumulated array outside a loop that changes
its output block (MM <[i,k],j>: C[i][j] is revisited at every k tile) must read back the partial
results it wrote. A DRAM round trip between two processes of one dataflow region races (AXI orders
no read after a write of another burst), so the kernel runs the tile loops L1..Lr as sequential
passes, r being the innermost tile loop that is a reduction loop of the accumulated array and has a
tile loop after it that is not: each pass is one call of the dataflow region (HLS completes every
AXI write of a call before it returns), inside a pass every output block is visited once, its
partial result read (reload) before it is written.

When the reduction loops among L1..Lr have one tile each, no block is revisited: one pass, and the
design is the single dataflow region it always was.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Iterable

import sympy

from engine.compiler.expressions import evaluate


def pass_loops(order: Iterable[str], reduction: Iterable[str]) -> tuple[str, ...]:
    """L1..Lr of the tile-loop `order` (outermost first) for an accumulator invariant along the loops
    `reduction`; empty when no reduction loop has an output-changing loop inside it."""
    order, reduction = list(order), set(reduction)
    last = -1
    for k, loop in enumerate(order):
        if loop in reduction and any(l not in reduction for l in order[k + 1:]):
            last = k
    return tuple(order[:last + 1])


@dataclass(frozen=True)
class Passes:
    """The pass loops and, among them, the reduction loops of the accumulated array."""
    loops: tuple[str, ...]
    reductions: tuple[str, ...]
    initialised: bool  # the first partial result is made on chip (no reload in the first passes)

    def count(self, tiles: Callable[[str], object]):
        """P: the product of the pass loops' tile counts (when passes are active)."""
        return _product(tiles(l) for l in self.loops)

    def reduction_tiles(self, tiles: Callable[[str], object]):
        """R: passes are active when R > 1 (a block is revisited)."""
        return _product(tiles(l) for l in self.reductions)

    def reloading(self, tiles: Callable[[str], object]):
        """Passes that read partial results back: all but the first of each output block's (all of
        them when the accumulator's first value comes from DRAM)."""
        count = self.count(tiles)
        return count if not self.initialised else count - count / self.reduction_tiles(tiles)

    # -- concrete values -------------------------------------------------------------------------
    def active(self, tiles: dict[str, int]) -> bool:
        return bool(self.reductions) and self.reduction_tiles(tiles.__getitem__) > 1

    def indices(self, tiles: dict[str, int]) -> list[dict[str, int]]:
        """Each pass's tile index of every pass loop, in execution order (one empty pass if inactive)."""
        if not self.active(tiles):
            return [{}]
        ranges = [range(tiles[l]) for l in self.loops]
        return [dict(zip(self.loops, index)) for index in itertools.product(*ranges)]

    def reloads(self, index: dict[str, int]) -> bool:
        return not self.initialised or any(index.get(l, 0) > 0 for l in self.reductions)


NO_PASSES = Passes((), (), True)


def _product(values):
    values = list(values)
    if not values:
        return 1
    if all(isinstance(v, int) for v in values):
        return math.prod(values)
    return sympy.Mul(*values)


def descriptor_passes(descriptor: dict) -> Passes:
    """The passes of a design descriptor (docs/descriptor.md): its tile-loop order and its
    accumulated I/O group's invariant loops."""
    acc = [g for g in descriptor["io_groups"] if g["kind"] == "acc"]
    if len(acc) != 1:
        return NO_PASSES
    order = descriptor["design"]["loop_order"]
    loops = pass_loops(order, acc[0]["invariant_loops"])
    return Passes(loops, tuple(l for l in loops if l in acc[0]["invariant_loops"]), acc[0]["initialised_on_chip"])


def descriptor_tiles(descriptor: dict, values: dict[str, int]) -> dict[str, int]:
    return {l: -(-int(n) // int(values[f"{l}_t1"])) for l, n in descriptor["design"]["problem_size"].items()}


def reads_partial_results(descriptor: dict, values: dict[str, int]) -> bool:
    """Whether the kernel reads partial results of its written array back at `values` (its first
    written I/O group accumulates and has reload events there)."""
    written = [g for g in descriptor["io_groups"] if g["kind"] != "in"]
    if not written or written[0]["kind"] != "acc" or written[0]["reload_events"] == "0":
        return False
    return round(evaluate(written[0]["reload_events"], values)) > 0


def unused_reload_modules(descriptor: dict, values: dict[str, int]) -> list[str]:
    """The I/O modules that read partial results back (the written array's input modules), when the
    kernel reads none at `values`: the exporter does not instantiate them, so the floorplan's netlist
    does not count them either. Empty when partial results are read back."""
    written = [g for g in descriptor["io_groups"] if g["kind"] != "in"]
    if not written or reads_partial_results(descriptor, values):
        return []
    array = written[0]["array"]
    return [m["name"] for m in descriptor["topology"]["modules"] if m["kind"] == "io" and m["array"] == array]


def architecture_passes(design, groups) -> Passes:
    """The passes of a design from its I/O groups (engine/compiler/architecture/io_groups.py)."""
    acc = [g for g in groups if g.kind == "acc"]
    if len(acc) != 1:
        return NO_PASSES
    invariant = tuple(acc[0].invariant)
    loops = pass_loops(design.permutation.order, invariant)
    return Passes(loops, tuple(l for l in loops if l in invariant), acc[0].initialised_on_chip)


@dataclass(frozen=True)
class PassView:
    """One pass as the architecture sees it: the pass loops have one tile; `reload`: the pass reads
    partial results back."""
    loops: tuple[str, ...]
    reload: bool
