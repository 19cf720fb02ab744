"""Counting statement executions by running isl's generated AST, checked against isl's cardinality and hand counts."""
from __future__ import annotations

import math

import islpy as isl
import pytest

from engine.compiler.isl_ast_count import ast_for, count_executions, count_points, evaluate


def _card(domain: isl.Set, params: dict[str, int] | None = None) -> int:
    """isl's own point count, with parameters fixed to `params` and then projected away."""
    for name, value in (params or {}).items():
        domain = domain.fix_val(isl.dim_type.param, domain.find_dim_by_name(isl.dim_type.param, name), value)
    return domain.project_out(isl.dim_type.param, 0, domain.dim(isl.dim_type.param)).count_val().to_python()


def _op_names(node: isl.AstNode) -> set[str]:
    found: set[str] = set()

    def expr(e: isl.AstExpr) -> None:
        if e.get_type() == isl.ast_expr_type.op:
            found.add(str(e.get_op_type()).rsplit(".", 1)[-1])
            for i in range(e.get_op_n_arg()):
                expr(e.get_op_arg(i))

    def visit(n: isl.AstNode) -> bool:
        if n.get_type() == isl.ast_node_type.for_:
            for e in (n.for_get_init(), n.for_get_cond(), n.for_get_inc()):
                expr(e)
        elif n.get_type() == isl.ast_node_type.if_:
            expr(n.if_get_cond())
        return True

    node.foreach_descendant_top_down(visit)
    return found


@pytest.mark.parametrize("extents", [(7,), (3, 4), (2, 3, 5), (4, 1, 3, 2), (2, 2, 3, 2, 5)])
def test_boxes_of_one_to_five_dimensions(extents):
    names = [f"x{k}" for k in range(len(extents))]
    body = " and ".join(f"0 <= {x} < {n}" for x, n in zip(names, extents))
    box = isl.Set(f"{{ [{', '.join(names)}] : {body} }}")
    assert count_points(box) == math.prod(extents) == _card(box)


def test_box_with_nonzero_lower_bounds():
    box = isl.Set("{ [i, j] : -5 <= i <= 4 and 3 <= j < 10 }")
    assert count_points(box) == 10 * 7 == _card(box)


def test_triangle():
    triangle = isl.Set("{ [i, j] : 0 <= j <= i < 10 }")
    assert count_points(triangle) == 55 == _card(triangle)


def test_tiled_set_with_existential_floor_and_mod():
    tiled = isl.Set("{ [t, p] : exists x : 0 <= x < 100 and t = floor(x/7) and p = x mod 7 }")
    assert count_points(tiled) == 100 == _card(tiled)


def test_tiled_set_over_negative_range_uses_floor_semantics():
    tiled = isl.Set("{ [t, p] : exists x : -50 <= x < 100 and t = floor(x/7) and p = x mod 7 }")
    assert count_points(tiled) == 150 == _card(tiled)


def test_strided_sets():
    multiples = isl.Set("{ [i] : exists a : i = 3a and 0 <= i < 50 }")
    shifted = isl.Set("{ [i] : exists a : i = 3a + 1 and -20 <= i < 50 }")
    assert "+= 3" in ast_for(multiples).to_C_str()
    assert count_points(multiples) == 17 == _card(multiples)
    assert count_points(shifted) == 24 == _card(shifted)


def test_sets_split_into_several_loops_or_statements():
    columns = isl.Set("{ [i, j] : 0 <= i < 10 and (j = 0 or j = 5) }")
    boxes = isl.Set("{ [i, j] : (0 <= i < 4 and 0 <= j < 3) or (10 <= i < 12 and 7 <= j < 12) }")
    assert count_points(columns) == 20 == _card(columns)
    assert count_points(boxes) == 12 + 10 == _card(boxes)
    assert ast_for(boxes).get_type() == isl.ast_node_type.block


def test_min_and_max_bounds():
    wedge = isl.Set("{ [i, j] : 0 <= i < 20 and 0 <= j < i and j < 15 - i + 8 }")
    by_hand = sum(max(0, min(i, 23 - i)) for i in range(20))
    assert "min(" in ast_for(wedge).to_C_str()
    assert count_points(wedge) == by_hand == 126 == _card(wedge)


def test_empty_set_and_single_point():
    assert count_points(isl.Set("{ [i, j] : 0 <= i < 5 and i > 7 }")) == 0
    assert count_points(isl.Set("{ [3, 4] }")) == 1
    assert count_points(isl.Set("{ S[2, -1, 9] }")) == 1


def test_guards_on_iterators_are_evaluated_per_point():
    lattice = isl.Set("{ [i, j] : -10 <= i <= 10 and -10 <= j <= 10 and (i + 2j) mod 3 = 0 and i mod 4 != 1 }")
    sieve = isl.Set("{ [i, j] : 0 <= i < 10 and 0 <= j < 10 and (i mod 2 = 0 or j mod 3 = 0) }")
    assert {"zdiv_r", "pdiv_r", "pdiv_q", "div"} <= _op_names(ast_for(lattice))
    assert count_points(lattice) == 112 == _card(lattice)
    assert count_points(sieve) == 70 == _card(sieve)


def test_parametric_triangle_with_params():
    triangle = isl.Set("[n] -> { [i, j] : 0 <= j <= i < n }")
    node = ast_for(triangle)
    assert count_executions(node, {"n": 10}) == 55
    assert [count_executions(node, {"n": n}) for n in range(-2, 5)] == [0, 0, 0, 1, 3, 6, 10]


