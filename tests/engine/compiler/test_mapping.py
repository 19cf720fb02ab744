"""Explicit space-time matrices (T2S-Tensor / PolySA style): legality against the dependences, the
array they imply, which listed design they equal, and bad matrices as one line with exit 2."""
from __future__ import annotations

import itertools
import json

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.compiler.mapping import map_space_time, parse_matrix, parse_rows, stt_from_loops
from engine.errors import DesignError, LegalityError


@pytest.fixture(scope="module")
def mm():
    from engine.resources import KERNELS
    return compile_kernel(KERNELS / "mm.c", defines=["I=8", "J=6", "K=5"])


@pytest.fixture(scope="module")
def lu():
    from engine.resources import KERNELS
    return compile_kernel(KERNELS / "lu.c", defines=["N=12"])


def test_output_stationary_mm_is_the_listed_i_j_array(mm):
    m = map_space_time(mm, [(1, 0, 0), (0, 1, 0), (1, 1, 1)], 2)
    assert (m.pe_count, m.shape) == (48, (8, 6))
    assert m.time_range == ((0, 7 + 5 + 4),)
    steps = {(x.array, x.kind): (x.space_step, x.time_step) for x in m.movements}
    assert steps == {("A", "read"): ((0, 1), (1,)), ("B", "read"): ((1, 0), (1,)),
                     ("C", "reduction"): ((0, 0), (1,))}
    assert m.stationary_arrays() == ["C"]
    assert set(m.equals) == {d.id for d in mm.designs if d.space_loops == ("i", "j")}


def test_a_skewed_array_that_loop_selection_does_not_list(mm):
    """PE (i + k, j): C moves along the first PE dimension; the array is (I + K - 1) x J."""
    m = map_space_time(mm, [(1, 0, 1), (0, 1, 0), (1, 1, 2)], 2)
    assert m.equals == ()
    assert m.shape == (8 + 5 - 1, 6) and m.pe_count == (8 + 5 - 1) * 6
    c = next(x for x in m.movements if x.array == "C")
    assert (c.space_step, c.time_step) == ((1, 0), (2,))
    assert m.stationary_arrays() == []


def test_pe_count_brute_force_on_the_lu_pyramid(lu):
    """The [k,j] array of AutoSA's Fig. 12b is triangular: PEs (k, j) with k <= j."""
    m = map_space_time(lu, [(1, 0, 0), (0, 1, 0), (1, 1, 1)], 2)
    pes = {(k, j) for k, j, i in itertools.product(range(12), repeat=3) if k <= j and k <= i}
    times = {k + j + i for k, j, i in itertools.product(range(12), repeat=3) if k <= j and k <= i}
    assert m.pe_count == len(pes) == 12 * 13 // 2
    assert m.shape == (12, 12)
    assert m.time_range == ((min(times), max(times)),)
    assert m.equals == ("k-j__k-j-i",)


@pytest.mark.parametrize("rows, phrase", [
    ([(1, 0, 0), (0, 1, 0), (0, 0, 1)], "reuse at the same time step on different PEs"),
    ([(1, 0, 0), (0, 1, 0), (1, 1, -1)], "would take its first update at another iteration"),
    ([(2, 0, 0), (0, 1, 0), (1, 1, 1)], "more than one PE"),
])
def test_illegal_matrices_name_the_dependence_they_break(mm, rows, phrase):
    with pytest.raises(LegalityError) as info:
        map_space_time(mm, rows, 2)
    assert phrase in str(info.value) and " -> S1[" in str(info.value)  # the dependence it breaks


def test_every_listed_dataflow_is_legal_with_a_skewed_time(mm):
    """Each listed dataflow as space rows, time = sum of the loops: legal and equal to its designs."""
    loops = mm.band.loops
    for space_loops in dict.fromkeys(d.space_loops for d in mm.designs):
        space_rows = [tuple(int(l == s) for l in loops) for s in space_loops]
        rest = [l for l in loops if l not in space_loops]
        time_rows = [tuple(int(l in rest[:len(rest) - 1] and l == r) for l in loops) for r in rest[:-1]]
        time_rows.append(tuple(1 for _ in loops))
        m = map_space_time(mm, space_rows + time_rows, len(space_rows))
        assert set(m.equals) == {d.id for d in mm.designs if d.space_loops == space_loops}


