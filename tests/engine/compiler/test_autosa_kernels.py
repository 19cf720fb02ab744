"""Kernels as AutoSA's users write them (autosa_tests/<name>/kernel.h + kernel.c): quoted system
headers, arrays declared in main, `rand`/`fabs` outside the scop, `#ifdef`, local arrays and if/else
inside the scop, a division. The copies below are our own, in the forms of AutoSA's test kernels.

The number of space-time candidates is the number of distinct dataflows (space-loop choices):
- MM: every loop carries flow/read distances 0/1, so [i] [j] [k] [i,j] [i,k] [j,k]: 6 (AutoSA
  enumerates these six; its `space_time[3]` is [i,j]);
- CNN: [o] [h] [w] [i] and the six pairs of them: 10 (the issue lists them; p and q carry the
  diagonal reuse of cin[h + p], distance -1 along p, so they are not candidates);
- LU: k, j and i each carry distance-1 dependences only, so 3 + 3 = 6 (AutoSA's documented LU
  command selects `space_time[3]`, the first pair [k,j], the array of its paper's Fig. 12b).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.compiler.frontend import parse_kernel
from engine.compiler.ir import BinOp, Call

AUTOSA_HEADER = """\
#include "stdio.h"
#include "stdlib.h"
#include "math.h"

typedef float data_t;
{defines}
"""

MAIN_CHECK = """\
  int err = 0;
  for (int i = 0; i < 4; i++)
    if (fabs((float)out_golden[i] - (float)out[i]) > 0.001) err++;
  if (err) printf("Failed with %d errors!\\n", err); else printf("Passed!\\n");
  return 0;
}
"""

MM = """\
#include "kernel.h"

int main(int argc, char **argv) {
  data_t A[I][K], B[J][K], C[I][J], C_golden[I][J];
  data_t out[4], out_golden[4];
  for (int i = 0; i < I; i++)
    for (int k = 0; k < K; k++)
      A[i][k] = (data_t)rand() / RAND_MAX;
  for (int j = 0; j < J; j++)
    for (int k = 0; k < K; k++)
      B[j][k] = (data_t)rand() / RAND_MAX;
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      C[i][j] = 0;
      for (int k = 0; k < K; k++)
        C[i][j] = C[i][j] + A[i][k] * B[j][k];
    }
#pragma endscop
""" + MAIN_CHECK

MM_GUARDED = """\
#include "kernel.h"

#ifdef INT16
typedef short elem_t;
#else
typedef data_t elem_t;
#endif

int main(int argc, char **argv) {
  elem_t A[I][K], B[K][J], C[I][J];
  data_t out[4], out_golden[4];
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        if (k == 0)
          C[i][j] = 0;
        C[i][j] += A[i][k] * B[k][j];
      }
#pragma endscop
""" + MAIN_CHECK

CNN = """\
#include "kernel.h"

int main(int argc, char **argv) {
  data_t cin[R + K - 1][C + K - 1][I];
  data_t w[O][K][K][I];
  data_t cout[R][C][O];
  data_t out[4], out_golden[4];
#pragma scop
  for (int o = 0; o < O; o++)
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) {
        cout[r][c][o] = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < K; p++)
            for (int q = 0; q < K; q++)
              cout[r][c][o] = cout[r][c][o] + cin[r + p][c + q][i] * w[o][p][q][i];
      }
#pragma endscop
""" + MAIN_CHECK

MTTKRP = """\
#include "kernel.h"

int main(int argc, char **argv) {
  data_t A[I][K][L], B[K][J], C[L][J], D[I][J];
  data_t out[4], out_golden[4];
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      D[i][j] = 0;
      for (int k = 0; k < K; k++)
        for (int l = 0; l < L; l++)
          D[i][j] = D[i][j] + A[i][k][l] * B[k][j] * C[l][j];
    }
#pragma endscop
""" + MAIN_CHECK

TTMC = """\
#include "kernel.h"

int main(int argc, char **argv) {
  data_t A[I][L][M], B[L][J], C[M][K], D[I][J][K];
  data_t out[4], out_golden[4];
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        D[i][j][k] = 0;
        for (int l = 0; l < L; l++)
          for (int m = 0; m < M; m++)
            D[i][j][k] = D[i][j][k] + A[i][l][m] * B[l][j] * C[m][k];
      }