@pytest.mark.parametrize("text", [
    "[n] -> { [i] : 0 <= i < 10 and i <= floor(n/3) }",
    "[n] -> { [i] : 0 <= i < n and (i - n) mod 3 = 0 }",
    "[n, m] -> { [i, j] : 0 <= i < n and 0 <= j < m and j <= floor((i - n)/4) + 10 }",
    "[n] -> { [i] : -10 <= i <= 10 and (i mod 2 = 0 or i = n) }",
    "[n] -> { [i] : 0 <= i < 10 and (n mod 4 = 1 or n mod 4 = 2) }",
])
def test_parametric_sets_match_isl_for_negative_and_positive_params(text):
    domain = isl.Set(text)
    node = ast_for(domain)
    for n in range(-13, 14):
        params = {"n": n, "m": 7}
        used = {k: v for k, v in params.items() if domain.find_dim_by_name(isl.dim_type.param, k) >= 0}
        assert count_executions(node, params) == _card(domain, used)


def test_parametric_asts_exercise_division_min_max_and_or():
    ops: set[str] = set()
    for text in ["[n] -> { [i] : 0 <= i < 10 and i <= floor(n/3) }",
                 "[n] -> { [i] : 0 <= i < n and (i - n) mod 3 = 0 }",
                 "[n, m] -> { [i, j] : 0 <= i < n and 0 <= j < m and j <= floor((i - n)/4) + 10 }",
                 "[n] -> { [i] : -10 <= i <= 10 and (i mod 2 = 0 or i = n) }",
                 "[n] -> { [i] : 0 <= i < 10 and (n mod 4 = 1 or n mod 4 = 2) }"]:
        ops |= _op_names(ast_for(isl.Set(text)))
    assert {"fdiv_q", "pdiv_q", "zdiv_r", "min", "max", "minus", "and_", "or_", "lt", "le", "ge", "eq"} <= ops


def test_missing_parameter_is_an_error():
    with pytest.raises(KeyError):
        count_points(isl.Set("[n] -> { [i] : 0 <= i < n }"))


def test_loop_conditions_that_are_not_plain_upper_bounds_are_stepped():
    ctx = isl.Context()
    ctx.set_ast_build_atomic_upper_bound(0)
    wedge = isl.Set("{ [i, j] : 0 <= i < 30 and 0 <= j < 10 and 3j <= i and 2j <= 25 - i }", context=ctx)
    fan = isl.Set("{ [i, j] : 0 <= i < 30 and j >= 0 and 5j <= 2i + 3 }", context=ctx)
    assert "&&" in ast_for(wedge).to_C_str()
    assert count_points(wedge) == 81 == _card(wedge)
    assert count_points(fan) == sum((2 * i + 3) // 5 + 1 for i in range(30)) == _card(fan)


def test_large_box_of_a_million_points():
    box = isl.Set("{ [i, j, k] : 0 <= i < 200 and 0 <= j < 200 and 0 <= k < 25 }")
    assert count_points(box) == 1_000_000


def test_large_triangle():
    triangle = isl.Set("{ [i, j] : 0 <= j <= i < 1414 }")
    assert count_points(triangle) == 1414 * 1415 // 2 == _card(triangle)


def test_union_of_two_statements_of_different_dimension():
    union = isl.UnionSet("{ S[i] : 0 <= i < 5; T[i, j] : 0 <= i < 3 and 0 <= j < 3 }")
    assert count_points(union) == 5 + 9


def test_union_of_two_statements_sharing_loops():
    union = isl.UnionSet("{ S[i, j] : 0 <= i < 4 and 0 <= j < 4; T[i, j] : 0 <= j <= i < 4 }")
    text = ast_for(union).to_C_str()
    assert "S(" in text and "T(" in text
    assert count_points(union) == 16 + 10


def test_evaluate_division_and_lazy_operators():
    build = isl.AstBuild.from_context(isl.Set("[n, m] -> { : }"))
    absolute = build.expr_from_pw_aff(isl.PwAff("[n, m] -> { [(n)] : n >= 0; [(-n)] : n < 0 }"))
    residue = build.expr_from_pw_aff(isl.PwAff("[n, m] -> { [(n mod 5)] }"))
    assert absolute.get_op_type() == isl.ast_expr_op_type.select
    assert [evaluate(absolute, {"n": n, "m": 0}) for n in (-4, 0, 6)] == [4, 0, 6]
    assert [evaluate(residue, {"n": n, "m": 0}) for n in (-7, -5, 0, 8)] == [3, 0, 0, 3]
    n, m = isl.AstExpr.from_id(isl.Id("n")), isl.AstExpr.from_id(isl.Id("m"))
    seven = isl.AstExpr.from_val(isl.Val(7))
    assert evaluate(n.div(seven), {"n": -14}) == -2
    assert evaluate(n.pdiv_q(seven), {"n": 20}) == 2
    assert evaluate(n.pdiv_r(seven), {"n": 20}) == 6
    assert evaluate(seven.neg().add(n), {"n": 3}) == -4
    assert evaluate(n.and_then(m), {"n": 0}) == 0
    assert evaluate(n.or_else(m), {"n": 5}) == 1
    assert evaluate(n.and_then(m), {"n": 2, "m": 3}) == 1
