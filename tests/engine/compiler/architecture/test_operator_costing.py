"""Division and square root in the compute statement: the architecture builds, the PE pipeline is
as deep as the operators' latencies (resources/operators.json) and the model charges their DSP and
fabric cost, compared with the same kernel written with a multiplication."""
from __future__ import annotations

import pytest

from engine.compiler.architecture.build import OPERATORS, build_architecture
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel

PARAMS = dict(i_t1=8, j_t1=8, k_t1=8, i_t2=2, j_t2=2, k_t2=2)


def _mm(write_kernel, operand: str, dtype: str = "float", name: str = "k.c"):
    path = write_kernel(f"""\
        for (int i = 0; i < 16; i++)
          for (int j = 0; j < 16; j++)
            for (int k = 0; k < 16; k++)
              C[i][j] += {operand};
        """, prelude=f"{dtype} A[16][16], B[16][16], C[16][16];\n", name=name)
    space = compile_kernel(path)
    design = space.design("i-j__i-j.k")
    return space, design, build_architecture(space, design)


@pytest.mark.parametrize("dtype, key", [("float", "float"), ("int", "int32"), ("short", "int16")])
def test_division_costs_its_latency_and_fabric(write_kernel, dtype, key):
    _, _, times = _mm(write_kernel, "A[i][k] * B[k][j]", dtype, "mul.c")
    space, design, divides = _mm(write_kernel, "A[i][k] / B[k][j]", dtype, "div.c")
    table = OPERATORS[key]
    assert divides.compute["ops"] == {"add": 1, "div": 1} and divides.compute["dtype"] == key
    assert divides.module("PE").depth == table["div"]["latency"] + table["add"]["latency"] + 2
    assert divides.module("PE").depth - times.module("PE").depth == table["div"]["latency"] - table["mul"]["latency"]
    device = load_device()
    with_div = PerformanceModel(space, design, device).evaluate(PARAMS)
    mul_space = compile_kernel(space.kernel.path.replace("div.c", "mul.c"))
    with_mul = PerformanceModel(mul_space, mul_space.design("i-j__i-j.k"), device).evaluate(PARAMS)
    lanes = 4 * 4 * 2  # (8/2) x (8/2) PEs, SIMD 2
    assert with_mul["DSP"] - with_div["DSP"] == pytest.approx(lanes * (table["mul"]["dsp"] - table["div"]["dsp"]))
    assert with_div["LUT"] - with_mul["LUT"] == pytest.approx(lanes * table["div"]["lut"])


def test_sqrt_and_fabs_are_costed(write_kernel):
    _, _, arch = _mm(write_kernel, "sqrt(fabs(A[i][k])) * B[k][j]")
    table = OPERATORS["float"]
    assert arch.compute["ops"] == {"add": 1, "mul": 1, "sqrt": 1, "abs": 1}
    assert arch.module("PE").depth == sum(table[op]["latency"] for op in ("add", "mul", "sqrt", "abs")) + 2
