"""The C front end: the bundled kernels, the ways people write the same loop nest, types and sizes."""
from __future__ import annotations

import json

import pytest

from engine.compiler.design_space import compile_kernel
from engine.compiler.frontend import parse_kernel
from engine.compiler.ir import Affine, BinOp, Ref

MM_PRELUDE = """\
#define N 8
float A[N][N], B[N][N], C[N][N];
"""


@pytest.mark.parametrize("name, arrays", [
    ("mm", {"A", "B", "C"}), ("cnn", {"fo", "fi", "wt"}), ("mttkrp", {"A", "B", "C", "D"}),
    ("ttm", {"A", "B", "C"}), ("ttmc", {"A", "B", "C", "D"}),
])
def test_bundled_kernels_parse_into_an_init_and_an_update(bundled, name, arrays):
    kernel = parse_kernel(bundled(name), defines=["I=8"])
    assert set(kernel.arrays) == arrays
    init, update = kernel.statements
    assert len(init.loops) < len(update.loops)
    assert init.target == update.target
    assert kernel.sizes["I"] == 8


def test_sizes_come_from_defines_and_minus_d_wins(bundled):
    kernel = parse_kernel(bundled("mm"), defines=["J=48"])
    assert (kernel.sizes["I"], kernel.sizes["J"], kernel.sizes["K"]) == (1024, 48, 1024)
    assert kernel.arrays["B"].shape == (1024, 48)


def test_sizes_from_an_included_header(tmp_path):
    (tmp_path / "sizes.h").write_text("#define N 12\n#define M (N / 2)\n")
    path = tmp_path / "k.c"
    path.write_text('#include <stdio.h>\n#include "sizes.h"\nfloat A[N][M];\nvoid f(void) {\n'
                    "#pragma scop\nfor (int i = 0; i < N; i++) for (int j = 0; j < M; j++) A[i][j] = 1;\n"
                    "#pragma endscop\n}\n")
    kernel = parse_kernel(path)
    assert kernel.sizes == {"N": 12, "M": 6}
    assert kernel.arrays["A"].shape == (12, 6)


@pytest.mark.parametrize("type_text, dtype", [
    ("float", "float"), ("int16_t", "int16"), ("short", "int16"), ("int8_t", "int8"),
    ("char", "int8"), ("int", "int32"),
])
def test_element_type_through_a_typedef(write_kernel, type_text, dtype):
    path = write_kernel("for (int i = 0; i < 4; i++) A[i] = A[i] + 1;\n",
                        prelude=f"#include <stdint.h>\ntypedef {type_text} data_t;\ndata_t A[4];\n")
    assert parse_kernel(path).arrays["A"].dtype == dtype


def test_bundled_kernel_type_follows_minus_d(bundled):
    assert parse_kernel(bundled("mm"), defines=["DATA_T=int8_t"]).arrays["A"].dtype == "int8"


MM_STYLES = {
    "plus_equals": "for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)\n"
                   "  C[i][j] += A[i][k] * B[k][j];\n",
    "spelled_out": "for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)\n"
                   "  C[i][j] = C[i][j] + A[i][k] * B[k][j];\n",
    "parenthesised": "for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)\n"
                     "  C[i][j] = ((C[i][j]) + ((A[i][k]) * (B[k][j])));\n",
    "commented": "for (int i = 0; i < N; i++) /* rows */\n for (int j = 0; j < N; j++) // cols\n"
                 "  for (int k = 0; k < N; k++) { /* reduce */ C[i][j] += A[i][k] * B[k][j]; }\n",
    "declared_outside": "for (i = 0; i < N; ++i) for (j = 0; j <= N - 1; j += 1) for (k = 0; k < N; k = k + 1)\n"
                        "  C[i][j] += A[i][k] * B[k][j];\n",
    "temporaries": "for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++) {\n"
                   "  float a = A[i][k];\n  float b;\n  b = B[k][j];\n  C[i][j] += a * b;\n}\n",
}


@pytest.mark.parametrize("style", sorted(MM_STYLES))
def test_ways_of_writing_mm_give_the_same_statement_and_designs(write_kernel, style):
    prelude = MM_PRELUDE + ("int i, j, k;\n" if style == "declared_outside" else "")
    kernel = parse_kernel(write_kernel(MM_STYLES[style], prelude=prelude))
    (stmt,) = kernel.statements
    c = Ref(stmt.target)
    assert str(stmt.target) == "C[i][j]"
    assert isinstance(stmt.expr, BinOp) and stmt.expr.op == "+" and stmt.expr.lhs == c
    assert str(stmt.expr.rhs) == "(A[i][k] * B[k][j])"
    names = {d.name for d in compile_kernel(write_kernel(MM_STYLES[style], prelude=prelude)).designs}
    assert len(names) == 27  # 18 + 9 with SIMD on the space loop k (test_design_space.py)


