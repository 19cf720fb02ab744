"""AutoSA's --sa-sizes: the space_time order computed from the design space, the string <-> design +
parameters round trip for every MM and CNN design, and bad strings as one line with exit 2."""
from __future__ import annotations

import json

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import (autosa_band, autosa_design, autosa_space_time, parse_sa_sizes, select,
                                      space_time_order, to_sa_sizes)
from engine.errors import DesignError


@pytest.fixture(scope="module")
def mm():
    from engine.resources import KERNELS
    return compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])


@pytest.fixture(scope="module")
def cnn():
    from engine.resources import KERNELS
    return compile_kernel(KERNELS / "cnn.c", defines=["O=16", "I=16", "H=16", "W=16", "P=3", "Q=3"])


def test_space_time_order_is_autosas(mm, cnn):
    assert space_time_order(mm) == [("i",), ("j",), ("k",), ("i", "j"), ("i", "k"), ("j", "k")]
    assert space_time_order(cnn) == [("o",), ("h",), ("w",), ("i",), ("o", "h"), ("o", "w"), ("o", "i"),
                                     ("h", "w"), ("h", "i"), ("w", "i")]


def test_space_time_order_follows_the_band_not_a_table(write_kernel):
    """The same MM with the loops written j, k, i: AutoSA numbers the candidates in that order."""
    path = write_kernel("""\
        for (int j = 0; j < 8; j++)
          for (int k = 0; k < 8; k++)
            for (int i = 0; i < 8; i++)
              C[i][j] += A[i][k] * B[k][j];
        """, prelude="float A[8][8], B[8][8], C[8][8];\n")
    assert space_time_order(compile_kernel(path)) == [("j",), ("k",), ("i",), ("j", "k"), ("j", "i"), ("k", "i")]


