"""The studies (engine/studies): each one, on MM 64^3 with two designs and tiny budgets, writes its CSV
(the right columns, one row per design and method), a PNG and a summary with the paper's number next
to the measured one; plus the shared pieces (output folder, CSV cells, loss arithmetic)."""
from __future__ import annotations

import csv
import json
import math

import pytest

from engine.compiler.design_space import compile_kernel
from engine.errors import EngineError
from engine.models.device import load_device
from engine.resources import KERNELS
from engine.studies import STUDIES, common
from engine.studies import latency_model, methods, mp_vs_hybrid, mutation, traffic_pruning

DESIGNS = ["i-j__i-j.k", "i__i-j.k"]
SECONDS = 0.15
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def problem():
    return compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"]), load_device("u250")


def read_csv(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def check_files(out, name, columns, methods_, report, paper):
    header, rows = read_csv(out / f"{name}.csv")
    assert header == columns
    assert sorted((r["design"], r["method"]) for r in rows) == sorted((d, m) for d in DESIGNS for m in methods_)
    png = (out / f"{name}.png").read_bytes()
    assert png.startswith(PNG) and len(png) > 1000
    summary = (out / "summary.txt").read_text()
    assert summary == report.text()
    assert paper in summary and "measured vs paper" in summary
    assert set(report.files) >= {f"{name}.csv", f"{name}.png", "summary.txt"}
    return {(r["design"], r["method"]): r for r in rows}


def test_methods_study_normalises_to_the_best_known(problem, tmp_path):
    space, device = problem
    # a best-known entry better than anything the study can find, for the first design only
    search = common.DesignModels(space, space.design(DESIGNS[0]), device).space()
    table = {"problem": {"device": "u250", "usable_ratio": device.usable_ratio, "clock_mhz": device.clock_mhz},
             "designs": {DESIGNS[0]: {"latency_cycles": 300.0, "model": common.fingerprint(search)},
                         DESIGNS[1]: {"latency_cycles": 1.0, "model": "stale"}}}
    known = tmp_path / "best_known.json"
    known.write_text(json.dumps(table))
    out = tmp_path / "a"
    report = methods.run_methods(space, device, designs=DESIGNS, seconds=SECONDS, out_dir=out, best_known=known)
    rows = check_files(out, "methods", methods.COLUMNS, methods.DEFAULT_METHODS, report, "93% (Fig. 8)")
    first = rows[DESIGNS[0], "hybrid"]
    assert first["reference"] == "best known"
    assert float(first["reference_gops"]) == pytest.approx(search.throughput(300.0))
    assert float(first["normalised"]) < 1
    second = [r for (d, _), r in rows.items() if d == DESIGNS[1]]
    assert {r["reference"] for r in second} == {"study"}  # the stale entry is ignored
    assert max(float(r["normalised"]) for r in second) == pytest.approx(1.0)
    header, trace = read_csv(out / "convergence.csv")
    assert header == methods.TRACE_COLUMNS and {r["method"] for r in trace} >= {"hybrid", "random"}
    assert all(0 < float(r["normalised"]) <= 1 + 1e-9 for r in trace)
    assert (out / "convergence.png").read_bytes().startswith(PNG)
    assert "best on 13 of 18" in report.text()


def test_mutation_study(problem, tmp_path):
    space, device = problem
    report = mutation.run_mutation(space, device, designs=DESIGNS, seconds=SECONDS, out_dir=tmp_path)
    rows = check_files(tmp_path, "mutation", mutation.COLUMNS, mutation.METHODS, report, "paper: 39%")
    for d in DESIGNS:
        assert rows[d, "divisor-only"]["divisors_only"] == "true"
        div, full = float(rows[d, "divisor-only"]["throughput_gops"]), float(rows[d, "hybrid"]["throughput_gops"])
        assert float(rows[d, "divisor-only"]["loss"]) == pytest.approx(1 - div / full, abs=1e-5)
    assert "Table 3" in report.text() and report.values["loss_best"] is not None


def test_latency_model_study_scores_each_pick_with_the_full_model(problem, tmp_path):
    space, device = problem
    report = latency_model.run_latency_model(space, device, designs=DESIGNS, seconds=SECONDS, out_dir=tmp_path)
    rows = check_files(tmp_path, "latency_model", latency_model.COLUMNS, latency_model.METHODS, report, "paper: 9%")
    for d in DESIGNS:
        row = rows[d, "max-model"]
        models = common.DesignModels(space, space.design(d), device)
        params = {k: int(v) for k, v in (kv.split("=") for kv in row["params"].split())}
        score = models.score(params)
        assert float(row["latency_cycles"]) == score["latency_cycles"]  # the full model, not the max model
        assert float(row["max_model_cycles"]) == score["max_model_cycles"] <= score["latency_cycles"]


def test_traffic_pruning_study(problem, tmp_path):
    space, device = problem
    report = traffic_pruning.run_traffic_pruning(space, device, designs=DESIGNS, seconds=SECONDS, out_dir=tmp_path)
    rows = check_files(tmp_path, "traffic_pruning", traffic_pruning.COLUMNS, traffic_pruning.METHODS, report,
                       "paper: 45%")
    for d in DESIGNS:
        pick, pruned = rows[d, "min-traffic"], rows[d, "traffic-pruned"]
        assert float(pruned["offchip_bytes"]) <= float(pick["offchip_bytes"])  # stays within the pruned space
        assert float(pruned["throughput_gops"]) >= float(pick["throughput_gops"])  # seeded with the pick
        assert float(rows[d, "hybrid"]["traffic_vs_min"]) >= 1 - 1e-9
    assert "4.9x (Table 4)" in report.text()


def test_mp_vs_hybrid_study(problem, tmp_path):
    space, device = problem
    report = mp_vs_hybrid.run_mp_vs_hybrid(space, device, designs=DESIGNS, seconds=0.3, seeds=2, out_dir=tmp_path)
    rows = check_files(tmp_path, "mp_vs_hybrid", mp_vs_hybrid.COLUMNS, mp_vs_hybrid.METHODS, report, "1.5x")
    for d in DESIGNS:
        assert float(rows[d, "hybrid"]["latency_vs_hybrid"]) == 1
        for m in mp_vs_hybrid.MP:
            assert rows[d, m]["samples"] in ("0", "1")  # MP alone: one answer, one run whatever the seeds
            if rows[d, m]["latency_cycles"]:
                obj1, obj2 = float(rows[d, m]["obj1"]), float(rows[d, m]["obj2"])
                assert float(rows[d, m]["obj3"]) == pytest.approx(obj1 + obj2, rel=1e-4, abs=1e-5)
    assert "Table 4 on" in report.text() and "8.6x" in report.text()


def test_registry_names_the_cli_studies():
    assert list(STUDIES) == ["methods", "mutation", "latency-model", "traffic-pruning", "mp-vs-hybrid",
                             "model-accuracy", "mm-architectures", "vgg16-conv12", "networks"]


def test_output_folder_is_refused_when_not_empty_unless_forced(tmp_path):
    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(EngineError, match="not empty"):
        common.prepare_output(tmp_path)
    assert common.prepare_output(tmp_path, force=True) == tmp_path
    assert common.prepare_output(tmp_path / "new" / "deep").is_dir()
    with pytest.raises(EngineError, match="not a folder"):
        common.prepare_output(tmp_path / "old.txt", force=True)


def test_budget_and_seeds_are_checked(problem, tmp_path):
    space, device = problem
    for kw, phrase in (({"seconds": None}, "needs a budget"), ({"seconds": 0}, "positive"), ({"seeds": 0}, "seed")):
        with pytest.raises(EngineError, match=phrase):
            mutation.run_mutation(space, device, designs=DESIGNS, out_dir=tmp_path / "x", **{"seconds": 1.0, **kw})


def test_loss_summaries():
    pairs = {"a": (60.0, 100.0), "b": (50.0, 50.0), "c": (0.0, 10.0)}
    s = common.summarise_loss(pairs)
    assert s.best_design == pytest.approx(0.4) and (s.restricted_best, s.full_best) == ("a", "a")
    assert s.geomean == pytest.approx(1 - math.sqrt(0.6)) and (s.designs, s.missing) == (2, 1)
    assert s.worst == pytest.approx(1.0)
    assert common.loss(30, 0) is None


def test_csv_cells(tmp_path):
    path = common.write_csv(tmp_path / "x.csv", ["a", "b", "c", "d"],
                            [{"a": 1.0, "b": {"i_t1": 3, "j_t1": 4}, "c": float("nan"), "d": True}, {"a": 1 / 3}])
    assert path.read_text().splitlines() == ["a,b,c,d", "1,i_t1=3 j_t1=4,,true", "0.333333,,,"]
