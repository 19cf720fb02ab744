"""Design + configuration -> `CsimResult`: the design exported into a temporary folder and
C-simulated there, so that the values the generated modules move through their FIFOs (with the
depths engine/compiler/fifo_depths.py gives, the ones the cycle simulator times) are checked against
the golden loop nest. `systolic simulate --check-values` uses it next to the token timing."""
from __future__ import annotations

import tempfile
from pathlib import Path

from engine.compiler.design_space import Design, DesignSpace
from engine.export.project import export_project
from engine.csim import CsimResult, run_csim
from engine.models.device import Device


def csim_design(space: DesignSpace, design: Design, values: dict[str, int], *, device: Device | None = None,
                seed: int = 0) -> CsimResult:
    """Export (over budget allowed: a check, not a deliverable) and C-simulate; the folder is removed."""
    with tempfile.TemporaryDirectory(prefix="systolic-values-") as folder:
        project = export_project(space, design, values, Path(folder) / "project", device=device,
                                 allow_over_budget=True, floorplan="none")
        return run_csim(project, seed=seed)
