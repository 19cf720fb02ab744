"""Shared fixtures: bundled kernel paths and a writer for kernels made up inside a test."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from engine.resources import KERNELS  # noqa: E402


@pytest.fixture
def bundled():
    return lambda name: KERNELS / f"{name}.c"


@pytest.fixture
def write_kernel(tmp_path):
    """write_kernel(body, name="k.c", prelude=...) -> path of a C file wrapping `body` in a scop."""

    def write(body: str, *, prelude: str = "", name: str = "k.c", raw: str | None = None) -> Path:
        path = tmp_path / name
        if raw is None:
            raw = (textwrap.dedent(prelude) + "void kernel(void) {\n#pragma scop\n"
                   + textwrap.dedent(body) + "#pragma endscop\n}\n")
        path.write_text(raw)
        return path

    return write
