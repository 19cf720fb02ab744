"""The scheduler's invariants over random workloads (fixed seeds): never a bank serving two tiles (or
two accesses) in a slice, never a route set the interconnect cannot carry, never a pod doing two
things at once, never a read before its write."""
from collections import defaultdict

import numpy as np
import pytest

from engine.pods.interconnect import butterfly_links
from engine.pods.scheduler import schedule
from engine.pods.simulate import ScheduleViolation, simulate
from engine.pods.system import build_system
from engine.pods.tiling import tile_workloads

from pod_workloads import random_workload

SEEDS = [3, 11, 19, 27, 42, 58, 77, 91]


def check_schedule(sched):
    tiling, system = sched.tiling, sched.system
    network, n = system.interconnect, system.pods
    assert np.all(sched.op_x_bank == tiling.op_x_tile % n) and np.all(sched.op_w_bank == tiling.op_w_tile % n)
    pods = defaultdict(list)
    x_reads, w_reads, p_access = defaultdict(set), defaultdict(set), defaultdict(list)
    routes = defaultdict(list)  # (slice, network) -> [(source, dest, plane)]
    for op in range(tiling.ops):
        first, span, pod = int(sched.op_slice[op]), int(sched.op_span[op]), int(sched.op_pod[op])
        for s in range(first, first + span):
            pods[s].append(pod)
            x_reads[s, int(sched.op_x_bank[op])].add(int(tiling.op_x_tile[op]))
            p_access[s, int(sched.op_p_bank[op])].append(("write", op))
            routes[s, "x"].append((int(sched.op_x_bank[op]), pod, int(sched.op_x_plane[op])))
            routes[s, "p"].append((pod, int(sched.op_p_bank[op]), int(sched.op_p_plane[op])))
            if sched.op_q_bank[op] >= 0:
                p_access[s, int(sched.op_q_bank[op])].append(("read", op))
                routes[s, "q"].append((int(sched.op_q_bank[op]), pod, int(sched.op_q_plane[op])))
        w_reads[first, int(sched.op_w_bank[op])].add(int(tiling.op_w_tile[op]))
        routes[first, "w"].append((int(sched.op_w_bank[op]), pod, int(sched.op_w_plane[op])))
    dram = sched.dram  # the DRAM stream's writes take the same single ports
    for s, bank, is_x, tile in zip(dram.fill_slice, dram.fill_bank, dram.fill_x, dram.fill_tile):
        assert bank == tile % n
        (x_reads if is_x else w_reads)[int(s), int(bank)].add(-1 - int(tile))  # a write: negative
    for s, held in pods.items():
        assert len(held) == len(set(held)), f"slice {s}: a pod holds two tile operations"
    for (s, bank), tiles in list(x_reads.items()) + list(w_reads.items()):
        assert len(tiles) == 1, f"slice {s}: bank {bank} serves tiles {sorted(tiles)}"
    for (s, bank), uses in p_access.items():
        assert len(uses) == 1, f"slice {s}: partial-sum bank {bank} accessed {len(uses)} times"
    for (s, _), used in routes.items():
        receiving = defaultdict(set)
        for source, dest, plane in used:
            receiving[dest].add(source)
        assert all(len(sources) == 1 for sources in receiving.values())
        if network.blocking:
            carried = defaultdict(set)
            for source, dest, plane in used:
                assert 0 <= plane < network.expansion
                for link in butterfly_links(n, source, dest):
                    carried[plane, link].add(source)
            assert all(len(sources) == 1 for sources in carried.values()), f"slice {s}: unroutable link sharing"
    simulate(sched)  # replays the dependences; raises ScheduleViolation on a read before a write


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("interconnect", ["butterfly-1", "butterfly-2", "benes", "crossbar"])
def test_schedules_respect_banks_routes_and_dependences(seed, interconnect, technology):
    workload = random_workload(seed)
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.choice([4, 8])), int(rng.choice([4, 8]))
    system = build_system(rows, cols, int(rng.choice([4, 8, 16])), interconnect, technology)
    options = ({}, {"aggregation": "chain"}, {"conventional": True}, {"row_aligned": False, "partition": 2})
    sched = schedule(tile_workloads(workload, rows, cols, **options[SEEDS.index(seed) % 4]), system)
    check_schedule(sched)


