"""DRAM ports (engine/models/dram.py): bursts from addresses, a port's cycles per word, and the model
and the simulator charging them alike in both layouts."""
from __future__ import annotations

import numpy as np
import pytest
import sympy

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.expressions import smax
from engine.models.device import load_device
from engine.models.dram import (
    AxiSettings,
    DramPorts,
    burst_lengths,
    cycles_per_beat,
    cycles_per_word_expr,
    port_arrays,
    port_cycles,
)
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.sim import DramModel, simulate

AXI = AxiSettings(max_burst_beats=64, outstanding=16, latency=64, boundary_bytes=4096)


def test_bursts_are_cut_at_gaps_pages_the_cap_and_invocations():
    words = np.array([0, 1, 2, 3, 10, 11, 63, 64, 65, 200])
    # 63 | 64 crosses a 4 KB page of 64-byte words
    assert sorted(burst_lengths(words, 64, AXI)) == [1, 1, 2, 2, 4]
    assert sorted(burst_lengths(words, 64, AXI, breaks=np.array([2]))) == [1, 1, 2, 2, 2, 2]
    assert sorted(burst_lengths(np.arange(150), 64, AXI)) == [22, 64, 64]
    # narrower words: 4 KB holds more of them, the burst length still caps
    assert sorted(burst_lengths(np.arange(150), 8, AXI)) == [22, 64, 64]


def test_a_port_with_single_beat_bursts_moves_a_word_every_four_cycles():
    assert cycles_per_beat(1, AXI) == pytest.approx(65 / 16)
    assert cycles_per_beat(64, AXI) == 1  # 16 bursts of 64 in flight cover the latency
    assert port_cycles(np.array([1] * 100), AXI) == pytest.approx(100 * 65 / 16)
    # two 512-bit ports on one DDR4-2400 bank at 300 MHz: each gets half the bank
    ports = DramPorts(AXI, banks=4, bank_bytes_per_s=19.2e9, clock_mhz=300)
    assert cycles_per_beat(64, AXI, ports.bank_share(64, 2)) == pytest.approx(2.0)
    assert port_arrays([("C", "acc"), ("A", "in"), ("B", "in")]) == ["A", "B", "C"]


@pytest.mark.parametrize("sharing", [1, 2])
def test_the_models_expression_is_the_port_rule_without_a_min(sharing):
    run, word = sympy.symbols("run word", positive=True)
    ports = DramPorts(AXI, banks=4, bank_bytes_per_s=19.2e9, clock_mhz=300)
    expr = cycles_per_word_expr(run, word, ports, sharing, widest_word_bytes=64, maximum=smax)
    assert not expr.has(sympy.Min)
    f = sympy.lambdify([run, word], expr, modules=[{"smax": lambda *a: max(a)}, "math"])
    for r in (1, 2, 3, 4, 5, 17, 64, 100, 10**6):
        for w in (4, 16, 64):
            expected = cycles_per_beat(min(AXI.burst_cap(w), r), AXI, ports.bank_share(w, sharing))
            assert f(r, w) == pytest.approx(expected)


@pytest.fixture(scope="module")
def mm():
    space = compile_kernel(KERNELS / "mm.c", defines={"I": 64, "J": 64, "K": 64})
    return space, space.design("i-j__i-j.k")


def test_a_natural_layout_with_one_word_per_row_is_charged_its_single_beat_bursts(mm):
    space, design = mm
    params = {"i_t1": 32, "j_t1": 32, "k_t1": 16, "i_t2": 8, "j_t2": 8, "k_t2": 8}
    device = load_device()
    serialized = PerformanceModel(space, design, device).evaluate(params)
    natural = PerformanceModel(space, design, device, layout="natural").evaluate(params)
    # A's tile box is 32 rows of one 16-float word, in 4 k-tiles: one single-beat burst per row; 16
    # tiles, each loop invocation (n - 1) x its II + a depth of 2, or, paced by the port, n paces (the
    # next invocation's first word a pace after the last: the port's rule in the simulator too)
    tiles, rows = 2 * 2 * 4, 32
    assert float(serialized["module:A_L3_in"]) == tiles * ((rows - 1) * 1 + 2)
    assert float(natural["module:A_L3_in"]) == pytest.approx(tiles * rows * 65 / 16)
    assert float(natural["latency_cycles"]) > float(serialized["latency_cycles"])


@pytest.mark.parametrize("layout", ["serialized", "natural"])
def test_the_simulator_charges_the_ports_as_the_model_does(mm, layout):
    space, design = mm
    params = {"i_t1": 32, "j_t1": 32, "k_t1": 16, "i_t2": 8, "j_t2": 8, "k_t2": 8}
    device = load_device()
    model = PerformanceModel(space, design, device, layout=layout)
    latency = float(model.evaluate(params)["latency_cycles"])
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    descriptor = build_descriptor(space, design, model.architecture, model.pass_architectures)
    simulated = simulate(descriptor, values, dram=DramModel(device.dram_ports(layout))).cycles
    assert abs(simulated / latency - 1) < 0.05


def test_a_port_whose_partial_results_come_back_is_serialized_only_in_one_order():
    from engine.models.dram import port_directions, port_layout
    groups = [("A", "in", False, True), ("B", "in", False, True), ("C", "acc", True, True),
              ("D", "acc", False, False), ("E", "acc", False, True)]
    directions = port_directions(groups)
    assert directions == {"A": "in", "B": "in", "C": "inout", "D": "inout", "E": "out"}
    assert port_layout("serialized", "inout")[0] == "natural"
    assert port_layout("serialized", "inout", in_row_order=True) == ("serialized", "")
    assert port_layout("natural", "inout", in_row_order=True) == ("natural", "")
    assert port_layout("serialized", "out") == ("serialized", "")


@pytest.mark.parametrize("design, ordered", [("i__i-k.j", True), ("k__j-k.i", True), ("i-k__i-k.j", True),
                                             ("j__i-k.j", False), ("i-j__i-k.j", False), ("j-k__j-k.i__simd-k", False),
                                             ("j-k__j-k.i", True)])
def test_read_back_boxes_follow_the_rows_only_when_the_pes_split_the_outermost_dimension(design, ordered):
    """C[i][j]: PEs along i (or none, k__) stack whole rows of C, so the storer's PE boxes are the rows
    the loader reads; PEs along j cut every row into boxes, unless C is stored transposed ([j][i], for
    SIMD along i: j-k__j-k.i), when j is its outermost stored dimension."""
    from engine.compiler.architecture.dram_runs import in_row_order
    from engine.models.dram import row_ordered_arrays
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "64", "J": "64", "K": "64"})
    arch = PerformanceModel(space, space.design(design), load_device()).architecture
    assert ("C" in row_ordered_arrays((m.array, in_row_order(arch, m)) for m in arch.modules if m.dram)) is ordered
