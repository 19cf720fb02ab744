"""Both DRAM layouts pass C simulation: MM and CNN designs with several tiles per loop, designs that run
passes and read partial results back (their accumulated array stays natural in the serialized
layout where the PEs cut its rows, as design.json says, and is serialized where the storer's PE boxes
follow its rows: PEs along i, or along j with C stored transposed), a 1-D design whose DRAM loader prefetches blocks, and a kernel without
an initialisation statement (`C[i][j] += ...` only) with one pass and with several. The harness packs
the inputs with the export's own `serialize_<port>` and unpacks with `deserialize_<port>`. An export
whose DRAM loop no longer matches the host's packing is refused before anything runs: one line,
exit 2."""
from __future__ import annotations

import concurrent.futures
import functools
import json

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.csim import run_csim
from engine.export import export_project
from engine.resources import KERNELS

NO_INIT = """
#define I 32
#define J 32
#define K 32
float A[I][K];
float B[K][J];
float C[I][J];

void kernel(void)
{
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
}
"""
MM64 = {"I": "64", "J": "64", "K": "64"}
CNN8 = {"O": "8", "I": "8", "H": "8", "W": "8", "P": "3", "Q": "3"}
CNN_PARAMS = {"o_t1": 4, "h_t1": 4, "w_t1": 8, "i_t1": 4, "p_t1": 3, "q_t1": 3, "o_t2": 2, "h_t2": 2, "w_t2": 4,
              "i_t2": 2}
MM_PARAMS = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4}
# (name, kernel, defines, design, parameters, layouts, passes)
CASES = [
    ("mm-tiles", "mm", MM64, "i-j__i-j.k", MM_PARAMS, ("serialized", "natural"), False),
    ("mm-passes", "mm", MM64, "i-j__i-k.j", MM_PARAMS, ("serialized", "natural"), True),
    ("mm-1d-prefetch", "mm", MM64, "i__i-j.k", MM_PARAMS, ("serialized",), False),
    ("cnn-tiles", "cnn", CNN8, "o-h__o-h-w.i-p-q", CNN_PARAMS, ("serialized", "natural"), False),
    ("cnn-passes", "cnn", CNN8, "o-h__o-i-p-q.h-w", CNN_PARAMS, ("serialized", "natural"), True),
    ("no-init-one-pass", "no_init", {}, "i-j__i-j.k", MM_PARAMS, ("serialized",), False),
    ("no-init-passes", "no_init", {}, "i-k__i-k.j", {"i_t1": 16, "j_t1": 16, "k_t1": 8, "i_t2": 4, "j_t2": 4},
     ("serialized",), True),
    ("mm-passes-transposed", "mm", MM64, "j-k__j-k.i", {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4},
     ("serialized",), True),
]
READ_BACK_SERIALIZED = {"no-init-passes", "mm-passes-transposed"}  # loader and storer share one order
RUNS = [(name, layout) for name, *_, layouts, _ in CASES for layout in layouts]


def _kernel(name: str, folder):
    if name != "no_init":
        return KERNELS / f"{name}.c"
    path = folder / "no_init.c"
    path.write_text(NO_INIT)
    return path


@functools.cache
def _space(kernel: str, folder, defines: tuple):
    """Each kernel and sizes compiled once per worker process."""
    return compile_kernel(_kernel(kernel, folder), defines=dict(defines))


def _export_and_run(name: str, layout: str, folder):
    _, kernel, defines, design, params, _, _ = next(c for c in CASES if c[0] == name)
    space = _space(kernel, folder, tuple(defines.items()))
    project = export_project(space, space.design(design), params, folder / f"{name}-{layout}", layout=layout,
                             allow_over_budget=True, floorplan="none")
    code = (project / "src" / "kernel_kernel.cpp").read_text()
    return json.loads((project / "design.json").read_text()), run_csim(project), "kernel0_pass(" in code


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layouts")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        runs = pool.map(_export_and_run, *zip(*[(n, l, folder) for n, l in RUNS]))
        return dict(zip(RUNS, runs))


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r[0]}-{r[1]}")
def test_the_layout_passes_c_simulation(results, run):
    design, result, runs_passes = results[run]
    name, layout = run
    passes = next(c[-1] for c in CASES if c[0] == name)
    assert result.passed, f"{result.summary}\n{result.command}\n{result.log[-2000:]}"
    assert design["layout"] == layout
    assert runs_passes == passes
    for port, dram in design["dram"].items():
        natural = dram["kind"] == "read and write" and name not in READ_BACK_SERIALIZED
        assert dram["layout"] == ("natural" if natural else layout), port
        assert ("reason" in dram) == (natural and layout == "serialized")
    if passes or name.startswith("no-init"):
        assert any(d["kind"] == "read and write" for d in design["dram"].values())


@pytest.fixture
def serialized_mm(tmp_path):
    space = compile_kernel(KERNELS / "mm.c", defines=MM64)
    return export_project(space, space.design("i-j__i-j.k"), MM_PARAMS, tmp_path / "mm", allow_over_budget=True,
                          floorplan="none")


@pytest.mark.parametrize("edit", ["access", "depth"])
def test_a_dram_loop_that_no_longer_matches_the_hosts_packing_is_refused(serialized_mm, edit, capsys):
    design = json.loads((serialized_mm / "design.json").read_text())
    kernel = serialized_mm / "src" / "kernel_kernel.cpp"
    code = kernel.read_text()
    access, words = design["dram"]["A"]["access"], design["dram"]["A"]["words"]
    if edit == "access":  # a loader that reads its rows in another order
        edited = code.replace(access, access.replace("d0", "(d0 ^ 1)"))
    else:  # a port whose buffer is not the host's
        edited = code.replace(f"port=A offset=slave bundle=gmem_A depth={words} ",
                              f"port=A offset=slave bundle=gmem_A depth={words - 1} ")
    assert edited != code
    kernel.write_text(edited)
    assert main(["csim", str(serialized_mm)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "port A" in err[0] and "re-export" in err[0], err
