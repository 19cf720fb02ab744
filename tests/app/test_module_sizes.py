"""No module of the window is past the house limit of ~600 lines (the conventions' "no module past
~600 lines"): a module that grows past it is split along a seam before it lands."""
from __future__ import annotations

from pathlib import Path

import app

LIMIT = 600


def test_no_app_module_is_past_the_line_limit():
    root = Path(app.__file__).parent
    sizes = {str(p.relative_to(root)): len(p.read_text().splitlines()) for p in root.rglob("*.py")}
    assert len(sizes) > 20  # the package was found
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
