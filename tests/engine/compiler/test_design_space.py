"""The design space: Odyssey Table 2 by name, other kernels with the reasons for their counts, and
the tuning parameters each design exposes."""
from __future__ import annotations

import pytest

from engine.compiler.design_space import compile_kernel
from engine.errors import DesignError

MM_NAMES = {f"mm {df} {perm}" for df in ["[i]", "[j]", "[k]", "[i,j]", "[i,k]", "[j,k]"]
            for perm in ["<[i,j],k>", "<[j,k],i>", "<[i,k],j>"]}
# SIMD on the reduction space loop k (AutoSA --simd-touch-space --local-reduce)
MM_SPACE_SIMD = {f"mm {df} {perm} simd(k)" for df in ["[k]", "[i,k]", "[j,k]"]
                 for perm in ["<[i,j],k>", "<[j,k],i>", "<[i,k],j>"]}


def canonical(design):
    """A design up to the order of loops inside brackets (which is only how the source names them)."""
    return frozenset(design.space_loops), tuple(frozenset(g) for g in design.permutation.groups)


def test_mm_has_odyssey_table_2_designs_by_name(bundled):
    """18 dataflow x class designs with SIMD on a time loop, and the 9 whose space loops include the
    reduction loop k once more with SIMD on k: 27."""
    space = compile_kernel(bundled("mm"), defines=["I=64", "J=64", "K=64"])
    assert {d.name for d in space.designs} == MM_NAMES | MM_SPACE_SIMD
    assert len(space.designs) == 27


def test_every_odyssey_gemm_design_has_exactly_one_design_with_its_parameters(bundled):
    """Odyssey's 18 GEMM designs: six dataflows x three classes, latency hiding on i and j and SIMD
    k_t2 on k, so tunable i_t1, j_t1, k_t1, i_t2, j_t2, k_t2 with k_t2 the SIMD factor."""
    space = compile_kernel(bundled("mm"), defines=["I=64", "J=64", "K=64"])
    for name in MM_NAMES:
        dataflow = name.split()[1]
        matching = [d for d in space.designs if str(d.dataflow) == dataflow and name.split()[2] == str(d.permutation)
                    and {p.name: p.role for p in d.params} == {
                        "i_t1": "array_partition", "j_t1": "array_partition", "k_t1": "array_partition",
                        "i_t2": "latency_hiding", "j_t2": "latency_hiding", "k_t2": "simd"}]
        assert len(matching) == 1, name
        shape = {"i": "i_t1/i_t2", "j": "j_t1/j_t2", "k": "k_t1/k_t2"}
        assert matching[0].array_shape == tuple(shape[l] for l in matching[0].space_loops)


MM_VARIANT = """\
#define N 32
float A[N][N], B[N][N], C[N][N];
void kernel(void) {{
#pragma scop
  for (int {0} = 0; {0} < N; {0}++)
    for (int {1} = 0; {1} < N; {1}++)
      for (int {2} = 0; {2} < N; {2}++)
        C[i][j] += {3} * {4};
#pragma endscop
}}
"""


@pytest.mark.parametrize("order, a, b", [
    ("ijk", "A[k][i]", "B[j][k]"),  # transposed operands
    ("kij", "A[i][k]", "B[k][j]"),  # reduction loop outermost
    ("jki", "A[i][k]", "B[k][j]"),
    ("kji", "A[k][i]", "B[j][k]"),
])
def test_mm_written_differently_has_the_same_designs(tmp_path, order, a, b):
    path = tmp_path / "mm.c"
    path.write_text(MM_VARIANT.format(*order, a, b))
    designs = compile_kernel(path).designs
    expected = {(frozenset(s), (frozenset(r), frozenset(q))) for s in
                [("i",), ("j",), ("k",), ("i", "j"), ("i", "k"), ("j", "k")]
                for r, q in [(("i", "j"), ("k",)), (("j", "k"), ("i",)), (("i", "k"), ("j",))]}
    assert {canonical(d) for d in designs} == expected
    assert len(designs) == 27  # 18 + SIMD on k for the 3 dataflows with k in space x 3 classes


CNN_DATAFLOWS = ["o", "h", "w", "i", "o,h", "o,w", "o,i", "h,w", "h,i", "w,i"]
CNN_CLASSES = [("o,h,w", "i,p,q"), ("o,i,p,q", "h,w"), ("i,h,w,p,q", "o")]


