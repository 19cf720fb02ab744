"""Operator latencies on the dependence path of straight-line PE code (a PE with no pipelined loop:
several statements, every band loop in space), charged alike by the timed C simulation
(engine/csim/trace.py `_straight_line`), the simulator and the model
(engine/compiler/architecture/pe.py `straight_ready`).

In the triangular solve on a 2-D array, x[i] is divided on the diagonal PE, multiplied and
subtracted on the PE below it and the partial sum passed to the next diagonal PE: every diagonal
step pays the division and the multiply-subtract, as the HLS hardware does.
"""
from __future__ import annotations

import shutil

import pytest

from engine.compiler.architecture.build import OPERATORS
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.csim.trace import instrument
from engine.export.project import export_project
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.sim import simulate
from kernel_snippets import TRISOLVE

FLOAT = OPERATORS["float"]
STEP = FLOAT["div"]["latency"] + FLOAT["mul"]["latency"] + FLOAT["add"]["latency"]

SOURCE = """\
static void PE(int i, hls::stream<float> &a_in, hls::stream<float> &a_out) {
#pragma HLS inline off
  float store_s[1];
  float a_from_i = a_in.read();
  if ((i >= 0)) store_s[0] = (float)((a_from_i / 2.0f));  /* S1 */
  if ((i >= 0)) {
    float word;
    word = 0;
    a_out.write(word);
  }
  if ((i >= 0)) {
    packed word;
    word.lane[0] = store_s[0];
    a_out.write(word);
  }
}

void kernel0(float *A) {
  hls::stream<float> s("s");
#pragma HLS stream variable=s depth=2
#pragma HLS dataflow
  PE(0, s, s);
}
"""


def test_trace_charges_a_tagged_statements_operators_before_the_write_of_its_value():
    statements = [{"name": "S1", "from": {"a": 16}}]
    inst = instrument(SOURCE, path="k.cpp", statements=statements)
    lines = inst.source.splitlines()
    value = next(l for l in lines if "SYSTOLIC_TRACE_VALUE" in l)
    assert "store_s[0] = (float)((a_from_i / 2.0f));" in value and "+ 16" in value
    waits = [k for k, l in enumerate(lines) if "SYSTOLIC_TRACE_AT" in l]
    assert len(waits) == 1  # the word of store_s, not the constant one
    assert "a_out.write(word);" in lines[waits[0] + 2]
    # without the descriptor's statements nothing changes
    assert "SYSTOLIC_TRACE_VALUE" not in instrument(SOURCE, path="k.cpp").source


def _whole(design) -> dict:
    return {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}


def _model_and_sim(path, n: int) -> tuple[float, int, object, object]:
    space = compile_kernel(path, defines=[f"N={n}"])
    design = space.design("i-j__i-j")
    model = shared_model(space, design, load_device("u250"))
    report = evaluate_configuration(model, _whole(design))
    simulated = simulate(build_descriptor(space, design, model.architecture), report["params"]).cycles
    return report["latency_cycles"], simulated, space, design


def test_each_diagonal_step_pays_the_division_and_the_multiply_subtract(tmp_path):
    path = tmp_path / "trisolve.c"
    path.write_text(TRISOLVE)
    model8, sim8, _, _ = _model_and_sim(path, 8)
    model12, sim12, _, _ = _model_and_sim(path, 12)
    assert sim12 - sim8 >= 4 * STEP  # four more diagonal steps (before: 8 cycles a step)
    assert model12 - model8 >= 4 * STEP
    assert abs(model8 - sim8) <= 0.05 * sim8 and abs(model12 - sim12) <= 0.05 * sim12


@pytest.mark.slow
def test_timed_csim_charges_the_diagonal_recurrence(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    from engine.csim import run_timed_csim
    path = tmp_path / "trisolve.c"
    path.write_text(TRISOLVE)
    model, simulated, space, design = _model_and_sim(path, 8)
    export_project(space, design, _whole(design), tmp_path / "project", floorplan="none")
    timed = run_timed_csim(tmp_path / "project")
    assert timed.passed
    assert timed.cycles >= 7 * (STEP + 8)  # seven diagonal steps: operators and 8 cycles of hops each (247 before)
    assert abs(timed.cycles - simulated) <= 0.05 * timed.cycles
    assert abs(timed.cycles - model) <= 0.05 * timed.cycles
