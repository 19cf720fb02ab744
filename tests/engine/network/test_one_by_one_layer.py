"""A 1x1 layer (P = Q = 1) runs the network's designs remade from a 3x3 envelope, whose loop order keeps
p and q after the reduction loop i (<[o,h,w],[i,p,q]>). Loops of one iteration change no output block,
so the output stays on chip across i tiles: no sequential passes, no re-read of fo. The exported code is
the referee: it C-simulates correctly and the model and the simulator are within 5% of its timed run
(before, every i tile was a pass re-reading fo: about 3.4x slower, and the SIMD-on-i variant computed
wrong values)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.compiler.architecture.passes import architecture_passes
from engine.compiler.architecture.build import build_architecture
from engine.csim.timed import run_timed_csim
from engine.export import export_project
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.network.designs import envelope_space, layer_space
from engine.resources import KERNELS
from engine.sim.simulate import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_fidelity import project_descriptor  # noqa: E402

KERNEL = KERNELS / "cnn.c"
LAYER = {"O": 8, "I": 16, "H": 8, "W": 8, "P": 1, "Q": 1}
CONFIG = {"o_t1": 8, "h_t1": 4, "w_t1": 8, "i_t1": 4, "p_t1": 1, "q_t1": 1, "o_t2": 2, "h_t2": 1, "w_t2": 2,
          "i_t2": 2}


@pytest.fixture(scope="module")
def space():
    envelope = envelope_space(KERNEL, {**LAYER, "P": 3, "Q": 3})
    return layer_space(KERNEL, envelope, LAYER)


def test_the_output_of_a_1x1_layer_stays_on_chip_across_i_tiles(space):
    for design in space.designs:
        if design.permutation.order[-3:] != ("i", "p", "q"):
            continue
        arch = build_architecture(space, design)
        fo = next(g for g in arch.groups if g.kind == "acc")
        assert {"i", "p", "q"} <= set(fo.invariant), design.id
        assert not architecture_passes(design, arch.groups).loops, design.id
        assert fo.reloads == 0, design.id


@pytest.mark.parametrize("design_id", [pytest.param("o-h__o-h-w.i-p-q", marks=pytest.mark.slow), "o-i__o-h-w.i-p-q__simd-i"])
def test_a_1x1_layer_exports_what_the_model_and_the_simulator_say(space, design_id, tmp_path):
    design = space.design(design_id)
    params = {k: v for k, v in CONFIG.items() if k in {p.name for p in design.params if p.tunable}}
    model = PerformanceModel(space, design, load_device())
    report = evaluate_configuration(model, params)
    project = export_project(space, design, params, tmp_path / "project", force=True, allow_over_budget=True,
                             floorplan="none")
    timed = run_timed_csim(project)
    assert timed.passed, timed.csim
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    simulated = simulate(project_descriptor(project), values)
    assert report["latency_cycles"] == pytest.approx(timed.cycles, rel=0.05)
    assert simulated.cycles == pytest.approx(timed.cycles, rel=0.05)
    # one pass: the tile loops that change fo run once each, so the run is about one pass's length
    assert report["latency_cycles"] < 1.5 * (report["main"] + report["prologue"] + report["epilogue"])
