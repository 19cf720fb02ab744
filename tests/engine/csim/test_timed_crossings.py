"""The timed C simulation charges the pipeline of every SLR-crossing FIFO an export's floorplan adds
(design.json `floorplan.crossing_fifos`, engine/floorplan/pipeline.py): the same project replayed with
those latencies takes longer than with them set to 0, by no more than their sum (one word's path
through the pipelines of a small MM crosses each of them at most once)."""
from __future__ import annotations

import json

from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.export import export_project
from engine.resources import KERNELS


def test_crossing_latency_delays_the_timed_replay(tmp_path, timed_cache):
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "16", "J": "16", "K": "16"})
    project = export_project(space, space.design("i-j__i-j.k"),
                             dict(i_t1=8, j_t1=8, k_t1=8, i_t2=4, j_t2=4, k_t2=4), tmp_path / "mm", floorplan="auto")
    design = json.loads((project / "design.json").read_text())
    crossing = design["floorplan"]["crossing_fifos"]
    assert crossing and all(c["latency"] > 0 for c in crossing)
    charged = run_timed_csim(project, cache=timed_cache)
    total = sum(c["latency"] for c in crossing)
    for c in crossing:
        c["latency"] = 0
    (project / "design.json").write_text(json.dumps(design))
    uncharged = run_timed_csim(project, cache=timed_cache)
    assert charged.passed and uncharged.passed
    assert uncharged.cycles < charged.cycles <= uncharged.cycles + total
