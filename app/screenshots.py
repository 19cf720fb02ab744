"""`python -m app.screenshots [FOLDER] [--search-seconds S]`: the pictures of docs/screenshots, made
again by one command. For 1366x768 and 1920x1080: the window on the bundled MM with the default
layout (fresh settings, nothing remembered), a short search (hybrid, seed 0) whose best design is
then selected, and one PNG per view (`<width>x<height>-<view>.png`: each tab of the middle). A
window in which a widget is clipped or squeezed (app/window_geometry.py) is reported and the
command exits 1."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "docs" / "screenshots"


def _wait(app, predicate, timeout: float = 600.0) -> None:
    started = time.monotonic()
    while not predicate() and time.monotonic() - started < timeout:
        app.processEvents()
        time.sleep(0.02)


def shoot(folder: Path, seconds: float) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.views import theme
    from app.window_geometry import SIZES, misfits

    app = QApplication.instance() or QApplication([sys.argv[0]])
    theme.apply(app, "dark")
    folder.mkdir(parents=True, exist_ok=True)
    code = 0
    for width, height in SIZES:
        settings = QSettings(str(Path(tempfile.mkdtemp(prefix="systolic-shots-")) / "settings.ini"),
                             QSettings.IniFormat)
        window = MainWindow(settings=settings)
        window.resize(width, height)
        window.show()
        _wait(app, lambda: window.panels_built and bool(window.tree_model.design_ids()) and
              window.search_panel.start_button.isEnabled())
        panel = window.search_panel
        panel.method.setCurrentText("hybrid")
        panel.set_budget(seconds, None, 0)
        panel.scope.setCurrentIndex(0)
        panel.start_button.click()
        _wait(app, lambda: window.search.running)
        _wait(app, lambda: not window.search.running)
        window.focus.select_best()
        _wait(app, lambda: not window.selection.busy and window.points._worker is None)
        for k in range(window.views.count()):
            window.views.setCurrentIndex(k)
            view = window.views.tabText(k).lower()
            _wait(app, lambda: window.views.currentWidget().isVisible())
            for _ in range(20):
                app.processEvents()
            problems = misfits(window)
            if problems:
                code = 1
                print(f"{width}x{height} {view}: " + "; ".join(problems), file=sys.stderr)
            path = folder / f"{width}x{height}-{view}.png"
            window.grab().save(str(path))
            print(path)
        window.search.shutdown()
        window.close()
        window.deleteLater()
        app.processEvents()
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--search-seconds", type=float, default=6.0, metavar="S")
    args = parser.parse_args(argv)
    code = shoot(args.folder, args.search_seconds)
    sys.stdout.flush()
    os._exit(code)  # as app.__main__ does: no interpreter finalization of Qt wrappers


if __name__ == "__main__":
    main()
