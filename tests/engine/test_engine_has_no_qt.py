"""The engine stays pure Python: nothing under engine/ imports Qt or pyqtgraph."""
from __future__ import annotations

import re
from pathlib import Path

import engine

QT_IMPORT = re.compile(r"^\s*(from|import)\s+(PySide6|PyQt\d?|pyqtgraph|shiboken\d?)\b", re.M)


def test_no_module_under_engine_imports_qt():
    root = Path(engine.__file__).parent
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py") if QT_IMPORT.search(p.read_text())]
    assert offenders == []