#pragma endscop
""" + MAIN_CHECK

LU_BODY = """\
#include "kernel.h"

int main(int argc, char **argv) {
  data_t A[N][N], L[N][N], U[N][N];
  data_t out[4], out_golden[4];
#pragma scop
  data_t prev_V[N][N][N];
  data_t V[N][N][N];
  data_t U_tmp[N][N][N];
  data_t L_tmp[N][N][N];
  for (int k = 0; k < N; k++)
    for (int j = k; j < N; j++)
      for (int i = k; i < N; i++) {
        if (k == 0)
          prev_V[i][j][k] = A[i][j];
        else
          prev_V[i][j][k] = V[i][j][k - 1];
        if (j == k) {
          U_tmp[i][j][k] = prev_V[i][j][k];
          U[j][i] = U_tmp[i][j][k];
        } else {
          U_tmp[i][j][k] = U_tmp[i][j - 1][k];
          if (i == k) {
            L_tmp[i][j][k] = prev_V[i][j][k] / U_tmp[i][j][k];
            L[i][j] = L_tmp[i][j][k];
          } else {
            L_tmp[i][j][k] = L_tmp[i - 1][j][k];
            V[i][j][k] = prev_V[i][j][k] - L_tmp[i][j][k] * U_tmp[i][j][k];
          }
        }
      }
#pragma endscop
""" + MAIN_CHECK

# (kernel.c text, #defines of kernel.h, AutoSA's number of space-time candidates or None if unknown)
AUTOSA_KERNELS = {
    "mm": (MM, "#define I 64\n#define J 64\n#define K 64", 6),
    "mm_guarded": (MM_GUARDED, "#define I 32\n#define J 32\n#define K 32", 6),
    "cnn": (CNN, "#define O 16\n#define I 16\n#define R 8\n#define C 8\n#define K 3", 10),
    "mttkrp": (MTTKRP, "#define I 16\n#define J 16\n#define K 16\n#define L 16", None),
    "ttmc": (TTMC, "#define I 16\n#define J 16\n#define K 16\n#define L 16\n#define M 16", None),
    "lu": (LU_BODY, "#define N 16", 6),
}


def autosa_kernel(tmp_path: Path, name: str) -> Path:
    text, defines, _ = AUTOSA_KERNELS[name]
    folder = tmp_path / name
    folder.mkdir()
    (folder / "kernel.h").write_text(AUTOSA_HEADER.format(defines=defines))
    (folder / "kernel.c").write_text(text)
    return folder / "kernel.c"


def dataflows(space) -> list[tuple[str, ...]]:
    return list(dict.fromkeys(d.space_loops for d in space.designs))


@pytest.mark.parametrize("name", sorted(AUTOSA_KERNELS))
def test_autosa_test_kernels_are_accepted_at_their_header_sizes(tmp_path, name):
    space = compile_kernel(autosa_kernel(tmp_path, name))
    assert space.designs
    sizes = dict(line.split()[1:] for line in AUTOSA_KERNELS[name][1].splitlines())
    assert {k: str(v) for k, v in space.kernel.sizes.items()} == sizes
    expected = AUTOSA_KERNELS[name][2]
    if expected is not None:
        assert len(dataflows(space)) == expected


@pytest.mark.parametrize("name, bundled_name", [("mm", "mm"), ("cnn", "cnn"), ("mm_guarded", "mm")])
def test_autosa_forms_have_the_designs_of_the_bundled_forms(tmp_path, bundled, name, bundled_name):
    """The same computation written AutoSA's way (layouts, a k == 0 guard instead of an init
    statement) has as many dataflows and designs as our bundled kernel."""
    ours = compile_kernel(autosa_kernel(tmp_path, name))
    reference = compile_kernel(bundled(bundled_name), defines=["I=16", "J=16", "K=16", "L=16", "M=16",
                                                               "O=16", "H=8", "W=8", "P=3", "Q=3"])
    assert len(dataflows(ours)) == len(dataflows(reference))
    assert len(ours.designs) == len(reference.designs)


def test_ifdef_chooses_code_as_a_c_compiler_would(tmp_path):
    path = autosa_kernel(tmp_path, "mm_guarded")
    assert parse_kernel(path).arrays["A"].dtype == "float"
    assert parse_kernel(path, defines=["INT16"]).arrays["A"].dtype == "int16"


def test_lu_local_arrays_guards_and_division(tmp_path):
    kernel = parse_kernel(autosa_kernel(tmp_path, "lu"))
    assert len(kernel.statements) == 9  # AutoSA's Table 4 lists LU with 9 statements
    local = {name for name, decl in kernel.arrays.items() if decl.local}
    assert local == {"prev_V", "V", "U_tmp", "L_tmp"}
    assert not any(kernel.arrays[name].local for name in ("A", "L", "U"))
    division = [s for s in kernel.statements if isinstance(s.expr, BinOp) and s.expr.op == "/"]
    assert [s.target.array for s in division] == ["L_tmp"]


def _lu_brute_force(n: int, kernel) -> dict[str, int]:
    """Run every statement's loop bounds and guards over the n^3 cube in Python: how often it executes."""
    counts = {s.name: 0 for s in kernel.statements}
    for k, j, i in itertools.product(range(n), repeat=3):
        values = {"k": k, "j": j, "i": i}
        for stmt in kernel.statements:
            inside = all(_eval(loop.lower, values) <= values[loop.name] < _eval(loop.upper, values)
                         for loop in stmt.loops)
            guarded = all((_eval(g.expr, values) == 0) if g.equality else (_eval(g.expr, values) >= 0)
                          for g in stmt.guards)
            counts[stmt.name] += inside and guarded
    return counts


