"""Architecture + one DRAM-facing module -> how many consecutive bus words one invocation of its DRAM
loop touches in each layout (the runs an AXI port turns into bursts, engine/models/dram.py).

- serialized (the host lays the array out in the order the module reads or writes it): every word of
  an invocation follows the one before, so the run is the invocation's words;
- natural (row-major in the padded array): a box's row segment is contiguous, so the run is the
  innermost extent of the box in words (the DRAM-level packing factor's `dram_row` over the factor:
  a loader's tile box, partial results read back included, a storer's PE box),
  unless every box starts at the beginning of its row (the factor's `steps` are all 0: one tile and,
  for drains, one PE along the innermost dimension), when the box's rows are whole rows of the
  padded array and the invocation is one run; a storer whose PE boxes are one row each, its
  innermost PE loop along the row, writes the PEs' boxes one after another along the row (a run of
  that many boxes), and with one tile along the row the whole invocation (Vitis flattens the
  storer's perfect loop nest into one pipelined loop: found with the timed C simulation on MM
  i-j__j-k.i at i_t2 = 1, modelled at twice its cycles).
A module whose DRAM word has no packing factor of its own (a last-writer storer) is taken as one run
per invocation in both layouts.

The serialized layout's output word (`serialized_store_words`): a storer of a write-only port in the
serialized layout writes full bus words whatever its PE boxes' packing, as AutoSA's serialized
outputs do (`C_drain_IO_L3_out_serialize`): consecutive words of its own stream, packed
`serialized_store_words` to a bus word by a serialize stage before the m_axi write, the tail of a
run zero-padded to a whole bus word; the host deserializes in the same order.
"""
from __future__ import annotations

import sympy

from engine.compiler.architecture.modules import Architecture, Module, PackingParameter
from engine.compiler.architecture.symbols import symbol
from engine.compiler.tuning import WORD_BITS

LAYOUTS = ("serialized", "natural")


def serialized_store_words(word_elements: int, element_bits: int) -> int:
    """Storer words (of `word_elements` elements of `element_bits` bits) per DRAM bus word in the
    serialized layout: as many as fill one WORD_BITS word (1 when the storer's word is that wide, or
    does not divide it)."""
    word_bits = word_elements * element_bits
    return WORD_BITS // word_bits if word_bits and WORD_BITS % word_bits == 0 else 1


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
    if not packing.steps:
        return {"serialized": words, "natural": words}
    cases = [(words, sympy.Eq(sympy.Add(*packing.steps), 0))]
    if packing.box_rows is not None:  # a storer's boxes of one row follow each other along the row
        one_row = sympy.Eq(packing.box_rows, 1)
        cases += [(words, one_row & sympy.Eq(packing.row_tiles, 1)), (row * packing.row_pes, one_row)]
    return {"serialized": words, "natural": sympy.Piecewise(*cases, (row, True))}
