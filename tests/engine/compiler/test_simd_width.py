"""SIMD up to one 512-bit word of the element the SIMD loop walks (tuning.max_simd): 16 float,
32 int16, 64 int8, 8 double lanes; AutoSA's int8 and int16 large MM strings are accepted as written
and the exporter's PE C-simulates with 64 int8 lanes."""
from __future__ import annotations

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.compiler.tuning import max_simd
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS


@pytest.mark.parametrize("dtype, lanes", [("float", 16), ("int16_t", 32), ("int8_t", 64), ("double", 8)])
def test_the_simd_bound_fills_one_512_bit_word(dtype, lanes):
    space = compile_kernel(KERNELS / "mm.c", defines=[f"DATA_T={dtype}", "I=128", "J=128", "K=128"])
    assert max_simd(space.kernel, space.band, "k") == lanes
    simd = {p.name: p for p in space.design("i-j__i-j.k").params}["k_t2"]
    assert (simd.role, simd.upper) == ("simd", lanes)


def test_the_widest_element_along_the_loop_decides(tmp_path):
    path = tmp_path / "mixed.c"
    path.write_text("#define N 128\nsigned char A[N][N]; short B[N][N]; int C[N][N];\nvoid k(void) {\n"
                    "#pragma scop\n  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n"
                    "      for (int k = 0; k < N; k++)\n        C[i][j] += A[i][k] * B[k][j];\n#pragma endscop\n}\n")
    space = compile_kernel(path)
    assert max_simd(space.kernel, space.band, "k") == 32  # B's int16 along k; C (int32) does not move along k
    assert max_simd(space.kernel, space.band, "i") == 16  # C's int32 moves along i


AUTOSA = {  # docs/examples/mm_int8_large.rst and mm_int16_large.rst: 192 PEs x simd[64], 256 PEs x simd[32]
    "int8": (["DATA_T=int8_t", "I=1056", "J=1024", "K=1024"],
             "{kernel[]->space_time[3];kernel[]->array_part[264,256,64];kernel[]->latency[11,32];kernel[]->simd[64]}",
             64, 24 * 8),
    "int16": (["DATA_T=int16_t", "I=1024", "J=1024", "K=1024"],
              "{kernel[]->space_time[3];kernel[]->array_part[256,256,32];kernel[]->latency[16,16];kernel[]->simd[32]}",
              32, 16 * 16),
}


@pytest.mark.parametrize("name", list(AUTOSA))
def test_autosa_large_integer_strings_are_accepted_as_written(name):
    defines, text, lanes, pes = AUTOSA[name]
    space = compile_kernel(KERNELS / "mm.c", defines=defines)
    selection = select(space, text)
    assert selection.design.id == "i-j__i-j.k" and selection.params["k_t2"] == lanes
    p = selection.params
    assert (p["i_t1"] // p["i_t2"]) * (p["j_t1"] // p["j_t2"]) == pes


def test_the_int8_design_models_autosas_dsp_count():
    defines, text, _, _ = AUTOSA["int8"]
    space = compile_kernel(KERNELS / "mm.c", defines=defines)
    selection = select(space, text)
    report = evaluate_configuration(PerformanceModel(space, selection.design, load_device()), selection.params)
    assert report["dsp"] == 6144  # AutoSA's board figure for this array (half its int8 multiplies on DSPs, half on LUTs)


def test_a_simd_over_the_word_is_one_line(capsys):
    text = "{kernel[]->space_time[3];kernel[]->array_part[32,32,32];kernel[]->latency[8,8];kernel[]->simd[32]}"
    assert main(["model", str(KERNELS / "mm.c"), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--sa-sizes", text]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "k_t2" in err[-1] and "1..16" in err[-1] and len([l for l in err if l.startswith("error")]) == 1


def test_64_int8_lanes_c_simulate(tmp_path, capsys):
    out = tmp_path / "p"
    params = dict(i_t1=8, j_t1=8, k_t1=64, i_t2=4, j_t2=4, k_t2=64)
    assert main(["export", str(KERNELS / "mm.c"), "-D", "DATA_T=int8_t", "-D", "I=8", "-D", "J=8", "-D", "K=64",
                 "--design", "i-j__i-j.k", *(f"--param={k}={v}" for k, v in params.items()), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["csim", str(out)]) == 0
    assert "PASS" in capsys.readouterr().out
