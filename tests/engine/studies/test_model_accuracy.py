"""Study model-accuracy on a small MM: one row per configuration with model and simulated cycles,
a PNG, and a summary that puts the mean error next to the paper's 1.99%."""
from __future__ import annotations

import csv

import numpy as np

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.resources import KERNELS
from engine.studies import STUDIES
from engine.studies.model_accuracy import COLUMNS, configurations, run_model_accuracy


def test_study_writes_rows_plot_and_summary(tmp_path):
    space = compile_kernel(KERNELS / "mm.c", defines=["I=8", "J=8", "K=8"])
    out = tmp_path / "acc"
    report = run_model_accuracy(space, load_device("u250"), designs=["i-j__i-j.k", "k__i-k.j"], samples=2,
                                out_dir=out)
    with open(out / "model_accuracy.csv", newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == COLUMNS
    assert sorted(r["design"] for r in rows) == ["i-j__i-j.k"] * 2 + ["k__i-k.j"] * 2
    for r in rows:
        assert r["status"] == "ok"
        model, simulated = float(r["model_cycles"]), float(r["simulated_cycles"])
        assert abs(float(r["error"]) - (model - simulated) / simulated) < 1e-4
    assert (out / "model_accuracy.png").read_bytes().startswith(b"\x89PNG")
    summary = (out / "summary.txt").read_text()
    assert "1.99%" in summary and "mean absolute latency error" in summary
    assert abs(report.values["mean_error"] - np.mean([abs(float(r["error"])) for r in rows])) < 1e-5
    assert "model-accuracy" in STUDIES


def test_configurations_include_a_non_divisor_factor():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=8", "J=8", "K=8"])
    design = space.design("i-j__i-j.k")
    configs = configurations(design, 3, np.random.default_rng(0))
    assert len(configs) == 3
    assert any(8 % c[f"{l}_t1"] for l in "ijk" for c in configs[:1])
