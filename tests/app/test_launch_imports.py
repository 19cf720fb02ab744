"""Launch (issue 17: the window usable under 2 s, imports deferred): making and showing the window
imports none of the engine's heavy libraries (sympy, islpy, numba, networkx, pyomo, pycparser) nor
the exporter; the compilation and the warm-ups import them after the first paint, off the GUI thread.
Checked in a new interpreter, as a user's launch runs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("sympy", "islpy", "numba", "networkx", "pyomo", "pycparser", "engine.export", "engine.compiler.design_space")

PROGRAM = f"""
import os, sys
from PySide6.QtWidgets import QApplication
from app.__main__ import MainWindow
app = QApplication([])
window = MainWindow()
window.show()
print(" ".join(m for m in {HEAVY!r} if m in sys.modules), flush=True)
os._exit(0)
"""


def test_showing_the_window_imports_no_heavy_library(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root),
           "SYSTOLIC_STUDIO_DB": str(tmp_path / "runs.sqlite")}
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=root, env=env,
                         check=True)
    assert out.stdout.strip() == "", f"imported before the first paint: {out.stdout.strip()}"
