"""Shared fixtures: bundled kernel paths and a writer for kernels made up inside a test. Every test
(and every program a test starts) reads and writes a run database and a cache folder (built models,
timed csim builds) in the session's temporary folder, never the user's: a test run leaves nothing in
~/.cache or ~/.local/share, and starts from an empty cache as a fresh clone does."""
from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# set at import, before any test or fixture runs; tests that need their own folder set it again
_SESSION_FOLDER = Path(tempfile.mkdtemp(prefix="systolic-tests-"))
os.environ["SYSTOLIC_STUDIO_DB"] = str(_SESSION_FOLDER / "runs.sqlite")
os.environ["SYSTOLIC_STUDIO_CACHE"] = str(_SESSION_FOLDER / "cache")

from engine.resources import KERNELS  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _session_folder():
    """The session's run database and cache folder, removed at the end."""
    yield _SESSION_FOLDER
    shutil.rmtree(_SESSION_FOLDER, ignore_errors=True)


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
