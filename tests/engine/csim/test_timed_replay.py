"""The timed C simulation's replay on hand-written dataflow kernels whose cycle counts follow from the
rules by hand (docs/export.md, "Timed C simulation"): one iteration per II, a word readable
IO_LATENCY = 2 cycles after its write, a write waiting for a free slot of its FIFO's depth, a loop
done `depth` = 2 cycles after its last issue (functions that are no module of the descriptor), and
helper calls on consecutive lines that share no stream running in parallel.

Each kernel replaces src/kernel_kernel.cpp of a small MM export (it keeps kernel0's signature; its
values are not the matrix product, so the harness's verdict is FAIL and only the timing is checked)."""
from __future__ import annotations

import shutil

import pytest

from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.export import export_project
from engine.resources import KERNELS

PARAMS = {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 2, "k_t2": 2}
HEAD = '#include <hls_stream.h>\n#include "kernel_kernel.h"\n'
# kernel0's ports in the types kernel_kernel.h declares them with (a serialized output's bus word)
TOP = ('extern "C" void kernel0(const A_DRAM_WORD *A, const B_DRAM_WORD *B, C_DRAM_WORD *C) {\n'
       '#pragma HLS dataflow\n')


@pytest.fixture(scope="module")
def base(tmp_path_factory, timed_cache):
    """The export whose kernel each test replaces, and the session's cache of timed builds."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "8", "J": "8", "K": "8"})
    return export_project(space, space.design("i-j__i-j.k"), PARAMS,
                          tmp_path_factory.mktemp("timed") / "mm", floorplan="none"), timed_cache


def timed_kernel(base, folder, functions: str, body: str):
    (exported, cache), project = base, folder / "project"
    shutil.copytree(exported, project)
    (project / "src" / "kernel_kernel.cpp").write_text(HEAD + functions + TOP + body + "}\n")
    return run_timed_csim(project, cache=cache)


def _stream(name: str, depth: int) -> str:
    return f'  hls::stream<int> {name}("{name}");\n#pragma HLS stream variable={name} depth={depth}\n'


PAIR = """
static void producer(hls::stream<int> &out) {
  for (int i = 0; i < 100; i++) {
#pragma HLS pipeline II=1
    out.write(i);
  }
}
static void consumer(hls::stream<int> &in) {
  for (int i = 0; i < 100; i++) {
#pragma HLS pipeline II=2
    in.read();
  }
}
"""


@pytest.fixture(scope="module")
def pairs(base, tmp_path_factory):
    """The same producer / consumer pair twice: through a FIFO of depth 128 and one of depth 1."""
    body = _stream("deep", 128) + _stream("shallow", 1)
    body += "  producer(deep);\n  consumer(deep);\n  producer(shallow);\n  consumer(shallow);\n"
    return timed_kernel(base, tmp_path_factory.mktemp("pairs"), PAIR, body)


def test_a_deep_fifo_lets_the_producer_run_ahead_of_a_slower_consumer(pairs):
    producer, consumer = pairs.process("producer"), pairs.process("consumer")
    # producer: issues 0..99, done 2 cycles after its last issue
    assert (producer.busy, producer.stall_out, producer.end) == (100, 0, 101)
    # consumer: iteration i at 2 + 2i (the first word arrives at 2), done 2 cycles after 2 + 2 * 99
    assert (consumer.busy, consumer.stall_in, consumer.end) == (200, 2, 202)
    assert pairs.cycles == 202 and pairs.complete and pairs.slowest == "consumer"
    assert not pairs.passed and pairs.csim.startswith("FAIL")  # kernel0 does not compute C here


def test_a_fifo_of_depth_one_throttles_the_producer_to_the_consumer(pairs):
    producer, consumer = pairs.process("producer#2"), pairs.process("consumer#2")
    # word w (w >= 1) waits for word w - 1 to be read (at 2w) + 1 - latency 2: issues at 2w - 1
    assert (producer.busy, producer.stall_out, producer.end) == (100, 98, 2 * 99 - 1 + 2)
    assert (consumer.busy, consumer.end) == (200, 202)


CHAIN = """
static void source(hls::stream<int> &out) {
  for (int i = 0; i < 64; i++) {
#pragma HLS pipeline II=1
    out.write(i);
  }
}
static void stage(hls::stream<int> &in, hls::stream<int> &out) {
  stage_i:
  for (int i = 0; i < 8; i++) {
    stage_j:
    for (int j = 0; j < 8; j++) {
#pragma HLS pipeline II=1
      out.write(in.read() + 1);
    }
  }
}
static void slow(hls::stream<int> &in, hls::stream<int> &out) {
  for (int i = 0; i < 64; i++) {
#pragma HLS pipeline II=3
    out.write(in.read());
  }
}
static void sink(hls::stream<int> &in) {
  for (int i = 0; i < 64; i++) {
#pragma HLS pipeline II=1
    in.read();
  }
}
"""


@pytest.fixture(scope="module")
def chains(base, tmp_path_factory):
    """A chain of four II=1 stages, and beside it a chain whose middle stage has II=3."""
    body = "".join(_stream(f"s{k}", 2) for k in range(5)) + "".join(_stream(f"t{k}", 2) for k in range(3))
    body += "  source(s0);\n" + "".join(f"  stage(s{k}, s{k + 1});\n" for k in range(4)) + "  sink(s4);\n"
    body += "  source(t0);\n  stage(t0, t1);\n  slow(t1, t2);\n  sink(t2);\n"
    return timed_kernel(base, tmp_path_factory.mktemp("chains"), CHAIN, body)


def test_a_chain_takes_its_items_plus_two_cycles_per_hop(chains):
    chain = chains.processes[:6]
    # stage k issues item i at i + 2k (a perfect nest: one pipeline, no refill between rows); the sink,
    # hop 5, issues item 63 at 63 + 10 and is done 2 cycles later
    assert [p.name for p in chain] == ["source", "stage", "stage#2", "stage#3", "stage#4", "sink"]
    assert all(p.stall_out == 0 and p.busy == 64 for p in chain)
    assert [p.end for p in chain] == [63 + 2 * k + 2 for k in range(6)]


def test_a_slow_stage_paces_the_chain_and_backs_up_its_producer(chains):
    slow = chains.process("slow")
    # the II=3 stage reads item i at 4 + 3i; the sink reads it 2 cycles after it is written
    assert (slow.busy, slow.end) == (192, 4 + 3 * 63 + 2)
    assert chains.process("sink#2").end == 4 + 3 * 63 + 2 + 2 == chains.cycles
    assert chains.process("stage#5").stall_out > 0 and chains.slowest == "slow" and chains.complete


BUFFERED = """
static void loader(hls::stream<int> &out) {
  for (int i = 0; i < 4 * 50; i++) {
#pragma HLS pipeline II=1
    out.write(i);
  }
}
static void load(hls::stream<int> &in, int buffer[50]) {
#pragma HLS inline off
  for (int i = 0; i < 50; i++) {
#pragma HLS pipeline II=1
    buffer[i] = in.read();
  }
}
static void feed(int buffer[50], hls::stream<int> &out) {
#pragma HLS inline off
  for (int i = 0; i < 50; i++) {
#pragma HLS pipeline II=1
    out.write(buffer[i]);
  }
}
static void buffered(hls::stream<int> &in, hls::stream<int> &out) {
  int ping[50], pong[50];
  load(in, ping);
  for (int b = 0; b < 3; b++) {
    if (b % 2 == 0) {
      load(in, pong);
      feed(ping, out);
    } else {
      load(in, ping);
      feed(pong, out);
    }
  }
  feed(pong, out);
}
static void drain(hls::stream<int> &in) {
  for (int i = 0; i < 4 * 50; i++) {
#pragma HLS pipeline II=1
    in.read();
  }
}
"""


@pytest.fixture(scope="module")
def buffers(base, tmp_path_factory):
    """The double-buffered process, and a copy whose loads are guarded by an `if`."""
    function = BUFFERED[BUFFERED.index("static void buffered("):BUFFERED.index("static void drain(")]
    guarded = function.replace("buffered(", "guarded(").replace("      load(in, p", "      if (b >= 0) load(in, p")
    body = "".join(_stream(n, 2) for n in "abcd")
    body += "  loader(a);\n  buffered(a, b);\n  drain(b);\n  loader(c);\n  guarded(c, d);\n  drain(d);\n"
    return timed_kernel(base, tmp_path_factory.mktemp("buffers"), BUFFERED + guarded, body)


def test_load_and_feed_on_consecutive_lines_overlap(buffers):
    buffered = buffers.process("buffered")
    # the if and the else branch are two groups of a load and a feed, each call site a thread
    lines = [n for n, l in enumerate(BUFFERED.splitlines(), start=3) if l.startswith("      load(")]
    expected = sorted(f"buffered/{f}@{n}" for f in ("load", "feed") for n in lines)
    assert sorted(h.name for h in buffered.helpers) == expected
    # first load alone: words arrive from cycle 2, issues 2..51, done at 53; then 3 blocks of
    # load || feed, (50 - 1) + 2 cycles each, then the last feed: 53 + 3 * 51 + 51
    assert buffered.end == 53 + 3 * 51 + 51
    assert buffers.process("drain").end == buffered.end + 2  # reads the last word 2 cycles after its write
    assert buffered.iterations == 4 * 50 + 4 * 50
    # waiting to be called, or for the calls to return, is no stall: only the first word's 2 cycles are
    assert buffered.stall_in == 2 and all(h.stall_in == h.stall_out == 0 for h in buffered.helpers)
    # per call 50 iterations and the pipeline's drain (depth 2 - II 1); the if branch runs twice
    assert sorted(h.busy for h in buffered.helpers) == [51, 51, 102, 102]


def test_calls_guarded_by_an_if_run_one_after_the_other(buffers):
    guarded = buffers.process("guarded")
    # 8 loops back to back, each starting 2 cycles after the previous one's last issue
    assert guarded.helpers == [] and guarded.busy == 8 * 50 + 7 * (2 - 1)
    assert guarded.end == 53 + 7 * 51 == buffers.cycles - 2


ACCUMULATE = """
static void source(hls::stream<float> &out) {
  for (int i = 0; i < 64; i++) {
#pragma HLS pipeline II=1
    out.write(1.0f);
  }
}
static void accumulate(hls::stream<float> &in, hls::stream<float> &out) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 64; i++) {
#pragma HLS pipeline II=1
    acc[i % DISTANCE] = acc[i % DISTANCE] + in.read();
  }
  for (int i = 0; i < 8; i++) {
#pragma HLS pipeline II=1
    out.write(acc[i]);
  }
}
static void sink(hls::stream<float> &in) {
  for (int i = 0; i < 8; i++) {
#pragma HLS pipeline II=1
    in.read();
  }
}
"""


@pytest.fixture(scope="module")
def recurrences(base, tmp_path_factory):
    functions, body = "", ""
    for d in (2, 4, 8):
        functions += (ACCUMULATE.replace("DISTANCE", str(d)).replace("source(", f"source{d}(")
                      .replace("accumulate(", f"accumulate{d}(").replace("sink(", f"sink{d}("))
        body += (f'  hls::stream<float> a{d}("a{d}");\n#pragma HLS stream variable=a{d} depth=2\n'
                 f'  hls::stream<float> b{d}("b{d}");\n#pragma HLS stream variable=b{d} depth=2\n'
                 f"  source{d}(a{d});\n  accumulate{d}(a{d}, b{d});\n  sink{d}(b{d});\n")
    return timed_kernel(base, tmp_path_factory.mktemp("recurrences"), functions, body)


@pytest.mark.parametrize("distance, ii", [(2, 4), (4, 2), (8, 1)])
def test_a_floating_point_recurrence_raises_the_ii(recurrences, distance, ii):
    # float add: 8 cycles (resources/operators.json); an element updated again `distance` iterations later
    notes = [n for n in recurrences.loops if n["function"] == f"accumulate{distance}"]
    if ii == 1:
        assert notes == []
    else:
        assert [(n["pragma_ii"], n["ii"]) for n in notes] == [(1, ii)] and "acc" in notes[0]["reason"]
    # 64 iterations at the achieved II, the drain between the loops (depth 2 beyond the last II), 8 writes
    assert recurrences.process(f"accumulate{distance}").busy == 64 * ii + (2 - ii) + 8


CROSSED = """
static void writer(hls::stream<int> &first, hls::stream<int> &second) {
  for (int i = 0; i < 8; i++) {
#pragma HLS pipeline II=1
    first.write(i);
  }
  for (int i = 0; i < 8; i++) {
#pragma HLS pipeline II=1
    second.write(i);
  }
}
static void reader(hls::stream<int> &first, hls::stream<int> &second) {
  for (int i = 0; i < 8; i++) {
#pragma HLS pipeline II=1
    second.read();
    first.read();
  }
}
"""


def test_fifos_too_shallow_for_the_order_of_the_words_deadlock_where_csim_passes_them(base, tmp_path):
    """A sequential C run has unbounded streams and never blocks; the replay has the emitted depths."""
    body = _stream("first", 2) + _stream("second", 2) + "  writer(first, second);\n  reader(first, second);\n"
    result = timed_kernel(base, tmp_path, CROSSED, body)
    assert not result.complete and result.deadlock
    assert result.deadlock == ["writer waits on full first", "reader waits on empty second"]


@pytest.mark.slow
def test_fifos_deep_enough_for_the_order_of_the_words_do_not_deadlock(base, tmp_path):
    body = _stream("first", 8) + _stream("second", 8) + "  writer(first, second);\n  reader(first, second);\n"
    deep = timed_kernel(base, tmp_path, CROSSED, body)
    assert deep.complete and deep.deadlock is None
