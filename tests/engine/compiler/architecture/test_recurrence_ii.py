"""The PE's II under a recurrence through the scop's local arrays (engine/compiler/architecture/pe.py
`recurrence_ii`, build.py `carried_recurrences`): one rule, read by the exporter's pragma, the
model, the simulator and (through the pragma) the timed C simulation.

The triangular solve's `i__i-j` PE computes s_out[i][j] from s_in[i][j] = s_out[i][j-1] by a
subtract, one j iteration later: its pipelined loop cannot start an iteration before the float
adder's latency has passed. LU's `j-i__k-j-i` PE carries V from step k to step k + 1 the same way;
its `j__k-j-i` PE closes a cycle through two carried arrays (V along k, L_tmp along i).
"""
from __future__ import annotations

import re
import shutil

import pytest

from engine.compiler.architecture.build import OPERATORS, carried_recurrences, compute_info
from engine.compiler.expressions import evaluate
from engine.compiler.design_space import compile_kernel
from engine.export.project import export_project
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS
from kernel_snippets import TRISOLVE

ADD = OPERATORS["float"]["add"]["latency"]
MUL = OPERATORS["float"]["mul"]["latency"]
DIV = OPERATORS["float"]["div"]["latency"]


def _whole(design) -> dict:
    return {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}


def _compute_ii(space, design) -> int:
    model = PerformanceModel(space, design, load_device("u250"))
    report = evaluate_configuration(model, _whole(design))
    pe = next(m for m in model.architecture.modules if m.kind == "pe")
    return round(evaluate(str(pe.phases[0].ii), report["params"]))


@pytest.fixture
def trisolve(tmp_path):
    path = tmp_path / "trisolve.c"
    path.write_text(TRISOLVE)
    return path


def test_trisolve_row_recurrence_sets_the_ii_to_the_subtract(trisolve):
    space = compile_kernel(trisolve, defines=["N=8"])
    assert _compute_ii(space, space.design("i__i-j")) == ADD
    # carried across PEs (j in space), or no time loop at all: the II stays 1
    assert _compute_ii(space, space.design("j__i-j")) == 1
    assert _compute_ii(space, space.design("i-j__i-j")) == 1


def test_lu_step_recurrence_in_one_pe_sets_the_ii():
    space = compile_kernel(KERNELS / "lu.c", defines=["N=8"])
    assert _compute_ii(space, space.design("j-i__k-j-i")) == ADD  # V[k] -> prev_V[k+1]: one iteration
    # V[k] -> prev_V[k+1] alone: 8 cycles over N = 8 iterations of i; but at i = k + 1 prev_V is
    # divided into L_tmp, which the next i iteration multiplies and subtracts into V again: a cycle
    # through two carried arrays, 16 + 4 + 8 cycles over N + 1 = 9 iterations
    assert _compute_ii(space, space.design("j__k-j-i")) == -(-(DIV + MUL + ADD) // 9) == 4
    assert _compute_ii(space, space.design("k__k-j-i")) == 1  # carried along k, across PEs


@pytest.mark.parametrize("kernel, defines", [("mm.c", ["I=64", "J=64", "K=64"]), ("cnn.c", [])])
def test_mm_and_cnn_have_no_local_array_recurrence(kernel, defines):
    """Their accumulations go through the kernel's own arrays: accumulation_ii's, not this rule's."""
    space = compile_kernel(KERNELS / kernel, defines=defines)
    statements = [space.kernel.statement(name) for name in space.band.compute_statements]
    compute = compute_info(space, statements)
    assert carried_recurrences(space, compute, set(space.kernel.arrays)) == []


def test_exported_pragma_is_the_rule(trisolve, tmp_path):
    space = compile_kernel(trisolve, defines=["N=8"])
    design = space.design("i__i-j")
    export_project(space, design, _whole(design), tmp_path / "project", floorplan="none")
    source = (tmp_path / "project" / "src" / "kernel_kernel.cpp").read_text()
    body = source[source.index("compute_j_time:"):]
    assert re.search(r"#pragma HLS pipeline II=(\d+)", body).group(1) == str(ADD)


@pytest.mark.slow
def test_timed_csim_times_the_raised_ii(trisolve, tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    from engine.csim import run_timed_csim
    space = compile_kernel(trisolve, defines=["N=8"])
    design = space.design("i__i-j")
    model = PerformanceModel(space, design, load_device("u250"))
    predicted = evaluate_configuration(model, _whole(design))["latency_cycles"]
    export_project(space, design, _whole(design), tmp_path / "project", floorplan="none")
    timed = run_timed_csim(tmp_path / "project")
    assert timed.passed
    assert timed.cycles >= 8 * ADD  # the last PE's eight j iterations, ADD cycles apart
    assert abs(timed.cycles - predicted) <= 0.05 * timed.cycles
