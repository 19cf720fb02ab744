"""`systolic-studio --screenshot PATH --search-seconds S` runs a short search on the kernel given,
selects the best design and writes a PNG of the whole window (and of its Bottleneck and Compare
views), then exits 0; bad arguments exit 2; the README's picture is the one `python -m app.screenshots`
writes. The command runs as a command (a new process), the way the README makes its pictures, on a
small kernel of three designs: the bundled MM's 27 models, built from an empty cache, took most of
this file's time (the bundled MM's picture itself: bench/bench_gui.py --screenshot)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from app.__main__ import SCREEN_SIZE, main
from engine.search.store import RunStore

ROOT = Path(__file__).resolve().parents[2]


def _studio(*args, env):
    return subprocess.run([sys.executable, "-m", "app", *args], check=False, capture_output=True, text=True,
                          env=env, timeout=400)


@pytest.fixture
def convolution_1d(write_kernel):
    """A 1-D convolution of 16 outputs and 4 taps: three designs, models built in seconds."""
    return write_kernel("""\
        for (int i = 0; i < 16; i++)
          for (int k = 0; k < 4; k++)
            y[i] += w[k] * x[i + k];
        """, prelude="float w[4], x[19], y[16];\n", name="conv1d.c")


def test_screenshot_writes_the_window_after_a_short_search(tmp_path, run_database, convolution_1d):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = tmp_path / "shot.png"
    done = _studio(str(convolution_1d), "--screenshot", str(path), "--search-seconds", "1", "--method", "random",
                   env=env)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("search: "))
    assert " of 3 designs searched" in line and "none" not in line, line
    image = QImage(str(path))
    assert (image.width(), image.height()) == SCREEN_SIZE
    assert len({image.pixel(x, y) for x in range(0, image.width(), 40) for y in range(0, image.height(), 40)}) > 20
    for view in ("bottleneck", "compare"):
        sibling = QImage(str(tmp_path / f"shot-{view}.png"))
        assert (sibling.width(), sibling.height()) == SCREEN_SIZE
    with RunStore(run_database) as store:
        runs = store.list_runs()
    assert [r.method for r in runs] == ["random"] and runs[0].status == "finished"


def test_bad_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as exited:  # before any window: the command's own argument check
        main(["--search-seconds", "soon"])
    assert exited.value.code == 2 and "invalid float value" in capsys.readouterr().err


def test_the_readme_shows_the_picture_app_screenshots_writes():
    from app.screenshots import README_PICTURE, README_SIZE

    name = README_PICTURE.relative_to(ROOT).as_posix()
    assert f"]({name})" in (ROOT / "README.md").read_text(encoding="utf-8")
    image = QImage(str(README_PICTURE))
    assert (image.width(), image.height()) == README_SIZE