def test_multi_tenant_schedule_respects_the_same_rules(technology):
    system = build_system(8, 8, 16, "butterfly-2", technology)
    sched = schedule(tile_workloads([random_workload(5, name="a"), random_workload(6, name="b")], 8, 8), system)
    check_schedule(sched)


def test_a_tampered_schedule_is_caught(technology):
    system = build_system(4, 4, 4, "crossbar", technology)
    sched = schedule(tile_workloads(random_workload(1), 4, 4), system)
    later = np.flatnonzero(sched.tiling.block_deps and np.array([bool(d) for d in sched.tiling.block_deps]))
    block = int(later[0])
    op = int(sched.tiling.block_first_op[block])
    sched.op_slice[op] = 0
    sched.op_pod[op] = 0
    with pytest.raises(ScheduleViolation):
        simulate(sched)


@pytest.mark.parametrize("seed", SEEDS[:4])
@pytest.mark.parametrize("units", [1, 3])
def test_a_bounded_post_processor_sums_every_partial_sum_within_its_rate_and_delays_readers(seed, units, technology):
    from engine.pods.scheduler import block_aggregations  # noqa: PLC0415
    workload = random_workload(seed)
    system = build_system(8, 8, 8, "butterfly-2", technology)
    tiling = tile_workloads(workload, 8, 8)
    free = schedule(tiling, system)
    bounded = schedule(tiling, system, post_processors=units)
    check_schedule(bounded)
    assert bounded.post_used.max(initial=0) <= units
    assert bounded.post_used.sum() == block_aggregations(tiling).sum() > 0
    for block, deps in enumerate(tiling.block_deps):  # readers start after the last aggregation of what they read
        lo = tiling.block_first_op[block]
        begin = bounded.op_slice[lo:lo + tiling.block_op_count[block]].min()
        assert all(begin >= bounded.block_ready[d] for d in deps)
    # one aggregation per (row block, column tile) and partial sum beyond the first; none when chained
    chained = tile_workloads(workload, 8, 8, aggregation="chain")
    assert block_aggregations(chained).sum() == 0


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_tenant_first_orders_respect_the_same_rules(seed, technology):
    system = build_system(8, 8, 16, "butterfly-2", technology)
    tiling = tile_workloads([random_workload(seed, name="a"), random_workload(seed + 1, name="b")], 8, 8,
                            aggregation="chain")
    for first in (0, 1):
        check_schedule(schedule(tiling, system, first=first))


def test_a_chained_partial_sum_is_read_in_the_slice_after_its_producer(technology):
    """The producer of a chained partial sum keeps its bank's port free for the reader's next slice,
    so a lone reduction chain runs one slice after another (no other pod's write takes the bank)."""
    from engine.pods.workload import Gemm, PodWorkload  # noqa: PLC0415
    system = build_system(8, 8, 4, "crossbar", technology)
    # 2 independent chains of 6 (one per column tile) on 4 pods: each chained op reads a partial-sum
    # bank and writes another, so the 4 single-ported banks carry the 2 chains side by side, no gaps
    tiling = tile_workloads(PodWorkload("r", (Gemm("g", 8, 48, 16),)), 8, 8, aggregation="chain")
    sched = schedule(tiling, system)
    check_schedule(sched)
    chained = tiling.op_pred >= 0
    assert np.all(sched.op_slice[chained] == sched.op_slice[tiling.op_pred[chained]] + 1)
    # once the DRAM stream has written the first tiles into their banks, the chains run back to back
    assert sched.slices == int(sched.op_slice.min()) + 6
    assert sched.op_slice.min() >= sched.dram.op_ready_slice.min() > 0