def test_cnn_has_odyssey_table_2_designs(bundled):
    space = compile_kernel(bundled("cnn"), defines=["O=16", "I=16", "H=16", "W=16"])
    expected = {(frozenset(df.split(",")), tuple(frozenset(g.split(",")) for g in cls))
                for df in CNN_DATAFLOWS for cls in CNN_CLASSES}
    assert {canonical(d) for d in space.designs} == expected
    # 30, and the 4 dataflows with the reduction loop i in space x 3 classes again with SIMD on i
    assert len(space.designs) == 42
    assert len([d for d in space.designs if d.simd_on_space]) == 12
    # names keep loops in source order inside each bracket
    assert "cnn [o,h] <[h,w,i,p,q],o>" in {d.name for d in space.designs}


def test_mttkrp_has_9_dataflows_and_4_classes(bundled):
    """D[i][j] += A[i][k][l] * B[k][j] * C[l][j]; loops i, j, k, l; k and l are reduction loops.

    Dataflows: every read reuse is along a unit vector and the accumulation of D may follow any order
    of k and l, so each loop alone is legal (4) and so is each pair (6) except [k,l]: with both
    reduction loops in space, the accumulation chain jumps back across the array when the inner one
    wraps around (distance 1 - L). 4 + 5 = 9.
    Classes: the loops each reference does not use: D -> {k,l}, A -> {j}, B -> {i,l}, C -> {i,k}:
    4 distinct classes. 9 x 4 = 36, plus SIMD on the reduction space loop (k or l) for the 6
    dataflows that have one x 4 classes = 60.
    """
    space = compile_kernel(bundled("mttkrp"), defines=["I=16", "J=16", "K=16", "L=16"])
    assert {str(d.dataflow) for d in space.designs} == {
        "[i]", "[j]", "[k]", "[l]", "[i,j]", "[i,k]", "[i,l]", "[j,k]", "[j,l]"}
    assert {str(d.permutation) for d in space.designs} == {
        "<[i,j],[k,l]>", "<[i,k,l],j>", "<[j,k],[i,l]>", "<[j,l],[i,k]>"}
    assert len(space.designs) == 60


def test_ttm_has_10_dataflows_and_3_classes(bundled):
    """C[i][j][k] += A[i][j][l] * B[l][k]; one reduction loop (l), unit-vector reuse everywhere.

    Dataflows: all 4 single loops and all 6 pairs (only one reduction loop, so no pair is ruled
    out) = 10. Classes: C -> {l}, A -> {k}, B -> {i,j} = 3. 10 x 3 = 30, plus SIMD on l for
    [l], [i,l], [j,l], [k,l] x 3 classes = 42.
    """
    space = compile_kernel(bundled("ttm"), defines=["I=16", "J=16", "K=16", "L=16"])
    assert len({d.dataflow for d in space.designs}) == 10
    assert {str(d.permutation) for d in space.designs} == {"<[i,j,k],l>", "<[i,j,l],k>", "<[k,l],[i,j]>"}
    assert len(space.designs) == 42


def test_ttmc_has_14_dataflows_and_4_classes(bundled):
    """D[i][j][k] += A[i][l][m] * B[l][j] * C[m][k]; reduction loops l and m.

    Dataflows: 5 single loops + 10 pairs - [l,m] (two reduction loops) = 14. Classes: D -> {l,m},
    A -> {j,k}, B -> {i,k,m}, C -> {i,j,l} = 4. 14 x 4 = 56, plus SIMD on the reduction space
    loop for the 8 dataflows with l or m in space ([l], [m], and i, j, k paired with l or m) x 4 = 88.
    """
    space = compile_kernel(bundled("ttmc"), defines=["I=8", "J=8", "K=8", "L=8", "M=8"])
    assert len({d.dataflow for d in space.designs}) == 14
    assert "[l,m]" not in {str(d.dataflow) for d in space.designs}
    assert len({d.permutation for d in space.designs}) == 4
    assert len(space.designs) == 88


def test_a_kernel_nobody_showed_us_conv1d(write_kernel):
    """y[i] += x[i + k] * w[k]: x is reused along (1, -1), so k (distance -1) cannot be a space loop."""
    path = write_kernel("for (int i = 0; i < 30; i++)\n  for (int k = 0; k < 5; k++)\n"
                        "    y[i] += x[i + k] * w[k];\n", prelude="int x[34], w[5], y[30];\n")
    names = {d.name for d in compile_kernel(path).designs}
    assert names == {"k [i] <i,k>", "k [i] <k,i>", "k [i] <[i,k]>"}


