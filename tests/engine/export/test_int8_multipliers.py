"""8-bit products in the PE (engine/compiler/architecture/multipliers.py, docs/export.md "8-bit
multiplies"): lanes in pairs, two products of a shared operand from one DSP48E2 (WP486) or one on a
DSP and one on fabric (AutoSA's int8 design); the model's DSP is the DSP-bound multiplies the
emitted PE asks for, the helpers are exact over every 8-bit value (g++), and the PE C-simulates."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from engine.cli.main import main
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.csim import include_dir
from engine.export import kernel_sources
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

SPLIT = ("i-j__i-j.k", {"i_t1": 8, "j_t1": 8, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 8})  # SIMD along k
SHARED = ("k__i-j.k", {"i_t1": 4, "j_t1": 32, "k_t1": 2, "i_t2": 2, "j_t2": 16})  # SIMD along j: A shared
ONE_LANE = ("i-j__i-j.k", {"i_t1": 8, "j_t1": 8, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 1})
SIZES = ["I=8", "J=32", "K=16"]


def _export(dtype: str, design_id: str, params: dict, sizes=SIZES):
    space = compile_kernel(KERNELS / "mm.c", defines=[f"DATA_T={dtype}", *sizes])
    design = space.design(design_id)
    model = PerformanceModel(space, design, load_device("u250"))
    values = dict(params)
    values.update({k: int(np.asarray(v)) for k, v in model.inferred_packing(params).items()})
    descriptor = build_descriptor(space, design, model.architecture)
    report = evaluate_configuration(model, params)
    return descriptor, kernel_sources(descriptor, values)["kernel_kernel.cpp"], report


def _helpers(source: str) -> str:
    """The block of multiply helpers the kernel file starts with (one paragraph)."""
    start = source.index("/* An exact product of two 8-bit lanes")
    return source[start:source.index("\n\n", start)]


def _multiplies(source: str) -> dict[str, int]:
    """DSP-bound and fabric multiplies of the array: the helper calls of the PE's compute body
    (outside the helpers' own definitions) times the PE instances kernel0 starts."""
    body = source.replace(_helpers(source), "")
    top = source[source.index("void kernel0("):]
    pes = len(re.findall(r"^\s+PE\w*\(", top, re.M))
    on_dsp = len(re.findall(r"\bmul2_shared\(", body)) + len(re.findall(r"\bmul_on_dsp\(", body))
    return {"DSP": pes * on_dsp, "fabric": pes * len(re.findall(r"\bmul_on_fabric\(", body)), "PEs": pes}


def test_the_pairing_follows_the_operands_and_the_simd_loop():
    split, _, _ = _export("int8_t", *SPLIT)
    shared, _, _ = _export("int8_t", *SHARED)
    assert split["compute"]["multipliers"] == {"form": "split", "operands": ["A", "B"]}
    assert shared["compute"]["multipliers"] == {"form": "shared", "operands": ["A", "B"], "shared": "A"}
    for dtype in ("float", "int16_t"):  # not 8-bit: one multiply a lane as operators.json charges
        assert _export(dtype, *SPLIT)[0]["compute"]["multipliers"] is None


@pytest.mark.parametrize("dtype", ["int8_t", "uint8_t"])
@pytest.mark.parametrize("case", [SPLIT, SHARED, ONE_LANE], ids=["split", "shared", "one-lane"])
def test_the_models_dsp_is_the_dsp_bound_multiplies_of_the_code(dtype, case):
    descriptor, source, report = _export(dtype, *case)
    count = _multiplies(source)
    lanes = case[1].get("k_t2", case[1].get("j_t2"))
    assert count["DSP"] == report["dsp"] > 0
    # every lane's product comes from a helper: no plain multiply of two operand words is left
    assert not re.search(r"_data\.lane\[[^\]]+\] \*", source)
    form = descriptor["compute"]["multipliers"]["form"]
    assert count["DSP"] == count["PEs"] * ((lanes + 1) // 2)
    assert count["fabric"] == (count["PEs"] * (lanes // 2) if form == "split" else 0)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("dtype, low, high", [("int8_t", -128, 127), ("uint8_t", 0, 255)])
def test_the_helpers_are_exact_for_every_8_bit_value(tmp_path, dtype, low, high):
    split, shared = (_helpers(_export(dtype, *case)[1]) for case in (SPLIT, SHARED))
    helpers = [split, shared[shared.index("/* s * x0 and s * x1"):]]
    program = tmp_path / "check.cpp"
    program.write_text("#include <cstdio>\n#include <stdint.h>\n#include <ap_int.h>\n" + "\n".join(helpers) + f"""
int main() {{
  long bad = 0;
  for (int s = {low}; s <= {high}; s++)
    for (int x0 = {low}; x0 <= {high}; x0++) {{
      if (mul_on_dsp(s, x0) != s * x0 || mul_on_fabric(s, x0) != s * x0) bad++;
      for (int x1 = {low}; x1 <= {high}; x1++) {{
        product_t p0, p1;
        mul2_shared(s, x0, x1, p0, p1);
        if (p0 != s * x0 || p1 != s * x1) bad++;
      }}
    }}
  printf("%ld\\n", bad);
  return bad != 0;
}}
""")
    binary = tmp_path / "check"
    subprocess.run(["g++", "-O2", "-std=c++14", f"-I{include_dir()}", str(program), "-o", str(binary)], check=True)
    run = subprocess.run([str(binary)], capture_output=True, text=True)
    assert (run.returncode, run.stdout.strip()) == (0, "0")


def test_shared_operand_pairs_c_simulate_with_negative_values(tmp_path, capsys):
    """The harness draws integers in -4..4; the shared form's PE against the golden loop nest."""
    design_id, params = SHARED
    out = tmp_path / "p"
    assert main(["export", str(KERNELS / "mm.c"), "-D", "DATA_T=int8_t", *(x for d in SIZES for x in ("-D", d)),
                 "--design", design_id, *(f"--param={k}={v}" for k, v in params.items()), "-o", str(out)]) == 0
    assert "mul2_shared(A_data.lane[0], B_data.lane[0], B_data.lane[1]" in (out / "src/kernel_kernel.cpp").read_text()
    capsys.readouterr()
    assert main(["csim", str(out)]) == 0
    assert "PASS" in capsys.readouterr().out


@pytest.mark.slow
def test_autosas_int8_array_asks_for_at_most_its_6144_dsps():
    """AutoSA's int8 MM (docs/examples/mm_int8_large.rst): 192 PEs x simd[64], 6,144 DSPs on the board."""
    space = compile_kernel(KERNELS / "mm.c", defines=["DATA_T=int8_t", "I=1056", "J=1024", "K=1024"])
    selection = select(space, "{kernel[]->space_time[3];kernel[]->array_part[264,256,64];"
                              "kernel[]->latency[11,32];kernel[]->simd[64]}")
    model = PerformanceModel(space, selection.design, load_device("u250"))
    values = dict(selection.params)
    values.update({k: int(np.asarray(v)) for k, v in model.inferred_packing(selection.params).items()})
    source = kernel_sources(build_descriptor(space, selection.design, model.architecture), values)["kernel_kernel.cpp"]
    count = _multiplies(source)
    report = evaluate_configuration(model, selection.params)
    assert count["PEs"] == 192 and count["DSP"] == report["dsp"] <= 6144
