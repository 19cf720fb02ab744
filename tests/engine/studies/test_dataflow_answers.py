"""The networks study groups a run's designs by dataflow: a layer's dataflow throughput is the better of
the dataflow's designs there (SIMD on the space loop or on a time loop), and its share is the geometric
mean over layers of that against each layer's best."""
from __future__ import annotations

import math

import pytest

from engine.network.answers import DesignAnswer, LayerAnswer, NetworkAnswers
from engine.studies.networks import dataflow_answers


def answers(layers: dict[str, dict[str, float | None]], loops: dict[str, tuple[str, ...]]) -> NetworkAnswers:
    layer_answers = tuple(
        LayerAnswer(name, {}, max(g, key=lambda d: g[d] or 0.0), max(v or 0.0 for v in g.values()), 1.0, dict(g))
        for name, g in layers.items())
    designs = tuple(DesignAnswer(d, l, "<p>", 0.0, 0) for d, l in loops.items())
    return NetworkAnswers("n", layer_answers, designs, None, (), True)


def test_a_dataflow_takes_its_better_design_on_each_layer():
    run = answers({"a": {"hi": 50.0, "hi_simd": 80.0, "oh": 100.0},
                   "b": {"hi": 90.0, "hi_simd": 40.0, "oh": 60.0}},
                  {"hi": ("h", "i"), "hi_simd": ("h", "i"), "oh": ("o", "h")})
    by_loops = {d.space_loops: d for d in dataflow_answers(run)}
    assert set(by_loops) == {("h", "i"), ("o", "h")}
    hi = by_loops[("h", "i")]
    assert hi.layer_gops == {"a": 80.0, "b": 90.0}
    assert hi.layer_design == {"a": "hi_simd", "b": "hi"}
    assert hi.geomean_share == pytest.approx(math.sqrt(0.8 * 1.0))
    assert by_loops[("o", "h")].geomean_share == pytest.approx(math.sqrt(1.0 * 60 / 90))
    assert [d.space_loops for d in dataflow_answers(run)] == [("h", "i"), ("o", "h")]  # best share first


def test_a_dataflow_infeasible_on_a_layer_scores_zero():
    run = answers({"a": {"x": None, "y": 10.0}, "b": {"x": 5.0, "y": 10.0}}, {"x": ("o",), "y": ("h",)})
    x = next(d for d in dataflow_answers(run) if d.space_loops == ("o",))
    assert x.geomean_share == 0.0 and x.layer_design["a"] is None and x.main_design == "x"