def _eval(affine, values) -> int:
    return affine.const + sum(c * values[v] for v, c in affine.terms)


@pytest.mark.parametrize("n", [12, 16])
def test_lu_iterations_counted_exactly_over_the_pyramid(bundled, n):
    space = compile_kernel(bundled("lu"), defines=[f"N={n}"])
    brute = _lu_brute_force(n, space.kernel)
    assert {s: space.model.instance_count(s) for s in brute} == brute
    assert space.model.instance_count() == sum(brute.values())
    # band points: (k, j, i) with k <= j, i < n, the pyramid, not n^3
    pyramid = sum(1 for k, j, i in itertools.product(range(n), repeat=3) if k <= j and k <= i)
    assert space.band.point_count(space.model.domains) == pyramid < n ** 3


def test_lu_statements_by_branch(bundled):
    """Each else-branch statement runs under the negated condition within the loop bounds."""
    space = compile_kernel(bundled("lu"), defines=["N=12"])
    brute = _lu_brute_force(12, space.kernel)
    by_text = {s.text: brute[s.name] for s in space.kernel.statements}
    assert by_text["prev_V[i][j][k] = A[i][j];"] == 12 * 12  # k == 0
    assert by_text["prev_V[i][j][k] = V[i][j][k - 1];"] == sum((12 - k) ** 2 for k in range(1, 12))
    assert by_text["L_tmp[i][j][k] = prev_V[i][j][k] / U_tmp[i][j][k];"] == sum(12 - k - 1 for k in range(12))


def test_lu_designs_and_the_array_autosa_draws(bundled):
    space = compile_kernel(bundled("lu"), defines=["N=16"])
    assert dataflows(space) == [("k",), ("j",), ("i",), ("k", "j"), ("k", "i"), ("j", "i")]
    assert len(space.designs) == 6  # one permutation class: every loop carries a flow dependence


def test_else_with_a_conjunction_runs_the_complement(write_kernel):
    path = write_kernel("""\
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < 6; j++) {
            if (i >= 2 && j == i)
              A[i][j] = 1;
            else
              A[i][j] = 2;
          }
        """, prelude="float A[6][6];\n")
    space = compile_kernel(path)
    then = [s for s in space.kernel.statements if str(s.expr) == "1"]
    other = [s for s in space.kernel.statements if str(s.expr) == "2"]
    assert sum(space.model.instance_count(s.name) for s in then) == 4
    assert sum(space.model.instance_count(s.name) for s in other) == 36 - 4


