"""Size limits shared by the engine: a design space or a simulator configuration -> nothing, or an
EngineError naming the limit it exceeds.

The models evaluate configurations in int64 numpy arrays and the exported HLS code indexes loops
with 32-bit ints, so what they represent exactly is:
- a loop of at most MAX_EXTENT = 2^31 - 1 iterations;
- a loop nest of at most INT64_MAX iterations (the product of its loop extents), and arrays of at
  most INT64_MAX bytes.
A kernel of more than MAX_STATEMENTS statements is refused before the polyhedral passes, whose time
grows with the statements (~7 s of CPU for 100, ~18 s for 400 on the project's machine).
The cycle-level simulator holds one segment per module instance and tile (engine/sim/kernel.py
flattens them into arrays): `simulator_state_bytes` estimates that state from the descriptor and
`check_simulator_memory` refuses a configuration whose state would not fit in the available memory.
"""
from __future__ import annotations

import math
import os

from engine.errors import DesignError, KernelError

MAX_EXTENT = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_STATEMENTS = 64
# measured on MM designs: ~0.45 segments per (instance, tile) at ~650 bytes each while the simulator
# builds them (Python tuples before the int64 arrays); rounded up
SIM_BYTES_PER_INSTANCE_TILE = 700
MEMORY_SHARE = 0.8  # of the available memory the simulator may plan to use


def check_kernel(kernel) -> None:
    """Refuse a parsed kernel with more statements than the compiler handles in seconds."""
    if len(kernel.statements) > MAX_STATEMENTS:
        raise KernelError(f"the scop holds {len(kernel.statements)} statements; the limit is {MAX_STATEMENTS} "
                          f"(the polyhedral passes take seconds per tens of statements)", kernel.scop_location)


def check_design_space(space) -> None:
    """Refuse a compiled kernel whose loops or arrays are beyond what the models count exactly."""
    kernel = space.kernel
    loops = {loop.name: loop for s in kernel.statements for loop in s.loops}
    for name, extent in zip(space.band.loops, space.band.extents):
        if extent > MAX_EXTENT:
            loop = loops.get(name)
            raise KernelError(f"loop '{name}' runs {extent:,} iterations; the limit is 2^31-1 = {MAX_EXTENT:,} "
                              f"per loop (the models and the HLS code count loops in 32 bits)",
                              loop.location if loop else None)
    total = math.prod(space.band.extents)
    if total > INT64_MAX:
        product = " x ".join(f"{n}={e:,}" for n, e in zip(space.band.loops, space.band.extents))
        raise KernelError(f"the loop nest runs {product} = {total:.3g} iterations; the limit is 2^63-1 = "
                          f"{INT64_MAX:.3g} (the models count in int64)", kernel.scop_location)
    for array in kernel.arrays.values():
        if any(d > MAX_EXTENT for d in array.shape):
            raise KernelError(f"array '{array.name}' has a dimension of {max(array.shape):,} elements; the limit "
                              f"is 2^31-1 = {MAX_EXTENT:,} per dimension", array.location)
        if math.prod(array.shape) * 8 > INT64_MAX:
            raise KernelError(f"array '{array.name}' holds {math.prod(array.shape):.3g} elements; the limit is "
                              f"2^63-1 bytes (the models count traffic in int64)", array.location)


def simulator_state_bytes(descriptor: dict, values: dict[str, int]) -> int:
    """The simulator's memory for one configuration: module instances x tiles x bytes per segment."""
    from engine.compiler.expressions import evaluate  # imports sympy: only where a descriptor is at hand

    modules = descriptor["topology"]["modules"]
    instances = sum(max(1, round(evaluate(m["count"], values))) for m in modules)
    pe = next(m for m in modules if m["kind"] == "pe")
    tiles = math.prod(max(1, round(evaluate(loop["trip"], values)))
                      for loop in pe["phases"][0]["loops"] if loop["role"] == "tile")
    return instances * tiles * SIM_BYTES_PER_INSTANCE_TILE


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable on Linux, else the physical memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2**63 - 1


def check_simulator_memory(descriptor: dict, values: dict[str, int], available: int | None = None) -> int:
    """The estimate, or a DesignError when it is beyond MEMORY_SHARE of the available memory."""
    need = simulator_state_bytes(descriptor, values)
    available = available_memory() if available is None else available
    if need > MEMORY_SHARE * available:
        raise DesignError(f"the simulator would need about {_bytes(need)} for this configuration (module "
                          f"instances x tiles); {_bytes(available)} of memory is available: use larger tiles "
                          f"(array-partitioning factors) or smaller sizes")
    return need


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1024
