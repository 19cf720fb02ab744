"""The architecture studies (mm-architectures, vgg16-conv12, networks) on small budgets: each writes its
CSV, PNG and summary with the paper's numbers beside ours. Each starts a Dask cluster: slow."""
from __future__ import annotations

import csv

import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.resources import KERNELS
from engine.studies import STUDIES
from engine.studies.mm_architectures import run_mm_architectures
from engine.studies.networks import run_networks
from engine.studies.vgg16_conv12 import run_vgg16_conv12

pytestmark = pytest.mark.slow  # each study starts a local Dask cluster and runs its searches: 20-60 s each


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_studies_are_registered():
    assert {"mm-architectures", "vgg16-conv12", "networks"} <= set(STUDIES)


def test_mm_architectures_compares_the_three_orderings_of_a_dataflow(tmp_path):
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    designs = [d.id for d in space.designs if d.space_loops == ("i",)]
    assert len(designs) == 3
    report = run_mm_architectures(space, load_device("u250"), designs=designs, seconds=None, samples=300,
                                  out_dir=tmp_path, workers=1)
    table = rows(tmp_path / "mm-architectures.csv")
    assert {r["ordering"] for r in table} == {"<[i,j],k>", "<[j,k],i>", "<[i,k],j>"}
    on_chip = next(r for r in table if r["ordering"] == "<[i,j],k>")
    assert float(on_chip["latency_vs_output_on_chip"]) == 1.0
    assert all(r["bram_share"] and r["bottleneck"] for r in table)
    text = report.text()
    assert "best design" in text and "paper:" in text
    assert (tmp_path / "mm-architectures.png").stat().st_size > 0 and (tmp_path / "summary.txt").exists()


def test_vgg16_conv12_details_h_i_and_o_h(tmp_path):
    space = compile_kernel(KERNELS / "mm.c")  # the study reads its own kernel (cnn.c) and layers
    designs = ["h-i__o-h-w.i-p-q", "o-h__o-h-w.i-p-q"]
    report = run_vgg16_conv12(space, load_device("u250"), designs=designs, seconds=None, samples=200,
                              out_dir=tmp_path, workers=2)
    table7 = rows(tmp_path / "vgg16-conv12-table7.csv")
    assert [(r["layer"], r["dataflow"]) for r in table7] == [
        ("conv1-1", "[h,i]"), ("conv1-1", "[o,h]"), ("conv1-2", "[h,i]"), ("conv1-2", "[o,h]")]
    assert all(0 < float(r["dsp_efficiency"]) <= 1 and float(r["latency_vs_ideal"]) >= 1 for r in table7)
    assert "conv1-1: best design" in report.text()
    assert len(rows(tmp_path / "vgg16-conv12.csv")) == 2


def test_networks_on_a_small_workload(tmp_path):
    workload = tmp_path / "small.json"
    workload.write_text('''{"name": "small", "workloads": [
      {"name": "a", "params": {"i": 3, "o": 8, "r": 8, "c": 8, "p": 3, "q": 3}},
      {"name": "b", "params": {"i": 8, "o": 16, "r": 4, "c": 4, "p": 3, "q": 3}},
      {"name": "b2", "params": {"i": 8, "o": 16, "r": 4, "c": 4, "p": 3, "q": 3}}]}''')
    report = run_networks(compile_kernel(KERNELS / "mm.c"), load_device("u250"), seconds=None, samples=100,
                          out_dir=tmp_path / "out", networks=(str(workload),), workers=2,
                          designs=["o-h__o-h-w.i-p-q", "h-i__o-h-w.i-p-q", "o__o-h-w.i-p-q"])
    out = tmp_path / "out"
    shares = rows(out / "networks.csv")
    assert {r["dataflow"] for r in shares} == {"[o,h]", "[h,i]", "[o]"}
    assert all(0 <= float(r["geomean_share"]) <= 1 for r in shares)
    assert len(rows(out / "networks-small-fig13.csv")) == 3 * 3
    assert (out / "small" / "single_array.csv").exists()
    assert "small: best single array" in report.text()