def test_scalar_accumulator_becomes_the_array_it_is_stored_into(write_kernel):
    path = write_kernel("""\
        for (int i = 0; i < N; i++)
          for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < N; k++)
              acc += A[i][k] * B[k][j];
            C[i][j] = acc;
          }
        """, prelude=MM_PRELUDE)
    init, update = parse_kernel(path).statements
    assert (str(init.target), str(init.expr)) == ("C[i][j]", "0")
    assert str(update.expr) == "(C[i][j] + (A[i][k] * B[k][j]))"
    assert len(compile_kernel(path).designs) == 27


def test_affine_guards_and_positions(write_kernel):
    path = write_kernel("""\
        for (int i = 0; i < N; i++) {
          if (i > 0 && i <= N - 2) A[i][0] = 1;
          for (int j = 0; j < N; j++) C[i][j] = 2;
        }
        """, prelude=MM_PRELUDE)
    guarded, inner = parse_kernel(path).statements
    assert [str(g.expr) for g in guarded.guards] == ["i - 1", "-i + 6"]
    assert guarded.position < inner.position


def test_source_locations_point_at_the_statement(write_kernel):
    path = write_kernel("for (int i = 0; i < 4; i++)\n    A[i] = 0;\n", prelude="float A[4];\n")
    (stmt,) = parse_kernel(path).statements
    assert (stmt.location.file, stmt.location.line, stmt.location.column) == (str(path), 5, 5)


def test_reduction_declared_by_pragma_or_simd_info(write_kernel, tmp_path):
    # `C * 1 + ...` is not in the `X = X op e` form, so the reduction is not recognised by itself.
    body = ("for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)\n"
            "  C[i][j] = C[i][j] * 1 + A[i][k] * B[k][j];\n")
    plain = compile_kernel(write_kernel(body, prelude=MM_PRELUDE, name="plain.c"))
    assert not plain.dependences.reductions
    assert plain.design("i-j__i-j.k").simd_loop is None  # k carries a flow dependence: no SIMD

    pragma = compile_kernel(write_kernel(body, prelude=MM_PRELUDE + "#pragma systolic reduction(k)\n",
                                         name="pragma.c"))
    assert pragma.dependences.reductions["S0"].loops == ("k",)
    assert pragma.design("i-j__i-j.k").simd_loop == "k"

    for entry in (["k"], ["y"]):  # a loop name, or AutoSA's flag for the first loop C does not use
        info = tmp_path / "simd_info.json"
        info.write_text(json.dumps({"kernel3": {"reduction": entry}}))
        declared = compile_kernel(write_kernel(body, prelude=MM_PRELUDE, name="json.c"), simd_info=info)
        assert declared.design("i-j__i-j.k").simd_loop == "k"
    info.write_text(json.dumps({"kernel3": {"reduction": ["n"]}}))
    refused = compile_kernel(write_kernel(body, prelude=MM_PRELUDE, name="json.c"), simd_info=info)
    assert not refused.dependences.reductions


def test_affine_printing():
    assert str(Affine.of({"i": 1, "p": 1})) == "i + p"
    assert str(Affine.of({"i": -2}, 3)) == "-2*i + 3"


def test_golden_loop_nest_computes_what_the_source_computes(tmp_path):
    """The golden nest, compiled with g++ next to the original function, gives the same array."""
    import subprocess
    from engine.compiler.design_space import compile_kernel
    from engine.compiler.golden import golden_loop_nest
    source = """
float A[6][5]; float B[5][7]; float C[6][7];
void kernel(void) {
#pragma scop
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 7; j++) {
      C[i][j] = 1;
      for (int k = 0; k < 5; k++)
        if (k - 1 >= 0) C[i][j] += A[i][k] * B[k][j];
    }
#pragma endscop
}
"""
    path = tmp_path / "k.c"
    path.write_text(source)
    nest = golden_loop_nest(compile_kernel(path).kernel)
    harness = source + f"""
#include <stdio.h>
float G[6][7];
int main(void) {{
  for (int i = 0; i < 6; i++) for (int k = 0; k < 5; k++) A[i][k] = i - 2 * k;
  for (int k = 0; k < 5; k++) for (int j = 0; j < 7; j++) B[k][j] = k * j + 1;
  kernel();
  for (int i = 0; i < 6; i++) for (int j = 0; j < 7; j++) G[i][j] = C[i][j], C[i][j] = -5;
{nest}
  for (int i = 0; i < 6; i++) for (int j = 0; j < 7; j++) if (G[i][j] != C[i][j]) return 1;
  return G[3][4] == 1 ? 2 : 0;
}}
"""
    (tmp_path / "h.c").write_text(harness)
    subprocess.run(["gcc", "-w", "-o", str(tmp_path / "h"), str(tmp_path / "h.c")], check=True)
    assert subprocess.run([str(tmp_path / "h")]).returncode == 0


def test_a_bare_pragma_is_ignored_as_c_compilers_do(tmp_path):
    kernel = tmp_path / "bare.c"
    kernel.write_text("#define N 4\nvoid f(float A[N]) {\n#pragma\n#pragma scop\n"
                      "  for (int i = 0; i < N; i++)\n    A[i] = A[i] * 2;\n#pragma endscop\n}\n")
    parsed = parse_kernel(kernel)
    assert parsed.sizes == {"N": 4} and len(compile_kernel(kernel).designs) == 1
