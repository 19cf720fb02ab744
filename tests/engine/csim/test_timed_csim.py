"""`run_timed_csim` on exports of the emitter: AutoSA's MM 64^3 tutorial configuration (its figures
printed beside the model's; agreement within 5% is asserted by the emitter's tests once it moves data
word by word), the build cache, a hand-edited export that no longer builds, a trace too large for the
memory it is given."""
from __future__ import annotations

import json
import shutil

import pytest

from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.csim.timed import TimedCsimError, format_timed
from engine.export import export_project
from engine.resources import KERNELS

TUTORIAL = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 8, "j_t2": 8, "k_t2": 2}  # AutoSA's MM tutorial


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory, timed_cache):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    folder = tmp_path_factory.mktemp("tutorial")
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "64", "J": "64", "K": "64"})
    project = export_project(space, space.design("i-j__i-j.k"), TUTORIAL, folder / "mm", floorplan="none")
    return project, timed_cache, run_timed_csim(project, cache=timed_cache)


def test_the_tutorial_configuration_is_timed_beside_the_model(tutorial):
    _, _, result = tutorial
    print(format_timed(result))
    project, _, _ = tutorial
    report = json.loads((project / "design.json").read_text())["report"]
    assert result.passed and result.complete and result.model_bottleneck == "PE"
    assert result.model_latency == report["latency_cycles"]
    assert abs(result.cycles / result.model_latency - 1) < 0.05  # the export is the hardware the model counts
    pe = result.process("PE(0,0)")
    # per PE and tile of C (4 x 4 tiles): 4 k-tiles x 8 x 8 x 8 MACs (accumulators start at their first
    # update, inside the compute loop), 8 x 8 results
    assert pe.iterations == 16 * (4 * 512 + 64) == 33792
    assert all(p.end <= result.cycles and p.busy <= result.cycles for p in result.processes)
    assert result.cycles >= max(p.busy for p in result.processes) and result.slowest
    assert {p.name for p in result.processes} >= {"A_L3_in", "A_L2_in_head(0)", "PE(1,1)", "C_L3_out"}
    # the DRAM loaders wait for the first read (the AXI latency, 64 cycles)
    assert result.process("A_L3_in").stall_in >= 64


def test_bounded_streams_give_the_same_trace_whatever_their_limit(tutorial, monkeypatch):
    """The processes run as coroutines with streams of at most SYSTOLIC_TRACE_FIFO_WORDS words (more
    only when every process waits and one waits to write): each process's records, hence the
    timing, do not depend on the interleaving."""
    project, cache, first = tutorial
    monkeypatch.setenv("SYSTOLIC_TRACE_FIFO_WORDS", "1")
    tight = run_timed_csim(project, cache=cache)
    assert tight.passed and tight.cycles == first.cycles and tight.records == first.records
    assert [(p.name, p.busy, p.iterations) for p in tight.processes] == \
        [(p.name, p.busy, p.iterations) for p in first.processes]


def test_an_unchanged_export_reuses_its_build(tutorial):
    project, cache, first = tutorial
    again = run_timed_csim(project, cache=cache)
    assert again.cached and not first.cached and again.build_dir == first.build_dir
    assert again.cycles == first.cycles  # the replay is deterministic


@pytest.mark.slow
def test_an_edited_export_is_rebuilt(tutorial, tmp_path):
    project, cache, first = tutorial
    edited = tmp_path / "edited"
    shutil.copytree(project, edited)
    source = edited / "src" / "kernel_kernel.cpp"
    # the PE's compute loop (the pipelined loop that reads A) at II=2
    text = source.read_text()
    pragma = text.rindex("#pragma HLS pipeline II=1", 0, text.index("const A_x2 A_data"))
    source.write_text(text[:pragma] + "#pragma HLS pipeline II=2" + text[pragma + len("#pragma HLS pipeline II=1"):])
    slower = run_timed_csim(edited, cache=cache)
    assert not slower.cached and slower.build_dir != first.build_dir
    assert slower.process("PE(0,0)").busy > 1.8 * first.process("PE(0,0)").busy


def test_an_export_that_no_longer_builds_names_the_error_and_keeps_the_build(tutorial, tmp_path):
    project, cache, _ = tutorial
    broken = tmp_path / "broken"
    shutil.copytree(project, broken)
    source = broken / "src" / "kernel_kernel.cpp"
    lines = source.read_text().splitlines()
    source.write_text("\n".join(lines + ["this is not C++;"]) + "\n")
    with pytest.raises(TimedCsimError) as info:
        run_timed_csim(broken, cache=cache)
    message = str(info.value)
    assert "\n" not in message and "error" in message
    assert f"kernel_kernel.cpp:{len(lines) + 1}:" in message  # the line of the user's file, not of the copy
    assert info.value.build_dir is not None and (info.value.build_dir / "build.log").is_file()


def test_a_trace_too_large_for_its_memory_is_refused_with_advice(tutorial):
    project, cache, _ = tutorial
    with pytest.raises(TimedCsimError, match="too large for memory.*smaller slice"):
        run_timed_csim(project, cache=cache, memory_budget=20_000)
