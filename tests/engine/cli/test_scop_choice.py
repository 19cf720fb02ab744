"""`--scop N`: a file with several #pragma scop regions is refused with a list of them unless one is
chosen; every kernel-reading subcommand takes the option (AutoSA's dnn_ops file holds several)."""
from __future__ import annotations

import json

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.errors import KernelError

TWO_SCOPS = """\
#define N 4
float A[N][N], B[N][N], C[N][N];
float x[N], y[N];

void matmul(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
}

void matvec(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      y[i] = y[i] + A[i][j] * x[j] * x[j];
#pragma endscop
}
"""


@pytest.fixture
def two_scops(tmp_path):
    path = tmp_path / "two.c"
    path.write_text(TWO_SCOPS)
    return path


def test_two_scops_without_a_choice_list_each_with_its_line(two_scops):
    with pytest.raises(KernelError) as caught:
        compile_kernel(two_scops)
    message = str(caught.value)
    assert "scop 1 at line 7 (in matmul)" in message and "scop 2 at line 17 (in matvec)" in message
    assert "--scop N" in message


def test_the_chosen_scop_is_the_one_compiled(two_scops):
    first, second = compile_kernel(two_scops, scop=1), compile_kernel(two_scops, scop=2)
    assert set(first.kernel.arrays) == {"A", "B", "C"} and first.band.loops == ("i", "j", "k")
    assert set(second.kernel.arrays) == {"A", "x", "y"} and second.band.loops == ("i", "j")


@pytest.mark.parametrize("command", [["designs"], ["search", "--samples", "4", "--no-store"],
                                     ["model", "--design", "i__i.j", *(f"--param={p}=1" for p in ("i_t1", "j_t1", "i_t2", "j_t2"))]])
def test_every_kernel_reading_subcommand_refuses_without_and_takes_scop(two_scops, capsys, command):
    name, *rest = command
    assert main([name, str(two_scops), *rest]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 #pragma scop regions" in err[0] and "choose one with --scop N" in err[0]
    assert main([name, str(two_scops), "--scop", "2", *rest]) == 0
    assert "i__i.j" in capsys.readouterr().out


def test_designs_json_for_each_scop(two_scops, capsys):
    assert main(["designs", str(two_scops), "--scop", "1", "--json"]) == 0
    assert any(d["band_loops"] == ["i", "j", "k"] for d in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("value", ["3", "0", "x"])
def test_a_scop_the_file_does_not_have_is_one_line(two_scops, capsys, value):
    assert main(["designs", str(two_scops), "--scop", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--scop" in err[0]
    if value == "3":
        assert "(1..2)" in err[0] and "scop 2 at line 17" in err[0]


def test_a_stored_search_exports_its_scop(two_scops, tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert main(["search", str(two_scops), "--scop", "2", "--design", "i__i.j", "--samples", "4",
                 "--db", str(db)]) == 0
    capsys.readouterr()
    out = tmp_path / "project"
    assert main(["export", "--run", "1", "--db", str(db), "-o", str(out)]) == 0
    descriptor = json.loads((out / "design.json").read_text())["descriptor"]
    assert set(descriptor["kernel"]["arrays"]) == {"A", "x", "y"}
