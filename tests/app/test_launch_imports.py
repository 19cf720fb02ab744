"""Launch (issue 17: the window usable under 2 s, imports deferred): making and showing the window
imports none of the engine's heavy libraries (sympy, islpy, numba, networkx, pyomo, pycparser) nor
the exporter, nor pyqtgraph and numpy (the plots are built after the first paint); the compilation
and the warm-ups import them after the first paint, off the GUI thread. Checked in a new
interpreter, as a user's launch runs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("sympy", "islpy", "numba", "networkx", "pyomo", "pycparser", "engine.export", "engine.compiler.design_space",
         "pyqtgraph", "numpy")

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

# after the first paint: the deferred parts get built by the event loop alone, with the theme's colours
AFTER_PAINT = """
import os, sys, time
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication
from app.__main__ import MainWindow
from app.views import theme
app = QApplication([])
theme.apply(app, "light")
window = MainWindow(background=False)  # no compile or selection process: only the window is looked at
window.show()
started = time.monotonic()
while not window.panels_built and time.monotonic() - started < 120:
    app.processEvents(QEventLoop.AllEvents, 50)
import pyqtgraph as pg
print(window.panels_built, pg.getConfigOption("background") == theme.LIGHT["BACKGROUND"], flush=True)
os._exit(0)
"""


def _run(program: str, tmp_path) -> str:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root),
           "SYSTOLIC_STUDIO_DB": str(tmp_path / "runs.sqlite"), "SYSTOLIC_STUDIO_CACHE": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=root, env=env,
                          check=True).stdout.strip()


def test_showing_the_window_imports_no_heavy_library(tmp_path):
    out = _run(PROGRAM, tmp_path)
    assert out == "", f"imported before the first paint: {out}"


def test_the_parts_deferred_past_the_first_paint_get_built_with_the_themes_plot_colours(tmp_path):
    assert _run(AFTER_PAINT, tmp_path) == "True True"
