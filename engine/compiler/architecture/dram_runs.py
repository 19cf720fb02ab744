"""Architecture + one DRAM-facing module -> how many consecutive bus words one invocation of its DRAM
loop touches in each layout (the runs an AXI port turns into bursts, engine/models/dram.py).

- serialized (the host lays the array out in the order the module reads or writes it): every word of
  an invocation follows the one before, so the run is the invocation's words;
- natural (row-major in the padded array): a box's row segment is contiguous, so the run is the
  innermost extent of the box in words (the DRAM-level packing factor's `dram_row` over the factor:
  a loader's tile box, partial results read back included, a storer's PE box),
  unless every box starts at the beginning of its row (the factor's `steps` are all 0: one tile and,
  for drains, one PE along the innermost dimension), when the box's rows are whole rows of the
  padded array and the invocation is one run.
A module whose DRAM word has no packing factor of its own (a last-writer storer) is taken as one run
per invocation in both layouts.
"""
from __future__ import annotations

import sympy

from engine.compiler.architecture.modules import Architecture, Module, PackingParameter
from engine.compiler.architecture.symbols import symbol

LAYOUTS = ("serialized", "natural")


def invocation_words(module: Module) -> sympy.Expr:
    """Bus words one invocation of the module's DRAM loop moves (its first phase: load or drain)."""
    phase = module.phases[0]
    invocations = sympy.Mul(*(loop.trip for loop in phase.loops if loop.role == "tile"))
    return phase.iterations / invocations


def dram_pack_name(name: str, kind: str, level: int) -> str | None:
    """The packing factor of a DRAM-facing module's word, as io_network.py names it after the module
    (`A_L3_in` -> `A_in_pack_l3`), or None for a module not named so."""
    direction = "in" if kind == "io" else "out"
    suffix = f"_L{level}_{direction}"
    return f"{name[:-len(suffix)]}_{direction}_pack_l{level}" if name.endswith(suffix) else None


def dram_packing(arch: Architecture, module: Module) -> PackingParameter | None:
    """The packing factor of the module's DRAM word, or None."""
    name = dram_pack_name(module.name, module.kind, module.level)
    return next((p for p in arch.packing if p.name == name), None)


def in_row_order(arch: Architecture, module: Module) -> bool:
    """Whether the module's DRAM loop moves its boxes in the array's row-major order (its packing
    factor's `in_row_order`): then a port whose partial results are read back can be serialized,
    its loader and its storer visiting the words in one order."""
    packing = dram_packing(arch, module)
    return bool(packing and packing.in_row_order)


def dram_runs(arch: Architecture, module: Module) -> dict[str, sympy.Expr]:
    """Layout -> consecutive words of one invocation of `module`'s DRAM loop (before the burst cap)."""
    words = invocation_words(module)
    packing = dram_packing(arch, module)
    if packing is None:
        return {"serialized": words, "natural": words}
    row = (packing.dram_row if packing.dram_row is not None else packing.innermost) / symbol(packing.name)
    natural = sympy.Piecewise((words, sympy.Eq(sympy.Add(*packing.steps), 0)), (row, True)) if packing.steps else words
    return {"serialized": words, "natural": natural}