def _configuration(space, design) -> dict[str, int]:
    """A valid, non-trivial configuration AutoSA can write: t1 = extent / 2 (at least 1) on its band's
    loops, the extent after it (AutoSA does not partition those), t2 = 2 where it divides (latency
    hiding on its band's loops only)."""
    band = autosa_band(space)
    values = {}
    for p in design.params:
        if p.role == "array_partition":
            values[p.name] = max(1, p.upper // 2) if p.loop in band else p.upper
    for p in design.params:
        if p.role in ("latency_hiding", "simd"):
            t1 = values[f"{p.loop}_t1"]
            hidden_outside = p.role == "latency_hiding" and p.loop not in band
            values[p.name] = 2 if t1 % 2 == 0 and p.upper >= 2 and not hidden_outside else 1
    return values


@pytest.mark.parametrize("kernel", ["mm", "cnn"])
def test_round_trip_for_every_design(request, kernel):
    """MM 27 = 18 + 9 (SIMD on k for [k], [i,k], [j,k] x 3 classes); CNN 42 = 30 + 12 (SIMD on i for
    [i], [o,i], [h,i], [w,i] x 3 classes)."""
    space = request.getfixturevalue(kernel)
    assert len(space.designs) == {"mm": 27, "cnn": 42}[kernel]
    for design in space.designs:
        params = _configuration(space, design)
        text = to_sa_sizes(space, design, params)
        back = select(space, text, design=design.id)
        assert (back.design, back.params) == (design, params), text
        # without --design: the same dataflow and parameters, in the class AutoSA's loop order is in;
        # when both SIMD variants take as many latency factors (CNN [i]: o,h,w either way), the
        # string cannot tell them apart and the space-loop variant (--simd-touch-space) is meant
        plain = select(space, text)
        assert plain.design.space_loops == design.space_loops
        ambiguous = not design.simd_on_space and any(
            d.simd_on_space and d.space_loops == design.space_loops
            and len(d.latency_hiding_loops) == len(design.latency_hiding_loops) for d in space.designs)
        assert plain.design.simd_on_space == (design.simd_on_space or ambiguous), text
        if not ambiguous:
            assert plain.params == params
        if autosa_design(space, design.space_loops, design.simd_on_space) == design and not ambiguous:
            assert plain.design == design
            # the string fits both SIMD variants: the note names the other one
            told = design.simd_on_space and any(
                not d.simd_on_space and d.space_loops == design.space_loops
                and len(d.latency_hiding_loops) == len(design.latency_hiding_loops) for d in space.designs)
            assert ("--simd-touch-space; --design" in plain.note) == told, plain.note


def test_simd_touch_space_strings(mm):
    """MM [k] (space_time[2]): latency[i,j] + simd[k] is AutoSA --simd-touch-space (SIMD on k, the
    Odyssey design), latency[i] + simd on j the time-loop variant."""
    sel = select(mm, "{kernel[]->space_time[2];kernel[]->array_part[16,16,16];kernel[]->latency[4,8];"
                     "kernel[]->simd[4]}")
    assert sel.design.id == "k__i-k.j__simd-k"
    assert sel.params == {"k_t1": 16, "i_t1": 16, "j_t1": 16, "i_t2": 4, "j_t2": 8, "k_t2": 4}
    sel = select(mm, "{kernel[]->space_time[2];kernel[]->array_part[16,16,16];kernel[]->latency[4];"
                     "kernel[]->simd[4]}")
    assert sel.design.id == "k__i-k.j" and sel.params["j_t2"] == 4
    sel = select(mm, "{kernel[]->space_time[5];kernel[]->array_part[16,16,16];kernel[]->latency[4,2];"
                     "kernel[]->simd[8]}")
    assert sel.design.id.endswith("__simd-k") and sel.design.space_loops == ("j", "k") and not sel.note


def test_cnn_string_fits_both_simd_variants(cnn):
    """CNN [i] hides latency on o, h, w with SIMD on i (space) or on q (time): the string cannot
    tell them apart, so the --simd-touch-space design is chosen and the note names the other."""
    sel = select(cnn, "{kernel[]->space_time[3];kernel[]->array_part[16,8,8,8];kernel[]->latency[2,2,2];"
                      "kernel[]->simd[4]}")
    assert sel.design.simd_loop == "i" and sel.design.simd_on_space and sel.params["i_t2"] == 4
    assert "--design i__" in sel.note and "puts it on q" in sel.note


def test_autosa_order_class(mm, cnn):
    """AutoSA puts the space loops outermost: MM [k] runs k,i,j, which is <[i,k],j>; CNN [h,i] runs
    h,i,o,w,p,q, which is in none of CNN's three classes (the choice is then said)."""
    assert autosa_design(mm, ("k",)).id == "k__i-k.j"
    assert autosa_design(mm, ("i", "j")).id == "i-j__i-j.k"
    assert autosa_design(cnn, ("o", "h")).id == "o-h__o-h-w.i-p-q"
    assert autosa_design(cnn, ("h", "i")) is None
    text = "{kernel[]->space_time[8];kernel[]->array_part[8,8,8,8];kernel[]->latency[4,4,4];kernel[]->simd[2]}"
    assert "in no permutation class" in select(cnn, text).note


def test_the_issue_string(mm):
    sel = select(mm, "{kernel[]->space_time[3];kernel[]->array_part[260,256,512];kernel[]->latency[20,16];"
                     "kernel[]->simd[8]}")
    assert sel.design.id == "i-j__i-j.k"
    assert sel.params == {"i_t1": 260, "j_t1": 256, "k_t1": 512, "i_t2": 20, "j_t2": 16, "k_t2": 8}
    assert sel.equivalent() == ("--design i-j__i-j.k --param i_t1=260 --param j_t1=256 --param k_t1=512 "
                                "--param i_t2=20 --param j_t2=16 --param k_t2=8")


def test_minus_one_means_not_partitioned(mm):
    sel = select(mm, "{kernel[]->space_time[0];kernel[]->array_part[-1,-1,-1];kernel[]->latency[1,1]}")
    # no simd entry: AutoSA without SIMD candidates, one lane
    assert sel.params == {"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 1, "j_t2": 1, "k_t2": 1}


def test_designs_json_carries_the_index(bundled, capsys):
    assert main(["designs", str(bundled("mm")), "--preset", "small", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {d["id"]: d["autosa_space_time"] for d in listed if d["id"].endswith("__i-j.k")} == {
        "i__i-j.k": 0, "j__i-j.k": 1, "k__i-j.k": 2, "i-j__i-j.k": 3, "i-k__i-j.k": 4, "j-k__i-j.k": 5}


@pytest.mark.parametrize("text, phrase", [
    ("space_time[3]", "does not parse: expected {...}"),
    ("{kernel[]->space_time[3];kernel[]->array_part[16;16]}", "array_part[16' does not parse"),
    ("{kernel[]->space_time[3];kernel[]->array_part[a,b,c]}", "expected integers"),
    ("{kernel[]->space_time[3];kernel[]->tiling[1]}", "'tiling' is not known"),
    ("{kernel[]->array_part[16,16,16]}", "needs kernel[]->space_time[n]"),
    ("{kernel[]->space_time[6]}", "space_time[6] does not exist for mm: expected 0..5"),
    ("{kernel[]->space_time[3];kernel[]->array_part[16,16]}", "array_part has 2 factors; expected 3"),
    ("{kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8]}",
     "latency has 1 factors; expected 2"),
    ("{kernel[]->space_time[3];kernel[]->array_part[16,0,16]}", "expected a positive integer or -1"),
    ("{kernel[]->space_time[4];kernel[]->array_part[16,16,16];kernel[]->latency[8,8,8];kernel[]->simd[2]}",
     "latency has 3 factors; expected 2"),
])
def test_bad_strings_are_one_line_exit_2(bundled, capsys, text, phrase):
    assert main(["model", str(bundled("mm")), "--preset", "small", "--sa-sizes", text]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: --sa-sizes") and phrase in err, err


def test_design_of_another_dataflow_is_refused(mm):
    with pytest.raises(DesignError, match=r"has space loops \[i\] but --sa-sizes space_time\[3\] is \[i,j\]"):
        select(mm, "{kernel[]->space_time[3]}", design="i__i-j.k")


def test_parse_keeps_the_factors():
    sizes = parse_sa_sizes(" { kernel[]->space_time[ 2 ] ; kernel[]->array_part[4, 8,16]; kernel[]->latency[] } ")
    assert (sizes.space_time, sizes.array_part, sizes.latency, sizes.simd) == (2, (4, 8, 16), (), None)


def test_lu_order(bundled):
    space = compile_kernel(bundled("lu"), defines=["N=12"])
    assert space_time_order(space)[3] == ("k", "j")  # AutoSA's LU command uses space_time[3]
    assert [autosa_space_time(space, d) for d in space.designs] == [0, 1, 2, 3, 4, 5]


def test_export_and_simulate_take_sa_sizes(bundled, tmp_path, capsys):
    """(model takes it the same way: main() turns --sa-sizes into --design/--param for all three)"""
    text = "{kernel[]->space_time[3];kernel[]->array_part[4,4,4];kernel[]->latency[2,2];kernel[]->simd[2]}"
    out = tmp_path / "project"
    assert main(["export", str(bundled("mm")), "--preset", "tiny", "--sa-sizes", text, "-o", str(out)]) == 0
    assert ("--sa-sizes is: --design i-j__i-j.k --param i_t1=4 --param j_t1=4 --param k_t1=4 --param i_t2=2 "
            "--param j_t2=2 --param k_t2=2") in capsys.readouterr().err
    written = json.loads((out / "design.json").read_text())
    assert written["descriptor"]["design"]["id"] == "i-j__i-j.k"
    assert {k: written["values"][k] for k in ("i_t1", "j_t1", "k_t1", "i_t2", "j_t2", "k_t2")} == {
        "i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 2, "k_t2": 2}
    capsys.readouterr()
    assert main(["simulate", str(bundled("mm")), "--preset", "tiny", "--sa-sizes", text, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cycles"] > 0


def test_sa_sizes_and_the_same_param_twice_is_refused(bundled, capsys):
    text = "{kernel[]->space_time[3];kernel[]->array_part[4,4,4];kernel[]->latency[2,2];kernel[]->simd[2]}"
    assert main(["model", str(bundled("mm")), "--preset", "tiny", "--sa-sizes", text, "--param", "i_t1=2"]) == 2
    assert "--param i_t1 is also set by --sa-sizes" in capsys.readouterr().err