def test_sqrt_and_fabs_are_operators(write_kernel):
    path = write_kernel("""\
        for (int i = 0; i < 4; i++)
          B[i] = sqrt(fabs(A[i])) / 2;
        """, prelude='#include "math.h"\nfloat A[4], B[4];\n')
    stmt = parse_kernel(path).statements[0]
    assert isinstance(stmt.expr, BinOp) and stmt.expr.op == "/"
    call = stmt.expr.lhs
    assert isinstance(call, Call) and call.op == "sqrt" and isinstance(call.args[0], Call)
    assert str(stmt.expr) == "(sqrt(fabs(A[i])) / 2)"


def test_operator_costs_for_division_and_sqrt():
    import json

    from engine.resources import RESOURCES
    costs = json.loads((RESOURCES / "operators.json").read_text())
    for dtype in ("float", "double", "int32", "int16", "int8"):
        for op in ("div", "sqrt"):
            assert costs[dtype][op]["latency"] > costs[dtype]["add"]["latency"]
            assert costs[dtype][op]["dsp"] >= 0


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(text)


KERNEL_WITH = '#include "{first}"\nfloat A[4];\nvoid f(void) {{\n#pragma scop\nfor (int i = 0; i < 4; i++) ' \
              'A[i] = A[i] + 1;\n#pragma endscop\n}}\n'


def test_include_cycle_is_one_line_exit_2(tmp_path, capsys):
    _write(tmp_path, {"a.h": '#include "b.h"\n', "b.h": '#include "a.h"\n',
                      "k.c": KERNEL_WITH.format(first="a.h")})
    assert main(["designs", str(tmp_path / "k.c")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.endswith("include cycle: a.h -> b.h -> a.h")
    assert f"{tmp_path}/b.h:1:" in err


def test_guarded_headers_that_include_each_other_are_fine(tmp_path):
    _write(tmp_path, {"a.h": '#ifndef A_H\n#define A_H\n#include "b.h"\n#define SZ 4\n#endif\n',
                      "b.h": '#pragma once\n#include "a.h"\n',
                      "k.c": KERNEL_WITH.format(first="a.h")})
    assert compile_kernel(tmp_path / "k.c").kernel.sizes == {}


def test_includes_nested_too_deep(tmp_path, capsys):
    files = {f"h{n}.h": f'#include "h{n + 1}.h"\n' for n in range(40)}
    files["h40.h"] = "\n"
    files["k.c"] = KERNEL_WITH.format(first="h0.h")
    _write(tmp_path, files)
    assert main(["designs", str(tmp_path / "k.c")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "includes nested deeper than 32 files: k.c -> h0.h -> h1.h" in err


def _holds(condition: str, i: int, j: int) -> bool:
    python = condition.replace("||", " or ").replace("&&", " and ").replace("!(", " not (")
    return bool(eval(python, {"i": i, "j": j}))


@pytest.mark.parametrize("condition, count", [
    ("i != j", 30), ("i < 2 || j == i", 2 * 6 + 4), ("!(i < 2) && !(j > 3)", 4 * 4),
    ("i == 0 || i == 5 || j == 0", 6 + 6 + 4),
])
def test_not_equal_or_and_not_split_into_disjoint_pieces(write_kernel, condition, count):
    path = write_kernel(f"""\
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < 6; j++)
            if ({condition})
              A[i][j] = 1;
            else if (j == 5)
              A[i][j] = 2;
        """, prelude="float A[6][6];\n")
    space = compile_kernel(path)

    def runs(value: str) -> int:
        return sum(space.model.instance_count(s.name) for s in space.kernel.statements if str(s.expr) == value)

    cells = [(i, j) for i in range(6) for j in range(6)]
    assert runs("1") == count == sum(_holds(condition, i, j) for i, j in cells)
    assert runs("2") == sum(not _holds(condition, i, j) and j == 5 for i, j in cells)


def test_an_else_the_loops_never_reach_is_dropped(write_kernel):
    path = write_kernel("""\
        for (int i = 0; i < 6; i++)
          if (i >= 0)
            A[i] = 1;
          else
            A[i] = 2;
        """, prelude="float A[6];\n")
    assert [str(s.expr) for s in compile_kernel(path).kernel.statements] == ["1"]
