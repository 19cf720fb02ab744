"""A design's configuration at the kernel's sizes -> the same design and configuration on a reduced
problem: each loop shrunk to a few of its outermost tiles (`tiles` per loop, the configuration's
largest tile size along it), so the array, its tile structure and the tuning values stay as they
are and a simulation or C simulation finishes in seconds. A loop no tuning parameter tiles, or one
that already holds no more than `tiles` tiles, keeps its extent.

The kernel's size macros are mapped to the loops they bound by reading the kernel again with each
size one larger (the front end only, no polyhedral pass): a size whose loops' bounds move is
reduced so that every loop it bounds still holds the tiles it should (a size shared by loops tiled
differently is set by the largest). The reduced kernel is then compiled and the configuration
checked there; a configuration the reduced problem cannot hold is an EngineError naming it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError

DEFAULT_TILES = 2


@dataclass(frozen=True)
class ReducedProblem:
    sizes: dict[str, int]  # every size macro of the kernel, reduced ones included
    reduced: dict[str, tuple[int, int]]  # size -> (full, reduced) for the sizes that shrank
    extents: dict[str, tuple[int, int]]  # band loop -> (full extent, reduced extent)
    tiles: int

    def describe(self) -> str:
        """e.g. "I 1024 -> 410, J 1024 -> 256 (2 tiles per loop)"."""
        if not self.reduced:
            return "the full problem (no loop holds more than its tiles)"
        shrunk = ", ".join(f"{name} {full:,} -> {small:,}" for name, (full, small) in self.reduced.items())
        return f"{shrunk} ({self.tiles} tiles per loop)"


def _loop_bounds(kernel) -> dict[str, tuple[int, int]]:
    """Loop name -> (lower constant, upper constant) over the kernel's statements."""
    bounds: dict[str, tuple[int, int]] = {}
    for statement in kernel.statements:
        for loop in statement.loops:
            bounds[loop.name] = (loop.lower.const, loop.upper.const)
    return bounds


def tile_targets(design, values: dict[str, int], tiles: int) -> dict[str, int]:
    """Band loop -> the extent that holds `tiles` of its largest tile (loops that shrink only)."""
    extents = dict(zip(design.band_loops, design.problem_size))
    largest: dict[str, int] = {}
    for p in design.params:
        if p.tunable and p.loop in extents and p.name in values:
            largest[p.loop] = max(largest.get(p.loop, 1), int(values[p.name]))
    return {loop: tiles * tile for loop, tile in largest.items() if tiles * tile < extents[loop]}


def reduced_sizes(path: str | Path, defines: dict[str, str], design, values: dict[str, int], *,
                  tiles: int = DEFAULT_TILES) -> ReducedProblem:
    """The size macros of the kernel at `path` (compiled with `defines`) that give `design` with
    `values` `tiles` tiles per loop. `design` is the design compiled at the full sizes."""
    from engine.compiler.frontend import parse_kernel

    if tiles < 1:
        raise EngineError(f"tiles per loop must be at least 1, not {tiles}")
    defines = {k: str(v) for k, v in defines.items()}
    kernel = parse_kernel(path, defines=defines)
    sizes = dict(kernel.sizes)
    targets = tile_targets(design, values, tiles)
    extents = dict(zip(design.band_loops, design.problem_size))
    base = _loop_bounds(kernel)
    new_sizes = dict(sizes)
    for name, value in sizes.items():
        if not targets:
            break
        moved = _loop_bounds(parse_kernel(path, defines={**defines, name: str(value + 1)}))
        steps = []  # per loop this size bounds: how far the size may shrink for the loop to keep its tiles
        for loop, (low, high) in base.items():
            slope = (moved.get(loop, (low, high))[1] - high) - (moved.get(loop, (low, high))[0] - low)
            if slope > 0 and loop in extents:
                target = targets.get(loop, extents[loop])
                steps.append((extents[loop] - target) // slope)
        if steps and min(steps) > 0:
            new_sizes[name] = max(1, value - min(steps))
    reduced = {name: (sizes[name], new_sizes[name]) for name in sizes if new_sizes[name] != sizes[name]}
    return ReducedProblem(new_sizes, reduced, {}, tiles)


def reduce_design(path: str | Path, defines: dict[str, str], design, values: dict[str, int], *,
                  tiles: int = DEFAULT_TILES, simd_touch_space: bool = False):
    """(ReducedProblem, reduced DesignSpace, the design there): the kernel compiled at the reduced
    sizes, with the compile option the full problem had (`simd_touch_space`: its designs with SIMD on
    a parallel space loop exist only with it). The configuration is checked by the caller's model
    (engine.models.report)."""
    from engine.compiler.design_space import compile_kernel

    problem = reduced_sizes(path, defines, design, values, tiles=tiles)
    space = compile_kernel(path, defines={**{k: str(v) for k, v in defines.items()},
                                          **{k: str(v) for k, v in problem.sizes.items()}},
                           simd_touch_space=simd_touch_space)
    try:
        small = space.design(design.id)
    except (KeyError, EngineError) as exc:
        raise EngineError(f"{design.id} is not a design of the reduced problem ({problem.describe()}): "
                          f"{exc}") from None
    extents = {loop: (full, small_extent) for loop, full, small_extent
               in zip(design.band_loops, design.problem_size, small.problem_size)}
    return ReducedProblem(problem.sizes, problem.reduced, extents, tiles), space, small
