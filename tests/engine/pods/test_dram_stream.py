"""The DRAM stream behind the banks: stored weights and the network input come on chip once, at the
technology's bandwidth, and no tile operation starts before its tiles are there."""
import dataclasses

import numpy as np
import pytest

from engine.pods.dram import workload_dram_bytes, workload_dram_cycles
from engine.pods.scheduler import schedule
from engine.pods.simulate import ScheduleViolation, simulate
from engine.pods.system import build_system
from engine.pods.tiling import tile_workloads
from engine.pods.workload import CodeLayer, workload_from_layers

from pod_workloads import random_workload


def _run(workload, technology, *, array=8, pods=8, gb_per_s=None, aggregation="mixed"):
    if gb_per_s is not None:
        technology = dataclasses.replace(technology, dram_gb_per_s=gb_per_s)
    system = build_system(array, array, pods, "butterfly-2", technology)
    tiling = tile_workloads(workload, array, array, aggregation=aggregation)
    return schedule(tiling, system), system


def _delivered_in_time(sched, system):
    """At the start of every slice, the distinct off-chip tiles used by the ops started by then fit in
    what the DRAM delivered: bandwidth x cycles."""
    tiling, t = sched.tiling, system.technology
    gemm = tiling.block_gemm[tiling.op_block]
    w_dram = tiling.gemm_stored_weights[gemm]
    x_dram = tiling.gemm_input[gemm]
    w_size = tiling.op_depth * tiling.op_cols * t.weight_bytes
    x_size = tiling.op_rows * tiling.op_depth * t.activation_bytes
    first_w = {}
    first_x = {}
    for op in range(tiling.ops):
        s = int(sched.op_slice[op])
        if w_dram[op]:
            tile = int(tiling.op_w_tile[op])
            first_w[tile] = min(first_w.get(tile, (s, 0))[0], s), int(w_size[op])
        if x_dram[op]:
            tile = int(tiling.op_x_tile[op])
            first_x[tile] = min(first_x.get(tile, (s, 0))[0], s), int(x_size[op])
    starts = np.array([s for s, _ in first_w.values()] + [s for s, _ in first_x.values()])
    sizes = np.array([b for _, b in first_w.values()] + [b for _, b in first_x.values()])
    for s in np.unique(starts):
        needed = sizes[starts <= s].sum()
        assert needed <= t.dram_bytes_per_cycle * s * sched.slice_cycles + 1e-6, f"slice {s}: {needed} bytes"


@pytest.mark.parametrize("seed", [3, 19, 42, 77])
@pytest.mark.parametrize("gb_per_s", [2.0, 50.0])
def test_no_op_starts_before_the_dram_delivered_its_tiles(seed, gb_per_s, technology):
    sched, system = _run(random_workload(seed), technology, gb_per_s=gb_per_s)
    _delivered_in_time(sched, system)
    simulate(sched)


def test_the_stream_reads_every_stored_weight_and_the_input_once(technology):
    workload = random_workload(11)
    sched, system = _run(workload, technology)
    stored = sum(g.depth * g.cols for g in workload.gemms if not g.weights_from) * technology.weight_bytes
    inputs = sum(g.rows * g.depth for g in workload.gemms if not g.inputs) * technology.activation_bytes
    assert sched.dram.bytes == stored + inputs == workload_dram_bytes(workload, technology)
    run = simulate(sched)
    assert run.energy_j["dram"] == pytest.approx(sched.dram.bytes * technology.dram_pj_per_byte * 1e-12)


def _layer(name, rows, depth, cols, *tags):
    return CodeLayer(name, {"i": rows, "k": depth, "j": cols}, tuple(tags))


def test_few_rows_wait_on_the_stream_and_many_rows_hide_it(technology):
    """A transformer-like layer at batch one (few rows, large weights) runs at the DRAM's pace; a layer
    that reuses each weight over many rows keeps its pods busy at the same bandwidth."""
    thin = workload_from_layers("thin", [_layer("a", 8, 256, 256), _layer("b", 8, 256, 256, "from:a")])
    wide = workload_from_layers("wide", [_layer("a", 256, 4, 256), _layer("b", 256, 256, 32, "from:a")])
    slow, fast = 4.0, 400.0  # GB/s at 1 GHz: 4 and 400 bytes a cycle
    thin_slow, system = _run(thin, technology, gb_per_s=slow)
    thin_fast, _ = _run(thin, technology, gb_per_s=fast)
    assert thin_slow.slices * thin_slow.slice_cycles >= thin_slow.dram.cycles
    assert thin_slow.slices > 5 * thin_fast.slices
    wide_slow, _ = _run(wide, technology, gb_per_s=slow)
    wide_fast, _ = _run(wide, technology, gb_per_s=fast)
    assert wide_slow.slices <= 1.1 * wide_fast.slices