def test_a_kernel_nobody_showed_us_batched_int16_mm(write_kernel):
    path = write_kernel("""\
        for (int b = 0; b < 4; b++) for (int i = 0; i < 16; i++)
          for (int j = 0; j < 16; j++) for (int k = 0; k < 16; k++)
            Z[b][i][j] = Z[b][i][j] + X[b][i][k] * Y[b][k][j];
        """, prelude="short X[4][16][16], Y[4][16][16], Z[4][16][16];\n")
    space = compile_kernel(path)
    # 10 dataflows x 3 classes, plus SIMD on k for [k], [b,k], [i,k], [j,k] x 3 classes
    assert len({d.dataflow for d in space.designs}) == 10 and len(space.designs) == 42
    assert space.kernel.arrays["Z"].dtype == "int16"


def test_odyssey_table_3_parameters_for_mm_ij(bundled):
    design = compile_kernel(bundled("mm")).design("mm [i,j] <[i,j],k>")
    assert design.id == "i-j__i-j.k"
    assert design.latency_hiding_loops == ("i", "j") and design.simd_loop == "k"
    assert design.array_shape == ("i_t1/i_t2", "j_t1/j_t2")
    tunable = {p.name: p for p in design.params if p.tunable}
    assert set(tunable) == {"i_t1", "j_t1", "k_t1", "i_t2", "j_t2", "k_t2"}
    assert (tunable["i_t1"].lower, tunable["i_t1"].upper) == (1, 1024)
    assert [c.to_json() for c in tunable["j_t2"].constraints] == [{"kind": "divides", "of": "j_t1"}]
    assert tunable["k_t2"].role == "simd" and tunable["k_t2"].upper == 16  # one 512-bit word of float
    assert {c.kind for c in tunable["k_t2"].constraints} == {"divides", "power_of_two"}
    assert design.simd.layout == {"B": (1, 0)}  # B[k][j] becomes B[j][k] so that k is stride one
    assert not [p for p in design.params if p.role == "data_packing"]  # per I/O level: the descriptor's


def test_simd_loop_is_a_time_loop_unless_the_design_says_space(bundled):
    space = compile_kernel(bundled("mm"), defines=["I=64", "J=64", "K=64"])
    for design in space.designs:
        assert (design.simd_loop in design.space_loops) == design.simd_on_space
        assert design.id.endswith("__simd-k") == design.simd_on_space
    assert space.design("k__i-j.k").simd_loop == "j"  # k is a space loop; j needs no layout change
    variant = space.design("k__i-j.k__simd-k")
    assert variant.simd_loop == "k" and variant.latency_hiding_loops == ("i", "j")
    assert variant.array_shape == ("k_t1/k_t2",) and variant.simd.layout == {"B": (1, 0)}
    assert space.design("mm [k] <[i,j],k> simd(k)") == variant


def test_cnn_simd_is_the_input_channel_loop(bundled):
    space = compile_kernel(bundled("cnn"), defines=["O=16", "I=16", "H=16", "W=16"])
    assert {d.simd_loop for d in space.designs if "i" not in d.space_loops or d.simd_on_space} == {"i"}


def test_ids_are_stable_unique_and_looked_up(bundled):
    first = [d.id for d in compile_kernel(bundled("cnn")).designs]
    second = [d.id for d in compile_kernel(bundled("cnn")).designs]
    assert first == second and len(set(first)) == 42
    with pytest.raises(DesignError, match="no design 'nope'"):
        compile_kernel(bundled("mm")).design("nope")


def test_simd_touch_space_adds_parallel_space_simd_designs_only_when_asked(bundled):
    """AutoSA's --simd-touch-space, off by default: the default list is unchanged; with it each
    dataflow with a parallel space loop whose references are stride-0/1 gains a design with SIMD
    on it (MM [i,j]: j, B[k][j] and C[i][j] stride one), each PE computing j_t2 outputs."""
    defines = ["I=64", "J=64", "K=64"]
    plain = compile_kernel(bundled("mm"), defines=defines)
    touched = compile_kernel(bundled("mm"), defines=defines, simd_touch_space=True)
    assert not plain.simd_touch_space and touched.simd_touch_space
    assert {d.id for d in plain.designs} < {d.id for d in touched.designs}
    added = [d for d in touched.designs if d.id not in {p.id for p in plain.designs}]
    assert all(d.simd_on_space and not d.simd.is_reduction for d in added)
    design = touched.design("i-j__i-j.k__simd-j")
    assert design.array_shape == ("i_t1/i_t2", "j_t1/j_t2") and design.latency_hiding_loops == ("i",)
    assert design.param("j_t2").role == "simd" and design.param("j_t2").upper == 16  # 16 float lanes
    # [i,k] keeps SIMD on the reduction space loop k and gains SIMD on the parallel space loop i
    assert {d.simd_loop for d in touched.designs if d.space_loops == ("i", "k") and d.simd_on_space} == {"i", "k"}
