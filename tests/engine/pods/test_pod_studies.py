import dataclasses

import numpy as np
import pytest

from engine.pods.studies import (ScheduleOptions, granularity_point, granularity_sweep, interconnect_table,
                                 multitenancy, run_workloads, scale_table, utilization_bound)
from engine.pods.system import build_system, pods_at_power
from engine.pods.workload import Gemm, PodWorkload

from pod_workloads import random_workload


def test_peak_power_reproduces_sosa_table2_for_the_monolithic_array(technology):
    # 512x512: 0.4 pJ x 262144 PEs + 2.7 pJ x (512 + 5 x 512) bytes a cycle, no network
    system = build_system(512, 512, 1, "butterfly-2", technology)
    assert system.peak_power() == pytest.approx(113.2, abs=0.1)
    assert system.peak_ops_at(400) / 1e12 == pytest.approx(1853, rel=0.001)


def test_pod_count_at_the_budget_is_the_largest_power_of_two(technology):
    assert pods_at_power(32, 32, "butterfly-2", technology).pods == 256
    assert pods_at_power(16, 16, "butterfly-2", technology).pods == 512
    assert pods_at_power(64, 64, "butterfly-2", technology).pods == 128
    with pytest.raises(Exception, match="over the 1 W budget"):
        pods_at_power(64, 64, "butterfly-2", technology, watts=1)


def test_one_exact_tile_operation(technology):
    """An r x r x c GEMM on one standard pod (U = V = 1): one slice of r cycles plus the r + c - 2 skew,
    after the slice in which its weights and input arrive from DRAM."""
    standard = dataclasses.replace(technology, array_multicast=1, array_fan_in=1)
    system = build_system(8, 8, 1, "crossbar", standard)
    _, run = run_workloads([PodWorkload("one", (Gemm("g", 8, 8, 8),))], system)
    assert (run.tile_ops, run.slices, run.cycles) == (1, 2, 2 * (8 + 14))
    assert run.dram_bytes == 128 and run.dram_cycles < run.cycles / 2
    assert run.utilization == pytest.approx(512 / (64 * 44))
    assert run.energy_j["mac"] == pytest.approx(512 * 0.4e-12)
    # SRAM: X 64 B + W 64 B + psum 128 B written and read back + 64 B output + X and W written from DRAM
    assert run.energy_j["sram"] == pytest.approx((64 + 64 + 256 + 64 + 128) * 2.7e-12)
    assert run.energy_j["interconnect"] == 0  # one pod: no network


def test_fill_and_drain_per_tile_operation(technology):
    """SOSA's U = V = 16 multicast and fan-in: a 32x32 pod's operation pays 2 + 2 - 2 cycles of fill
    and drain, a standard array's r + c - 2; every operation pays it (idle PEs between tasks)."""
    sosa = build_system(32, 32, 1, "crossbar", technology)
    standard = build_system(32, 32, 1, "crossbar", dataclasses.replace(technology, array_multicast=1,
                                                                       array_fan_in=1))
    assert (sosa.fill_drain_cycles, standard.fill_drain_cycles) == (2, 62)
    assert list(sosa.op_cycles(np.array([5, 32, 40]))) == [34, 34, 42]
    assert sosa.slice_cycles == 34
    _, run = run_workloads([PodWorkload("two", (Gemm("g", 64, 32, 32),))], sosa)
    # the one single-ported X bank is written by the DRAM stream with both input tiles (slices 0 and 1)
    # before it serves the first op (slice 2), then the second (slice 3)
    assert (run.tile_ops, run.cycles, run.cycles_per_tile_op) == (2, 2 * 34 + 68, 34)
    assert run.utilization == pytest.approx(64 * 32 * 32 / (1024 * 136))


def test_run_figures_are_consistent(technology):
    system = build_system(8, 8, 16, "butterfly-2", technology)
    _, run = run_workloads([random_workload(4)], system)
    assert run.macs == random_workload(4).macs
    assert run.utilization == pytest.approx(run.macs / (system.pes * run.cycles))
    assert run.effective_tops == pytest.approx(run.peak_tops * run.utilization)
    assert run.busy_pods_per_cycle.max() <= 16 and len(run.busy_pods_per_cycle) == run.cycles
    assert all(v > 0 for v in run.energy_j.values())


def test_sosa_tiling_beats_the_conventional_one_on_many_pods(technology):
    system = build_system(8, 8, 64, "butterfly-2", technology)
    w = PodWorkload("tall", (Gemm("a", 512, 32, 16), Gemm("b", 512, 16, 16, inputs=("a",))))
    sosa = run_workloads([w], system)[1]
    conventional = run_workloads([w], system, ScheduleOptions(conventional=True))[1]
    assert sosa.utilization > 2 * conventional.utilization


def test_benes_exposes_its_latency_and_butterfly_hides_it(technology):
    rows = interconnect_table([random_workload(8)], technology, rows=16, cols=16, pods=64)
    by = {r.interconnect: r for r in rows}
    assert by["benes"].cycles_per_tile_op > by["butterfly-2"].cycles_per_tile_op == 16
    assert by["butterfly-2"].mw_per_byte < by["benes"].mw_per_byte < by["crossbar"].mw_per_byte