def test_a_schedule_moved_before_its_weights_arrive_is_caught(technology):
    thin = workload_from_layers("thin", [_layer("a", 8, 256, 256)])
    sched, _ = _run(thin, technology, gb_per_s=4.0)
    late = int(np.argmax(sched.dram.op_ready_slice))
    assert sched.dram.op_ready_slice[late] > 0
    slices = sched.op_slice.copy()
    slices[late] = 0
    with pytest.raises(ScheduleViolation, match="DRAM"):
        simulate(dataclasses.replace(sched, op_slice=slices))


def test_the_granularity_bound_never_beats_the_stream(technology):
    from engine.pods.studies import utilization_bound
    thin = workload_from_layers("thin", [_layer("a", 8, 256, 256), _layer("b", 8, 256, 256, "from:a")])
    bounds = []
    for gb_per_s in (4.0, 400.0):
        system = build_system(8, 8, 8, "butterfly-2", dataclasses.replace(technology, dram_gb_per_s=gb_per_s))
        bound = utilization_bound(thin, system)
        stream = workload_dram_bytes(thin, system.technology) / system.technology.dram_bytes_per_cycle
        assert bound <= thin.macs / (system.pes * stream) + 1e-12
        bounds.append(bound)
    assert bounds[0] < bounds[1]


def test_each_fill_takes_its_banks_port_for_a_slice(technology):
    """A tile from DRAM is written into the single-ported bank that holds it: at most one fill per bank
    and slice, so however fast the DRAM, N banks take at most N tiles a slice, and a bank's k-th
    fill is in slice k or later; every op starts after its tiles' fills."""
    layer = workload_from_layers("one", [_layer("a", 8, 64, 96)])  # 8 x 12 = 96 W tiles, 8 X tiles
    sched, system = _run(layer, technology, pods=4, gb_per_s=1e6)
    dram = sched.dram
    assert len(dram.fill_slice) == 96 + 8
    for is_x in (False, True):
        mine = dram.fill_x == is_x
        for bank in range(4):
            slices = np.sort(dram.fill_slice[mine & (dram.fill_bank == bank)])
            assert np.all(slices == np.arange(len(slices)))  # back to back, one a slice
    w_fill = dict(zip(dram.fill_tile[~dram.fill_x], dram.fill_slice[~dram.fill_x]))
    assert all(sched.op_slice[op] > w_fill[w] for op, w in enumerate(sched.tiling.op_w_tile))
    assert sched.dram.op_ready_slice.max() == 96 // 4  # the last W tile's bank takes 24 fills first
    simulate(sched)


def test_a_read_in_a_fill_slice_is_caught(technology):
    """The replay checks the stream's writes against the pods' reads of the same bank."""
    sched, _ = _run(random_workload(19), technology)
    dram = sched.dram
    op = int(np.argmax(sched.tiling.gemm_stored_weights[sched.tiling.block_gemm[sched.tiling.op_block]]))
    w = sched.tiling.op_w_tile[op]
    fill = np.flatnonzero(~dram.fill_x & (dram.fill_tile == w))[0]
    others = np.flatnonzero(~dram.fill_x & (dram.fill_bank == dram.fill_bank[fill]))
    late = dram.fill_slice.copy()
    late[fill] = sched.op_slice[op]  # the fill moved onto the read (the bank's other fills kept apart)
    if np.any(late[others[others != fill]] == late[fill]):
        pytest.skip("another fill of that bank sits in that slice")
    with pytest.raises(ScheduleViolation, match="DRAM stream writes it"):
        simulate(dataclasses.replace(sched, dram=dataclasses.replace(dram, fill_slice=late)))


def test_the_granularity_bound_never_beats_the_bank_writes(technology):
    """However fast the DRAM, the stream's tiles enter one per bank and slice: with 2 pods, 96 W tiles
    take 48 slices, which bounds the utilisation the sweep reports, and the scheduler agrees."""
    from engine.pods.studies import utilization_bound
    layer = workload_from_layers("one", [_layer("a", 8, 64, 96)])
    fast = dataclasses.replace(technology, dram_gb_per_s=1e6)
    system = build_system(8, 8, 2, "butterfly-2", fast)
    assert workload_dram_cycles(layer, system) == 48 * system.slice_cycles
    assert utilization_bound(layer, system) <= layer.macs / (system.pes * 48 * system.slice_cycles) + 1e-12
    sched, _ = _run(layer, technology, pods=2, gb_per_s=1e6)
    assert sched.slices > 48
