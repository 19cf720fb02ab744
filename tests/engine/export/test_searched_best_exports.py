"""`systolic export` builds what `systolic search` returns: every MM 1024^3 design's searched best
(bench/best_known.json, tuned under the same `fits` the search uses) is exported without
--allow-over-budget, and the export's budget check is the model's `fits`."""
import json
from pathlib import Path

import pytest

from engine.compiler.design_space import compile_kernel
from engine.export import export_project
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

BEST_KNOWN = json.loads((Path(__file__).parents[3] / "bench" / "best_known.json").read_text())


@pytest.fixture(scope="module")
def space():
    sizes = BEST_KNOWN["problem"]["sizes"]
    return compile_kernel(KERNELS / BEST_KNOWN["problem"]["kernel"], defines=[f"{k}={v}" for k, v in sizes.items()])


@pytest.mark.parametrize("design", sorted(BEST_KNOWN["designs"]))
def test_the_searched_best_fits_and_exports(space, design, tmp_path):
    entry = BEST_KNOWN["designs"][design]
    model = shared_model(space, space.design(design), load_device(BEST_KNOWN["problem"]["device"]))
    params = {k: v for k, v in entry["params"].items() if k in model.tunable}
    report = evaluate_configuration(model, params)
    assert report["fits"], report["violations"]
    # no over-budget flag
    project = export_project(space, space.design(design), params, tmp_path / design, floorplan="none")
    assert json.loads((project / "design.json").read_text())["over_budget"] is False