def test_multitenancy_fills_holes(technology):
    system = build_system(8, 8, 32, "butterfly-2", technology)
    result = multitenancy([random_workload(2, name="a"), random_workload(9, name="b")], system)
    assert result.joint_cycles < result.sequential_cycles
    assert result.gain == pytest.approx(result.joint_tops / result.sequential_tops, rel=0.02)
    assert result.joint_cycles == min(result.tried.values()) and result.joint_order in result.tried


@pytest.mark.parametrize("aggregation", ["mixed", "post-processor", "chain"])
def test_multitenancy_is_never_slower_than_one_after_another(aggregation, technology):
    """Over random pairs, on a blocking and a non-blocking network: together <= in turn, and the
    schedule kept is the shortest one tried (or in turn, when every joint order loses)."""
    for seed in range(12):
        for interconnect, pods in (("butterfly-1", 8), ("crossbar", 4)):
            system = build_system(8, 8, pods, interconnect, technology)
            pair = [random_workload(seed, name="a"), random_workload(seed + 50, name="b")]
            result = multitenancy(pair, system, ScheduleOptions(aggregation=aggregation))
            assert result.joint_cycles <= result.sequential_cycles == sum(result.alone_cycles)
            best = min(result.tried.values())
            assert result.joint_cycles == min(best, result.sequential_cycles)
            assert (result.joint_order == "in turn") == (best > result.sequential_cycles)


def test_a_small_network_fills_the_pods_a_large_one_leaves_idle(technology):
    """SOSA 6.1's setting in miniature: a long, narrow chain (few tile operations at a time, like
    BERT-medium at batch 1) beside a wide layer stack runs in the wide one's idle pods."""
    narrow = PodWorkload("narrow", tuple(Gemm(f"n{i}", 8, 8, 8, inputs=(f"n{i - 1}",) if i else ())
                                         for i in range(12)))
    wide = PodWorkload("wide", (Gemm("w0", 64, 8, 24), Gemm("w1", 64, 24, 8, inputs=("w0",))))
    system = build_system(8, 8, 8, "crossbar", technology)
    result = multitenancy([wide, narrow], system)
    assert result.alone_utilization[1] < 0.2          # the chain alone leaves most pods idle
    assert result.joint_cycles <= max(result.alone_cycles) + 2 * system.slice_cycles
    assert result.gain > 1.2


def test_scale_table_rows(technology):
    rows = scale_table([random_workload(1)], technology, arrays=(32, 16, 8), monolithic=32)
    assert [r.array for r in rows] == ["32x32", "16x16", "8x8"] and rows[0].pods == 1
    for r in rows:
        assert r.effective_tops == pytest.approx(r.peak_tops * r.utilization)
    chained = scale_table([random_workload(1)], technology, arrays=(32, 16), monolithic=32,
                          options=ScheduleOptions(aggregation="chain"))
    assert [r.array for r in chained] == ["16x16"]  # the one-pod monolithic array cannot chain


def test_utilization_bound_is_at_least_the_schedule(technology):
    system = build_system(8, 8, 16, "butterfly-2", technology)
    for seed in (1, 2, 3):
        w = random_workload(seed)
        run = run_workloads([w], system, ScheduleOptions(row_aligned=False))[1]
        assert utilization_bound(w, system) >= run.utilization * 0.999


def test_granularity_sweep_locally_and_on_dask(technology):
    w = [random_workload(3)]
    shapes = [(8, 8), (8, 16), (16, 8), (2048, 2048)]
    local = granularity_sweep(w, technology, shapes=shapes)
    assert [(p.rows, p.cols) for p in local] == shapes[:3]  # one 2048x2048 pod is over 400 W
    from distributed import LocalCluster  # noqa: PLC0415
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        remote = granularity_sweep(w, technology, shapes=shapes, scheduler=cluster.scheduler_address)
    assert remote == local
    assert granularity_point(8, 8, w, technology, "butterfly-2", 400.0) == local[0]


def test_closed_form_bound_matches_the_tile_list(technology):
    from engine.pods.scheduler import op_spans  # noqa: PLC0415
    from engine.pods.tiling import tile_workloads  # noqa: PLC0415
    for seed, (rows, cols, pods, name) in zip((1, 2, 3), ((8, 8, 16, "butterfly-2"), (5, 12, 8, "benes"),
                                                         (16, 4, 32, "crossbar"))):
        w = random_workload(seed)
        system = build_system(rows, cols, pods, name, technology)
        tiling = tile_workloads(w, rows, cols)
        spans = op_spans(tiling, system)
        per_gemm = np.bincount(tiling.block_gemm[tiling.op_block], weights=spans)
        slices = int(np.sum(np.ceil(per_gemm / pods)))
        assert utilization_bound(w, system) == pytest.approx(w.macs / (system.pes * slices * system.slice_cycles))
