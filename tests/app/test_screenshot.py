"""`systolic-studio --screenshot PATH --search-seconds S` runs a short search on the default kernel,
selects the best design and writes a PNG of the whole window (and of its Bottleneck and Compare
views), then exits 0; bad arguments exit 2.
Run as a command, the way the README makes the picture."""
from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtGui import QImage

from app.__main__ import SCREEN_SIZE
from engine.search.store import RunStore


def _studio(*args, env):
    return subprocess.run([sys.executable, "-m", "app", *args], check=False, capture_output=True, text=True,
                          env=env, timeout=400)


def test_screenshot_writes_the_window_after_a_short_search(tmp_path, run_database):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = tmp_path / "shot.png"
    done = _studio("--screenshot", str(path), "--search-seconds", "1", "--method", "random", env=env)
    assert done.returncode == 0, done.stderr
    image = QImage(str(path))
    assert (image.width(), image.height()) == SCREEN_SIZE
    assert len({image.pixel(x, y) for x in range(0, image.width(), 40) for y in range(0, image.height(), 40)}) > 20
    for view in ("bottleneck", "compare"):
        sibling = QImage(str(tmp_path / f"shot-{view}.png"))
        assert (sibling.width(), sibling.height()) == SCREEN_SIZE
    with RunStore(run_database) as store:
        runs = store.list_runs()
    assert [r.method for r in runs] == ["random"] and runs[0].status == "finished"


def test_bad_arguments_exit_2(tmp_path):
    done = _studio("--search-seconds", "soon", env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2 and "invalid float value" in done.stderr


def test_the_readme_shows_the_picture_app_screenshots_writes():
    from pathlib import Path

    from app.screenshots import README_PICTURE, README_SIZE

    root = Path(__file__).resolve().parents[2]
    name = README_PICTURE.relative_to(root).as_posix()
    assert f"]({name})" in (root / "README.md").read_text(encoding="utf-8")
    image = QImage(str(README_PICTURE))
    assert (image.width(), image.height()) == README_SIZE
