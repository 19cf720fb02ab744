"""AutoSA's LU kernel as it writes it and its [k,j] design at AutoSA's command, built once per size
per test session (engine/compiler/architecture tests: test_pe_set.py, test_io_reach.py)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.models.cache import shared_model
from engine.models.device import load_device
from engine.models.report import evaluate_configuration

AUTOSA_COMMAND = "{kernel[]->space_time[3];kernel[]->array_part[-1,-1,-1];kernel[]->latency[]}"

# AutoSA's autosa_tests/lu/kernel.c as it writes it (2-D local arrays rewritten at every step k)
AUTOSA_LU = """\
typedef float data_t;
#define N {n}
void lu_device(data_t A[N][N], data_t L[N][N], data_t U[N][N])
{{
#pragma scop
  {{
    data_t prev_V[N][N];
    data_t V[N][N];
    data_t U_tmp[N][N];
    data_t L_tmp[N][N];
    for (int k = 0; k < N; k++) {{
      for (int j = k; j < N; j++)
        for (int i = k; i < N; i++) {{
          if (k == 0)
            prev_V[i][j] = A[i][j];
          else
            prev_V[i][j] = V[i][j];
          if (j == k) {{
            U_tmp[i][j] = prev_V[i][j];
            U[j][i] = U_tmp[i][j];
          }} else {{
            U_tmp[i][j] = U_tmp[i][j - 1];
            if (i == k) {{
              L_tmp[i][j] = prev_V[i][j] / U_tmp[i][j];
              L[i][j] = L_tmp[i][j];
            }} else {{
              L_tmp[i][j] = L_tmp[i - 1][j];
            }}
            V[i][j] = prev_V[i][j] - L_tmp[i][j] * U_tmp[i][j];
          }}
        }}
    }}
  }}
#pragma endscop
}}
"""


@functools.cache
def autosa_lu(n: int):
    """(space, design, descriptor, model report) of AutoSA's command on its LU kernel at size n."""
    path = Path(tempfile.mkdtemp(prefix="autosa-lu-")) / f"lu{n}.c"
    path.write_text(AUTOSA_LU.format(n=n))
    space = compile_kernel(path)
    chosen = select(space, AUTOSA_COMMAND)
    model = shared_model(space, chosen.design, load_device("u250"))
    report = evaluate_configuration(model, chosen.params)
    return space, chosen.design, build_descriptor(space, chosen.design, model.architecture), report
