"""The three answers from pair and single-array results (hand-made results, so the arithmetic is checked)."""
from __future__ import annotations

import math

import pytest

from engine.network.answers import geometric_mean, network_answers
from engine.network.report import text_report, write_files
from engine.network.single_array import SingleArrayResult
from engine.network.task import PairResult
from engine.network.workload import Layer
from engine.search.progress import Candidate
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS

CLOCK = 300.0
LAYERS = (Layer("l1", {"I": 4, "J": 4, "K": 4}), Layer("l2", {"I": 8, "J": 4, "K": 4}))


@pytest.fixture(scope="module")
def designs():
    return compile_kernel(KERNELS / "mm.c", defines=["I=8", "J=4", "K=4"]).designs[:3]


def pair(layer, design, latency, ops):
    if latency is None:
        return PairResult(layer, design, None, 10, 0.1)
    gops = ops / (latency / (CLOCK * 1e6)) / 1e9
    return PairResult(layer, design, Candidate({"i_t1": 1}, latency, 10.0, 2.0, gops), 10, 0.1)


def test_best_per_layer_geomean_per_design_and_the_single_array(designs, tmp_path):
    a, b, c = (d.id for d in designs)
    ops = {"l1": 128.0, "l2": 256.0}
    pairs = [pair("l1", a, 100, ops["l1"]), pair("l1", b, 200, ops["l1"]), pair("l1", c, None, 0),
             pair("l2", a, 400, ops["l2"]), pair("l2", b, 100, ops["l2"]), pair("l2", c, 800, ops["l2"])]
    single = SingleArrayResult(b, {"i_t1": 2}, 500.0, {"l1": 250.0, "l2": 250.0}, 20.0, 4.0, 100, 1.0, 0.0)
    answers = network_answers("net", LAYERS, designs, pairs, [single], CLOCK)
    assert [(l.best_design, l.best_latency_cycles) for l in answers.layers] == [(a, 100), (b, 100)]
    shares = {d.id: d.geomean_share for d in answers.designs}
    assert shares[a] == pytest.approx(math.sqrt(1.0 * 0.25))
    assert shares[b] == pytest.approx(math.sqrt(0.5 * 1.0))
    assert shares[c] == 0.0  # nothing feasible on l1
    assert answers.designs[0].id == b
    s = answers.single_array
    assert s.design == b and s.share_of_peak == pytest.approx(200 / 500)
    assert s.layer_share == pytest.approx({"l1": 0.4, "l2": 0.4})
    assert s.network_gops == pytest.approx((128 + 256) / (500 / 300e6) / 1e9)
    assert answers.complete
    out = answers.to_json()
    assert out["layers"][0]["designs"][c] is None and out["single_array"]["share_of_peak"] == pytest.approx(0.4)
    assert set(out["designs"][0]) >= {"id", "space_loops", "permutation", "geomean_share"}
    assert "(c) best single array" in text_report(answers)
    files = write_files(answers, tmp_path)
    assert all(f.stat().st_size > 0 for f in files) and len(files) == 6


def test_a_single_array_faster_than_a_layers_own_search_raises_that_layers_peak(designs):
    a = designs[0].id
    pairs = [pair("l1", a, 100, 128.0), pair("l2", a, 100, 256.0)]
    single = SingleArrayResult(a, {"i_t1": 2}, 150.0, {"l1": 50.0, "l2": 100.0}, 20.0, 4.0, 100, 1.0, 0.0)
    answers = network_answers("net", LAYERS, designs[:1], pairs, [single], CLOCK)
    assert answers.single_array.share_of_peak == pytest.approx(1.0)


def test_incomplete_runs_say_so(designs):
    answers = network_answers("net", LAYERS, designs, [pair("l1", designs[0].id, 100, 128.0)], [], CLOCK)
    assert not answers.complete and answers.single_array is None


def test_geometric_mean():
    assert geometric_mean([0.5, 2.0]) == pytest.approx(1.0)
    assert geometric_mean([]) == 0.0 and geometric_mean([1.0, 0.0]) == 0.0
