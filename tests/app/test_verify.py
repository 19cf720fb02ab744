"""Verification that finishes (issue 29): the reduced problem keeps the design, its array and its
tuning values and shrinks each loop to a few of its tiles (engine/reduced_problem.py); the Verify
tab says what runs and how long it should take before starting, shows the step and the elapsed /
estimated time while a child process runs it, and Cancel kills that process."""
from __future__ import annotations

import os

import pytest

from app.models.design_selection import DesignSelection
from app.models.verification import Verification
from app.views.qt_verify import QtVerify
from engine.compiler.design_space import compile_kernel
from engine.reduced_problem import reduce_design, reduced_sizes, tile_targets
from engine.resources import KERNELS

VALUES = {"i_t1": 8, "j_t1": 4, "k_t1": 8, "i_t2": 2, "j_t2": 2, "k_t2": 2}

SHARED = """
#define N 32
#define K 16
float A[N][K], B[K][N], C[N][N];
void kernel(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = 0;
      for (int k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
#pragma endscop
}
"""


def test_each_loop_keeps_a_few_of_its_tiles_and_the_tuning_values_stay_legal():
    mm = KERNELS / "mm.c"
    space = compile_kernel(mm, defines={"I": "32", "J": "32", "K": "32"})
    design = space.design("i-j__i-j.k")
    assert tile_targets(design, VALUES, 2) == {"i": 16, "j": 8, "k": 16}
    problem, small_space, small = reduce_design(mm, {"I": "32", "J": "32", "K": "32"}, design, VALUES)
    assert problem.sizes == {"I": 16, "J": 8, "K": 16} and small.id == design.id
    assert problem.extents == {"i": (32, 16), "j": (32, 8), "k": (32, 16)}
    assert "I 32 -> 16" in problem.describe() and "2 tiles per loop" in problem.describe()
    assert small.array_shape == design.array_shape
    # a loop that holds no more than its tiles keeps its size
    assert reduced_sizes(mm, {"I": "16", "J": "8", "K": "16"}, small, VALUES).reduced == {}


def test_a_design_with_simd_on_a_space_loop_is_found_in_the_reduced_problem():
    """--simd-touch-space designs exist only when the kernel is compiled with it: the reduced problem is too."""
    mm = KERNELS / "mm.c"
    defines = {"I": "32", "J": "32", "K": "32"}
    design = compile_kernel(mm, defines=defines, simd_touch_space=True).design("i-j__i-j.k__simd-j")
    values = {"i_t1": 8, "j_t1": 16, "k_t1": 8, "i_t2": 4, "j_t2": 4}
    problem, _, small = reduce_design(mm, defines, design, values, simd_touch_space=True)
    assert small.id == design.id and problem.sizes == {"I": 16, "J": 32, "K": 16}


def test_a_size_shared_by_loops_tiled_differently_keeps_the_larger_tiles(tmp_path):
    kernel = tmp_path / "shared.c"
    kernel.write_text(SHARED)
    space = compile_kernel(kernel)
    design = space.design("i-j__i-j.k")
    values = {"i_t1": 4, "j_t1": 8, "k_t1": 4, "i_t2": 2, "j_t2": 2, "k_t2": 2}
    problem = reduced_sizes(kernel, {}, design, values)
    assert problem.sizes == {"N": 16, "K": 8}  # j's 8-wide tiles decide N; i then holds 4 of its tiles


@pytest.fixture
def verify(qtbot, settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 32, "J": 32, "K": 32}))
    selection.select("i-j__i-j.k", VALUES)
    settle(selection)
    verification = Verification(selection)
    view = QtVerify(verification)
    qtbot.addWidget(view)
    yield verification, view
    verification.shutdown()
    selection.shutdown()


def test_the_tab_says_what_runs_and_how_long_before_starting(verify):
    verification, view = verify
    row = view.rows["simulate"]
    assert "reduced problem" in row.plan.text() and "i 32 -> 16" in row.plan.text() and "about" in row.plan.text()
    reduced = verification.plan("simulate")
    row.size.setCurrentIndex(1)  # the full problem stays available, with its estimate
    full = verification.plan("simulate", full=True)
    assert "full problem" in row.plan.text() and "i 32," in row.plan.text()
    assert full.work == reduced.work * 2 * 4 * 2 and full.seconds > reduced.seconds
    assert view.rows["csim"].plan.text().count("points") == 1


def test_a_reduced_c_simulation_shows_its_progress_and_passes(verify, qtbot):
    verification, view = verify
    row = view.rows["csim"]
    steps = []
    verification.runner.phase.connect(lambda index, text: steps.append((index, not row.progress.isHidden(),
                                                                        row.cancel_button.isEnabled())))
    with qtbot.waitSignal(verification.finished, timeout=300_000) as done:
        row.start_button.click()
        assert not row.start_button.isEnabled() and not view.rows["simulate"].start_button.isEnabled()
    outcome = done.args[0]
    assert outcome["passed"] and outcome["sizes"] == {"I": 16, "J": 8, "K": 16}
    assert [index for index, _, _ in steps] == [0, 1, 2, 3]
    assert all(visible and cancellable for _, visible, cancellable in steps)
    assert "C simulation passed" in row.outcome.text() and "I 32 -> 16" in row.outcome.text()
    assert row.start_button.isEnabled() and row.progress.isHidden()


def test_cancel_kills_the_child_process(verify, qtbot):
    verification, view = verify
    row = view.rows["simulate"]
    row.size.setCurrentIndex(1)
    with qtbot.waitSignal(verification.runner.phase, timeout=300_000,
                          check_params_cb=lambda index, _text: index >= 1):
        assert row.start()
    pid = verification.runner._process.pid
    row.cancel_button.click()
    assert verification.running is None and "cancelled" in row.outcome.text() and row.start_button.isEnabled()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped
