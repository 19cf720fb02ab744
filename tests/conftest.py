"""Shared fixtures: bundled kernel paths and a writer for kernels made up inside a test. Every test
(and every program a test starts) reads and writes a run database and a cache folder (built models,
timed csim builds) in the session's temporary folder, never the user's: a test run leaves nothing in
~/.cache or ~/.local/share, and starts from an empty cache as a fresh clone does. Under pytest-xdist
(pyproject's addopts: `--numprocesses=auto --dist=loadfile`) each worker process imports this file,
so each has its own session folder; `-p no:xdist` runs without workers (the addopts' worker options are then
accepted and ignored here)."""
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


def pytest_addoption(parser, pluginmanager):
    """With xdist blocked (`-p no:xdist`) or not installed, pyproject's worker options would be
    unrecognised arguments: take them and run in this process (a conftest may not add `-n`, hence
    the long spelling in addopts)."""
    if not pluginmanager.has_plugin("xdist"):
        parser.addoption("--numprocesses", dest="numprocesses", default=None,
                         help="ignored: pytest-xdist is not loaded")
        parser.addoption("--dist", dest="dist", default="no", help="ignored: pytest-xdist is not loaded")


# Under xdist (`--dist=loadfile`, pyproject's addopts) a file runs whole on one worker, so its module
# fixtures are built once. Files that share session-wide work (a session fixture or a module-level
# memo) go to one worker as one unit, which does that work once:
SAME_WORKER = {
    "tests/engine/csim/test_csim_designs.py": "C simulations (csim conftest: simulated)",
    "tests/engine/csim/test_csim_reload.py": "C simulations (csim conftest: simulated)",
    "tests/engine/search/test_certify.py": "certifier models (certify_spaces.py)",
    "tests/engine/search/test_certify_forms.py": "certifier models (certify_spaces.py)",
    "tests/engine/search/test_certify_minlp.py": "certifier models (certify_spaces.py)",
}
# The longest units start first, so that the workers end together rather than one running a long file
# while the other is idle; the others follow in collection order. Longest first as measured in a whole
# run (--durations, summed per file; main at 342129d, load ~6, with this branch's cuts applied).
START_FIRST = (
    "tests/engine/csim/test_csim_designs.py",  # ~200 s with test_csim_reload (one unit)
    "tests/app/test_window_look.py",  # ~150 s
    "tests/engine/csim/test_fidelity.py",  # ~140 s
    "tests/engine/search/test_certify.py",  # ~130 s with the two other certifier files (one unit)
    "tests/app/test_search.py",  # ~110 s
    "tests/app/test_export_dialog.py",  # ~80 s
    "tests/engine/compiler/test_autosa_commands.py",  # ~80 s
    "tests/app/test_window_features.py",  # ~75 s
    "tests/app/test_screenshot.py",  # ~70 s
    "tests/app/test_network_view.py",  # ~60 s
    "tests/engine/compiler/test_expansion.py",  # ~55 s
)


def _unit(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return SAME_WORKER.get(path, path)


def pytest_collection_modifyitems(config, items):
    """The run order: START_FIRST's files, then the rest as collected (each worker collects the same
    order, which the scheduler below hands out unit by unit)."""
    first = {path: rank for rank, path in enumerate(START_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::", 1)[0], len(first)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist=loadfile` with SAME_WORKER's units, handed out in collection order (xdist's default
    order, most tests first, would leave few-but-long files to the end)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False
    return FileScheduling(config, log)


def pytest_unconfigure(config):
    """The session's run database and cache folder, removed at the end (in every process: the xdist
    controller and a worker given no file run no test and no fixture)."""
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
