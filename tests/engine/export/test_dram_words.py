"""DRAM moves whole words only: the DRAM-facing packing factor divides every box and where each box
starts (AutoSA's rule), so a halo along the innermost dimension (a 1-D convolution `x[i + r]`, a
kernel written here, not bundled) is read in narrower whole words instead of element by element
through a cached word; a factor given by hand that would straddle two boxes is refused."""
import pytest

from engine.compiler.design_space import compile_kernel
from engine.csim import run_csim
from engine.errors import EngineError
from engine.export import export_project
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import packing_violations

CONV1D = """
#define N 64
#define R 3
float x[N + R - 1];
float w[R];
float y[N];

void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int r = 0; r < R; r++)
      y[i] += x[i + r] * w[r];
  }
#pragma endscop
}
"""
PARAMS = {"i_t1": 14, "r_t1": 3, "i_t2": 1, "r_t2": 1}  # x's tile box: 16 elements, starting every 14


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    path = tmp_path_factory.mktemp("conv1d") / "conv1d.c"
    path.write_text(CONV1D)
    return compile_kernel(path)


def test_the_dram_factor_divides_where_boxes_start(space):
    model = PerformanceModel(space, space.design("i__i.r"), load_device())
    packs = {k: int(v) for k, v in model.inferred_packing(PARAMS).items()}
    assert packs["x_in_pack_l2"] == 2  # 16 alone would allow 16; boxes start at multiples of 14
    assert packing_violations(model, {**PARAMS, "x_in_pack_l2": 16}) == [
        "x_in_pack_l2=16 must divide 2 (its block's innermost extent and where the boxes start along it)"]


def test_a_halo_is_read_in_whole_words_and_passes_c_simulation(space, tmp_path):
    project = export_project(space, space.design("i__i.r"), PARAMS, tmp_path / "conv1d", floorplan="none")
    code = (project / "src" / "kernel_kernel.cpp").read_text()
    assert "word_index" not in code  # no element-by-element path through a cached DRAM word
    assert "const packed<x_t, 2> chunk = x[" in code
    result = run_csim(project)
    assert result.passed, result.log[-2000:]


def test_a_straddling_factor_given_by_hand_is_refused(space, tmp_path):
    with pytest.raises(EngineError, match="x_in_pack_l2=16"):
        export_project(space, space.design("i__i.r"), {**PARAMS, "x_in_pack_l2": 16}, tmp_path / "bad",
                       floorplan="none")