def test_two_reduction_loops_in_space_are_refused():
    """MTTKRP's k and l both reduce into D[i][j]: with both in space the chain jumps back across the
    array when l wraps (the reason loop selection does not list [k,l])."""
    from engine.resources import KERNELS
    space = compile_kernel(KERNELS / "mttkrp.c", defines=["I=4", "J=4", "K=4", "L=4"])
    with pytest.raises(LegalityError, match="reduction"):
        map_space_time(space, [(0, 0, 1, 0), (0, 0, 0, 1), (1, 0, 0, 0), (1, 1, 1, 1)], 2)


def test_rows_parse_over_the_band_loops():
    assert parse_rows("i, j", ("i", "j", "k"), "space") == [(1, 0, 0), (0, 1, 0)]
    assert parse_rows("i+j+k", ("i", "j", "k"), "time") == [(1, 1, 1)]
    assert parse_rows("2*i-k, -j", ("i", "j", "k"), "space") == [(2, 0, -1), (0, -1, 0)]


@pytest.mark.parametrize("args, phrase", [
    (["--stt", "[[1,0,0],[0,1,0]]"], "--stt is 2x3 (or ragged); expected 3x3"),
    (["--stt", "[[1,0,0],[0,1,0],[1,1,0.5]]"], "is not an integer"),
    (["--stt", "[[1,0,0],[0,1,0],[1,1,0]]"], "singular"),
    (["--stt", "[[1,0,0],[0,1,0],[1,1,1]"], "does not parse"),
    (["--space", "i,j", "--time", "i+j+m"], "'m', which is not a band loop (i,j,k)"),
    (["--space", "i,j", "--time", "i+j+1"], "constant term"),
    (["--space", "i,j", "--time", "i*j"], "does not parse"),
    (["--space", "i,j", "--time", "i+j+k,k"], "expected 3, one per band loop"),
    (["--space", "i,j"], "--space needs --time"),
    (["--space", "i,j", "--time", "k"], "reuse at the same time step"),
])
def test_bad_matrices_are_one_line_exit_2(bundled, capsys, args, phrase):
    assert main(["mapping", str(bundled("mm")), "--preset", "tiny", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: ") and phrase in err, err


def test_cli_prints_the_array(bundled, capsys):
    assert main(["mapping", str(bundled("mm")), "--preset", "tiny", "--space", "i,j", "--time", "i+j+k"]) == 0
    out = capsys.readouterr().out
    assert "array: 2-D, 24 PEs (4 x 6)" in out
    assert "stationary arrays (stay in their PE): C" in out
    assert "equals listed designs: i-j__i-j.k" in out
    assert main(["mapping", str(bundled("mm")), "--preset", "tiny", "--stt", "[[1,0,1],[0,1,0],[1,1,2]]",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["legal"] and data["pe_shape"] == [4 + 8 - 1, 6] and data["equals_designs"] == []
    assert data["space"] == ["i+k", "j"] and data["time"] == ["i+j+2*k"]


def test_space_and_time_build_the_matrix(mm):
    assert stt_from_loops(mm, "i,j", "i+j+k") == ([(1, 0, 0), (0, 1, 0), (1, 1, 1)], 2)
    with pytest.raises(DesignError):
        parse_matrix("[[true,0,0],[0,1,0],[0,0,1]]", 3, ("i", "j", "k"))


def test_a_reduction_may_be_reordered_where_nothing_ties_its_ends():
    """MTTKRP's accumulation over (k, l) may run in another order (time (i+j+k+l, l)) as long as it
    starts after D = 0 and ends where the source's does."""
    from engine.resources import KERNELS
    space = compile_kernel(KERNELS / "mttkrp.c", defines=["I=4", "J=5", "K=6", "L=8"])
    m = map_space_time(space, [(1, 0, 0, 0), (0, 1, 0, 0), (1, 1, 1, 1), (0, 0, 0, 1)], 2)
    assert m.stationary_arrays()[:1] == ["D"] and m.pe_count == 20