def test_one_pod_cannot_chain_partial_sums(technology):
    """A chained operation reads one partial-sum bank and writes another: with one pod (one bank)
    that is an error, not an endless search for a second bank."""
    from engine.errors import EngineError  # noqa: PLC0415
    from engine.pods.workload import Gemm, PodWorkload  # noqa: PLC0415
    tiling = tile_workloads(PodWorkload("r", (Gemm("g", 8, 24, 8),)), 8, 8, aggregation="chain")
    with pytest.raises(EngineError, match="chained partial sums need at least 2 pods"):
        schedule(tiling, build_system(8, 8, 1, "crossbar", technology))
    check_schedule(schedule(tiling, build_system(8, 8, 2, "crossbar", technology)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("interconnect", ["butterfly-1", "butterfly-2", "benes", "crossbar"])
@pytest.mark.parametrize("units", [0, 1, 3])
def test_mixed_aggregation_respects_banks_routes_dependences_and_the_post_processor(seed, interconnect, units,
                                                                                     technology):
    """SOSA's per-partial-sum choice: every partial sum beyond a reduction's first is either chained
    (read from the bank its producer wrote, after it) or cut to the post-processor, which never sums
    more than its rate a slice; a reduction's sum is ready after all its partial sums."""
    workload = random_workload(seed)
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.choice([4, 8])), int(rng.choice([4, 8]))
    system = build_system(rows, cols, int(rng.choice([1, 4, 8, 16])), interconnect, technology)
    tiling = tile_workloads(workload, rows, cols, aggregation="mixed",
                            conventional=SEEDS.index(seed) % 3 == 1)
    sched = schedule(tiling, system, post_processors=units)
    check_schedule(sched)
    optional = tiling.op_pred >= 0
    assert np.all((sched.op_q_bank[optional] >= 0) != sched.op_alone[optional])
    assert not np.any(sched.op_alone[~optional])
    if units:
        assert sched.post_used.max(initial=0) <= units
        assert sched.post_used.sum() == sched.op_alone.sum()  # one pairwise sum per cut


def test_mixed_aggregation_chains_when_the_pods_are_busy_and_cuts_when_they_are_idle(technology):
    """A lone reduction on idle pods runs its partial products side by side (cut to the post-processor);
    many reductions on few pods continue their chains in the slots their producers' pods free."""
    from engine.pods.workload import Gemm, PodWorkload  # noqa: PLC0415
    lone = tile_workloads(PodWorkload("lone", (Gemm("g", 8, 64, 8),)), 8, 8, aggregation="mixed")
    sched = schedule(lone, build_system(8, 8, 8, "crossbar", technology), post_processors=7)
    check_schedule(sched)
    assert sched.op_alone[1:].all() and sched.slices == 1 + 1  # after the slice bringing the weights
    # a post-processor without an idle unit in the slot both partial sums exist: the chain goes on
    sched = schedule(lone, build_system(8, 8, 8, "crossbar", technology), post_processors=2)
    check_schedule(sched)
    assert 2 <= sched.op_alone.sum() < 7 and (sched.op_q_bank >= 0).sum() > 0 and sched.post_used.max() == 2
    crowd = tile_workloads(PodWorkload("crowd", (Gemm("g", 64, 64, 64),)), 8, 8, aggregation="mixed")
    sched = schedule(crowd, build_system(8, 8, 4, "crossbar", technology), post_processors=2)
    check_schedule(sched)
    assert (sched.op_q_bank >= 0).sum() > 10 * sched.op_alone.sum()


@pytest.mark.parametrize("seed", range(6))
def test_the_scan_skips_only_slices_no_op_can_start_in(seed):
    """`_next_open` (the scheduler's skip over closed slices) returns the first slice whose span has
    an idle pod and a free partial-sum port in every slice, or holds the slice a cut frees."""
    from engine.pods.schedule_kernel import _next_open  # noqa: PLC0415
    rng = np.random.default_rng(seed)
    idle = rng.integers(0, 3, 200) * (rng.random(200) < 0.9)
    p_free = rng.integers(0, 2, 200) * (rng.random(200) < 0.6)
    for _ in range(200):
        s, span = int(rng.integers(0, 190)), int(rng.integers(1, 4))
        keep = int(rng.integers(-1, 200))
        expected = s
        while expected + span <= 200 and not (expected <= keep < expected + span) and not all(
                idle[t] > 0 and p_free[t] > 0 for t in range(expected, expected + span)):
            expected += 1
        found = _next_open(idle, p_free, s, span, keep)
        if expected + span > 200:  # none open: past the end (the caller's overflow), wherever
            assert found + span > 200
        else:
            assert found == expected
