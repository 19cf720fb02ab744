"""Dependence analysis with isl, checked against the AutoSA paper's MM example (its Table 2)."""
from __future__ import annotations

from types import SimpleNamespace

from engine.compiler.band import find_band
from engine.compiler.dependences import analyze_dependences, reuse_vectors
from engine.compiler.frontend import parse_kernel
from engine.compiler.ir import Access, Affine
from engine.compiler.polyhedral import build_model


def _analysed(path, defines=None):
    model = build_model(parse_kernel(path, defines=defines))
    deps = analyze_dependences(model)
    return model, deps, find_band(model, deps)


def _distances(band, deps):
    return {(d.array, tuple(lo for lo, _ in band.distance_ranges(d))) for d in deps}


def test_mm_dependences_match_autosa_table_2(bundled):
    _, deps, band = _analysed(bundled("mm"), ["I=16", "J=16", "K=16"])
    assert band.loops == ("i", "j", "k") and band.origin == "written"
    assert _distances(band, deps.read) == {("A", (0, 1, 0)), ("B", (1, 0, 0))}
    # the accumulation on C is a reduction along k; the initialisation feeds its first step
    assert _distances(band, deps.reduction) == {("C", (0, 0, 1))}
    assert {str(d) for d in deps.flow} == {"S0[i, j] -> S1[i, j, 0]"}
    assert deps.reductions["S1"].loops == ("k",)


def test_cnn_input_is_reused_along_o_and_the_two_diagonals(bundled):
    _, deps, band = _analysed(bundled("cnn"), ["O=8", "I=8", "H=8", "W=8"])
    fi = {v for a, v in _distances(band, deps.read) if a == "fi"}
    assert fi == {(1, 0, 0, 0, 0, 0), (0, 1, 0, 0, -1, 0), (0, 0, 1, 0, 0, -1)}
    wt = {v for a, v in _distances(band, deps.read) if a == "wt"}
    assert wt == {(0, 1, 0, 0, 0, 0), (0, 0, 1, 0, 0, 0)}
    # written order (i, p, q): the chain wraps q to 0 when p steps, so q and p see negative distances
    assert (("fo", (0, 0, 0, 0, 1, -2))) in _distances(band, deps.reduction)


def test_reuse_vectors_are_primitive_and_forward():
    statement = SimpleNamespace(iterators=("i", "j", "k"))
    skewed = Access("x", (Affine.of({"i": 2, "j": 1}),))  # x[2i + j]: reused along (1, -2, 0) and k
    assert sorted(reuse_vectors(statement, skewed)) == [(0, 0, 1), (1, -2, 0)]
    assert reuse_vectors(statement, Access("s", ())) == [(1, 0, 0), (0, 1, 0), (0, 0, 1)]


def test_band_from_isl_scheduler_when_the_nest_is_not_permutable(write_kernel):
    path = write_kernel("""\
        for (int i = 1; i < 16; i++)
          for (int j = 0; j < 15; j++)
            A[i][j] = A[i - 1][j + 1] + 1;
        """, prelude="float A[17][17];\n")
    _, deps, band = _analysed(path)
    assert band.origin == "isl scheduler"
    assert all(lo >= 0 for dep in deps.validity for lo, _ in band.distance_ranges(dep))
