"""engine/csim/trace.py reads the emitter's conventions from a kernel source: dataflow processes, FIFO
depths, perfect pipelined nests, parallel helper calls, floating-point recurrences; a source that
breaks them is refused with its line. No compiler needed."""
from __future__ import annotations

import re

import pytest

from engine.csim.trace import TraceError, instrument

HEADER = "typedef float acc_t;\ntypedef int data_t;\n"

SOURCE = """#include <hls_stream.h>
static void load(hls::stream<int> &in, int buffer[8], bool enable) {
#pragma HLS inline off
  for (int i = 0; i < 8; i++) {
#pragma HLS loop_tripcount max=8
#pragma HLS pipeline II=1
    if (enable) buffer[i] = in.read();
  }
}
static void feed(int buffer[8], hls::stream<int> &out) {
#pragma HLS inline off
  for (int i = 0; i < 8; i++) {
#pragma HLS pipeline II=1
    out.write(buffer[i]);
  }
}
static void io(int id, hls::stream<int> &in, hls::stream<int> &out) {
  int ping[8], pong[8];
  for (int b = 0; b < 4; b++) {
    load(in, ping, b < 3);
    feed(pong, out);
    load(in, pong, true);
    feed(ping, in);
  }
}
static void pe(int i, int j, hls::stream<int> &in, hls::stream<float> &out) {
  acc_t local[4][4];
  data_t count[4];
  rows:
  for (int r = 0; r < 4; r++) {
    cols:
    for (int c = 0; c < 4; c++) {
#pragma HLS pipeline II=2
      local[r][c] = (local[r][c] + (float)in.read());
      count[r] = count[r] + 1;
      if (r < 3) local[r][0] += 1.0f;
    }
  }
  for (int t = 0; t < 2; t++) {
    int x = 0;
    for (int r = 0; r < 16; r++) {
#pragma HLS pipeline II=1
      out.write(local[r / 4][r % 4]);
    }
  }
}
extern "C" void kernel0(const int *A, float *C) {
#pragma HLS dataflow
  hls::stream<int> a("a");
#pragma HLS stream variable=a depth=4
  hls::stream<int> b("b");
  hls::stream<float> c("c");
#pragma HLS stream variable=c depth=16
  io(0, a, b);
  pe(0, 1, b, c);
  pe(0, 1, b, c);
}
"""


KERNEL0 = 'extern "C" void kernel0(const int *A, float *C) {'


def _line(text: str) -> int:
    return SOURCE.splitlines().index(text) + 1


@pytest.fixture
def traced():
    return instrument(SOURCE, path="k.cpp", header=HEADER)


def test_processes_streams_and_their_depths(traced):
    first = _line("  io(0, a, b);")
    assert [(p.label, p.function, p.line) for p in traced.processes] == [
        ("io(0)", "io", first), ("pe(0,1)", "pe", first + 1), ("pe(0,1)#2", "pe", first + 2)]
    assert traced.streams == {"a": 4, "b": 2, "c": 16}  # no pragma: Vitis's default depth 2


def test_perfect_nests_are_one_pipeline_and_other_pragmas_may_come_first(traced):
    nests = {(l.function, l.labels, l.ii) for l in traced.loops.values()}
    assert nests == {("load", ("",), 1), ("feed", ("",), 1), ("pe", ("rows", "cols"), 2), ("pe", ("",), 1)}
    # the t loop holds a declaration besides its inner loop: not part of the nest
    out_loop = next(l for l in traced.loops.values() if l.function == "pe" and l.ii == 1)
    assert out_loop.labels == ("",) and not out_loop.computes


def test_consecutive_inline_off_calls_without_a_common_stream_run_in_parallel(traced):
    # load(in) / feed(out): a group; load(in) / feed(.., in) share `in`: one after the other
    assert [(g.function, g.members) for g in traced.groups.values()] == [("io", ("load", "feed"))]
    assert "SYSTOLIC_TRACE_FORK(0, 2);" in traced.source and "SYSTOLIC_TRACE_JOIN(0, 2);" in traced.source


def test_only_floating_point_accumulations_are_recurrence_sites(traced):
    assert [(s.array, s.dtype, s.operator) for s in traced.sites.values()] == [("local", "float", "add")] * 2
    # a guarded update is recorded only when the guard holds
    assert "      if (r < 3) { local[r][0] += 1.0f; SYSTOLIC_TRACE_UPDATE(1, local[r][0]); }" in traced.source


def test_the_copy_keeps_the_users_line_numbers(traced):
    lines = traced.source.splitlines()
    current, mapping = None, {}
    for line in lines:
        m = re.match(r'#line (\d+) "k.cpp"', line)
        if m:
            current = int(m.group(1))
            continue
        if current is None:  # the recorder's include, before the first #line
            continue
        mapping[current] = line
        current += 1
    original = SOURCE.splitlines()
    for number, text in mapping.items():
        if "SYSTOLIC_TRACE" not in text:
            assert original[number - 1] == text, number


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("#pragma HLS dataflow\n", ""),
     f"k.cpp:{_line(KERNEL0)}: kernel0 has no '#pragma HLS dataflow'"),
    (lambda s: s.replace("    out.write(buffer[i]);", "    out.write(buffer[i]);\n#pragma HLS pipeline II=1"),
     f"k.cpp:{_line('    out.write(buffer[i]);') + 1}: '#pragma HLS pipeline' is not the first line of a for "
     "loop's body"),
    (lambda s: s.replace("  io(0, a, b);\n  pe(0, 1, b, c);\n  pe(0, 1, b, c);\n", ""), "no dataflow process call"),
    (lambda s: s + "}\n", f"k.cpp:{len(SOURCE.splitlines()) + 1}: unbalanced '}}'"),
    (lambda s: s.replace('extern "C" void kernel0', 'extern "C" void kernel1'), "k.cpp: no definition of kernel0"),
])
def test_a_source_that_breaks_the_conventions_is_refused_with_its_line(edit, message):
    with pytest.raises(TraceError) as info:
        instrument(edit(SOURCE), path="k.cpp", header=HEADER)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_narrow_counters_and_index_arguments_are_read_as_int_ones_are(traced):
    """The exported kernel declares its counters and index arguments ap_uint<b> (engine/export/cpp.py):
    the same nests, processes, parallel calls and recurrence sites are found."""
    narrow = re.sub(r"for \(int (\w) = ", r"for (ap_uint<5> \1 = ", SOURCE)
    narrow = narrow.replace("static void pe(int i, int j,", "static void pe(ap_uint<1> i, ap_uint<2> /* j */,")
    narrow = narrow.replace("static void io(int id,", "static void io(ap_uint<1> /* id */,")
    assert narrow.count("ap_uint<") == 10
    again = instrument(narrow, path="k.cpp", header=HEADER)
    assert again.loops == traced.loops and again.sites == traced.sites and again.groups == traced.groups
    assert again.processes == traced.processes and again.streams == traced.streams
