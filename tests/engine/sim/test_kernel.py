"""The simulation kernel on hand-built networks: cycles worked out by hand from the timing rules
(docs/sim.md), stall accounting, and a deadlock's wait cycle."""
from __future__ import annotations

from engine.sim.kernel import Fifo, Op, Segment, Thread, run


def pipe(n: int, producer_ii: int, consumer_ii: int, depth: int = 2):
    f = Fifo("f", depth)
    p = Thread("P", "P", [Segment(n, writes=(Op(f, n),), ii=producer_ii, depth=2, latency=2)])
    c = Thread("C", "C", [Segment(n, reads=(Op(f, n),), ii=consumer_ii, depth=2, latency=2)])
    f.producer, f.consumer = p, c
    return p, c, f


def test_a_slow_consumer_paces_the_producer_through_a_full_fifo():
    p, c, f = pipe(10, producer_ii=1, consumer_ii=3)
    outcome = run([p, c], [f], budget=10**6)
    # token k arrives at k + 2; the consumer issues every 3 cycles from cycle 2: the last at 2 + 27,
    # done 2 cycles later
    assert outcome.deadlock is None and outcome.cycles == 2 + 9 * 3 + 2
    assert c.busy == 30 and c.stall_in == 2 and c.stall_out == 0
    # the producer may only write token w once token w - 2 has been read (one cycle later, minus the
    # 2 cycles its write takes to reach the FIFO): it ends up stalled on output
    assert p.stall_out > 0 and p.stall_in == 0
    assert p.busy + p.stall_out == p._last + 1
    assert f.peak == 2


def test_a_fast_consumer_waits_and_the_fifo_never_fills():
    p, c, f = pipe(10, producer_ii=4, consumer_ii=1)
    outcome = run([p, c], [f], budget=10**6)
    assert outcome.cycles == 9 * 4 + 2 + 2  # last token written at 36, arrives at 38, read, 2 to finish
    assert p.stall_out == 0 and c.stall_in == 38 - 9
    assert f.peak == 1


def test_a_new_loop_waits_for_the_previous_one_to_drain():
    th = Thread("T", "T", [Segment(5, depth=10), Segment(3, depth=2)])
    outcome = run([th], [], budget=10**6)
    # loop 1 issues at 0..4, completes at 14; loop 2 issues at 14..16, completes at 18
    assert outcome.cycles == 18
    assert th.busy == 4 + 10 + 3  # the drain between the loops counts as busy


def test_writing_two_fifos_in_the_other_order_than_they_are_read_deadlocks():
    x, y = Fifo("X", 2), Fifo("Y", 2)
    p = Thread("P", "P", [Segment(3, writes=(Op(x, 3),)), Segment(3, writes=(Op(y, 3),))])
    q = Thread("Q", "Q", [Segment(3, reads=(Op(y, 3),)), Segment(3, reads=(Op(x, 3),))])
    x.producer, x.consumer, y.producer, y.consumer = p, q, p, q
    outcome = run([p, q], [x, y], budget=10**6)
    cycle = {(th.name, f.name, side) for th, f, side in outcome.deadlock}
    assert cycle == {("P", "X", "out"), ("Q", "Y", "in")}
    assert x.written == 2 and y.written == 0


def test_the_budget_stops_threads_without_reporting_a_deadlock():
    p, c, f = pipe(1000, producer_ii=1, consumer_ii=1)
    outcome = run([p, c], [f], budget=100)
    assert outcome.over_budget and outcome.deadlock is None and outcome.cycles == 100
    assert c._last <= 100 and 90 < c.iterations < 100


def test_a_dram_port_paces_its_loop_and_catches_up_after_a_stall():
    # single-beat bursts at 16 outstanding and a 64-cycle latency: 65/16 cycles a word
    from engine.models.dram import AxiSettings, cycles_per_beat
    pace = cycles_per_beat(1, AxiSettings(max_burst_beats=64, outstanding=16, latency=64))
    assert pace == 65 / 16
    th = Thread("L3", "L3", [Segment(101, ii=1, depth=2, pace=pace)])
    assert run([th], [], budget=10**6).cycles == 100 * 65 // 16 + 2  # the last word at 406, done at 408
    assert th.stall_in == 406 - 100
    # a consumer slower than the port: the port's words wait for it and it never waits for them
    p, c, f = pipe(20, producer_ii=1, consumer_ii=8)
    p.segments = [Segment(20, writes=(Op(f, 20),), ii=1, depth=2, latency=2, pace=pace)]
    run([p, c], [f], budget=10**6)
    assert c.stall_in == 2  # only the first word's trip


def test_a_dram_port_paces_across_its_loop_invocations():
    # the port's next word slot carries over: invocations of one word each at 65/16 cycles a word
    # are a pace apart, not a loop depth apart (n words cost n paces, whatever the invocations)
    from engine.models.dram import AxiSettings, cycles_per_beat
    pace = cycles_per_beat(1, AxiSettings(max_burst_beats=64, outstanding=16, latency=64))
    one_word = Thread("L3", "L3", [Segment(1, ii=1, depth=2, pace=pace) for _ in range(100)])
    one_loop = Thread("L3", "L3", [Segment(100, ii=1, depth=2, pace=pace)])
    # the last word's slot is 99 paces after the first (rounded down), then the loop's depth
    assert run([one_word], [], budget=10**6).cycles == 99 * 65 // 16 + 2 == run([one_loop], [], budget=10**6).cycles
    # a loop that is slower than the port is not delayed by it: depth 8 > pace between invocations
    deep = Thread("L3", "L3", [Segment(1, ii=1, depth=8, pace=pace) for _ in range(10)])
    assert run([deep], [], budget=10**6).cycles == 10 * 8
