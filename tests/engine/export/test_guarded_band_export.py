"""Export of bands with guarded statements (descriptor 1.3 lists every statement the PE runs).

- `if (k == 0) C[i][j] = 0;` inside the k loop is the accumulator's initialisation, exported and
  C-simulated as the same initialisation before the k loop is;
- a PE running several statements over the scop's local arrays (LU) is refused in one line that
  names them, exit 2 (the model and the cycle simulator cover it; export does not yet).
"""
from __future__ import annotations

import shutil

import pytest

from engine.cli.main import main
from engine.resources import KERNELS

GUARDED_MM = """\
#define I 8
#define J 8
#define K 8
float A[I][K], B[K][J], C[I][J];
void kernel(void) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        if (k == 0)
          C[i][j] = 0;
        C[i][j] += A[i][k] * B[k][j];
      }
#pragma endscop
}
"""


def test_guarded_initialisation_exports_and_passes_csim(tmp_path, capsys):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    kernel = tmp_path / "mm_guarded.c"
    kernel.write_text(GUARDED_MM)
    out = tmp_path / "project"
    params = ["--param", "i_t1=4", "--param", "j_t1=4", "--param", "k_t1=8",
              "--param", "i_t2=2", "--param", "j_t2=2", "--param", "k_t2=2"]
    assert main(["export", str(kernel), "--design", "i-j__i-j.k", *params, "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["csim", str(out)]) == 0
    assert "PASS" in capsys.readouterr().out


def test_lu_export_is_refused_in_one_line(tmp_path, capsys):
    code = main(["export", str(KERNELS / "lu.c"), "-D", "N=8", "--design", "k-j__k-j-i",
                 "--param", "k_t1=8", "--param", "j_t1=8", "--param", "i_t1=8", "-o", str(tmp_path / "lu")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert "9 statements" in err and "prev_V" in err
