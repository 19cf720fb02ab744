"""A pass of a design that runs passes reads and writes the design's DRAM ports: the pass's DRAM
runs (how many consecutive words an AXI burst can take) are the whole design's."""
from __future__ import annotations

import pytest

from engine.compiler.architecture.build import build_architecture, pass_architectures
from engine.compiler.architecture.dram_runs import dram_runs
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS


@pytest.fixture(scope="module")
def cnn():
    return compile_kernel(KERNELS / "cnn.c", defines={"O": "16", "I": "8", "H": "13", "W": "9", "P": "3", "Q": "3"})


def test_a_pass_bursts_along_the_rows_of_the_whole_array(cnn):
    """o-h__h-w-i-p-q.o runs a pass per (h, w, i, p, q) tile; its partial results fo[o][h][w] travel in
    the natural layout (the storer's and the loader's orders differ). A pass sees one w tile, but the
    rows of fo are W long: with w_t1 < W a box's row segment is w_t1 words, not the whole box
    (the timed C simulation measured one-beat bursts where the pass's own view gave nine-beat runs)."""
    design = cnn.design("o-h__h-w-i-p-q.o")
    arch = build_architecture(cnn, design)
    passes = pass_architectures(cnn, design, arch)
    assert set(passes) == {"first", "reload"}
    compared = 0
    for pass_arch in passes.values():
        for module in (m for m in pass_arch.modules if m.dram):
            assert dram_runs(pass_arch, module) == dram_runs(arch, arch.module(module.name)), module.name
            compared += 1
    assert compared >= 6  # fo read back and written, fi and wt read, in both kinds of pass
    reload = passes["reload"]
    natural = dram_runs(reload, reload.module("fo_L3_in"))["natural"]
    values = {"o_t1": 3, "h_t1": 3, "w_t1": 1, "i_t1": 6, "p_t1": 2, "q_t1": 1, "fo_in_pack_l3": 1}
    assert natural.subs(values) == 1
