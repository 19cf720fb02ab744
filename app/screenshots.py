"""`python -m app.screenshots [FOLDER] [--readme-picture PATH] [--search-seconds S]`: the pictures
of docs/screenshots and the README's picture (docs/screenshot.png), made again by one command. For
1366x768 and 1920x1080: the window on the bundled MM with the default layout (fresh settings,
nothing remembered), a short search (hybrid, seed 0) whose two best designs are pinned in Compare
and whose best design is then selected, and one PNG per view (`<width>x<height>-<view>.png`: each
tab of the middle; the search panel's other plot tabs are checked too); the 1920x1080 main view (the Topology tab) is also the README's picture
(written to FOLDER/screenshot.png when a FOLDER is given without --readme-picture). A window in
which a widget is clipped or squeezed or a text cut (app/window_geometry.py) is reported and the
command exits 1."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
README_PICTURE = DEFAULT_FOLDER.parent / "screenshot.png"  # the README's picture line names it
README_SIZE, README_VIEW = (1920, 1080), "topology"


def _wait(app, predicate, timeout: float = 600.0) -> None:
    started = time.monotonic()
    while not predicate() and time.monotonic() - started < timeout:
        app.processEvents()
        time.sleep(0.02)


def _settled(app, window, design: str) -> None:
    """Wait until `design` is the selection's, evaluated."""
    _wait(app, lambda: window.selection.design is not None and window.selection.design.id == design
          and not window.selection.busy)


def _pin_best_two(app, window) -> None:
    """The search's two best designs pinned in Compare (as `systolic-studio --screenshot` does),
    then its best selected."""
    best = window.tree_model.best
    ranked = sorted(best, key=lambda d: -best[d].throughput_gops)[:2]
    for design in reversed(ranked):  # the best pinned last, so it stays selected
        window.focus.load(design, best[design].params)
        _settled(app, window, design)
        window.compare_view.pin_selected()


def _misfits_shown(app, window, label: str) -> int:
    """Once what was just shown is laid out: 1 (and what does not fit, on stderr, after `label`) when
    something in the window does not fit, else 0."""
    from app.window_geometry import misfits

    for _ in range(20):
        app.processEvents()
    problems = misfits(window)
    if problems:
        print(f"{label}: " + "; ".join(problems), file=sys.stderr)
    return int(bool(problems))


def _check_search_tabs(app, window, size: str) -> int:
    """The search panel's other tabs (over time, kept, roofline, samples/s) with the search's data:
    1 (and what does not fit, on stderr) when one of them does not fit, else 0."""
    code = 0
    for tabs in (window.search_panel.best_tabs, window.search_panel.result_tabs):
        shown = tabs.currentIndex()
        for k in range(tabs.count()):
            tabs.setCurrentIndex(k)
            code = max(code, _misfits_shown(app, window, f"{size} search panel {tabs.tabText(k)!r}"))
        tabs.setCurrentIndex(shown)
    return code


def shoot(folder: Path, seconds: float, readme_picture: Path | None = None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.views import theme
    from app.window_geometry import SIZES

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
        _pin_best_two(app, window)
        window.focus.select_best()
        if window.tree_model.best_design():
            _settled(app, window, window.tree_model.best_design())
        _wait(app, lambda: window.points._worker is None)
        code = max(code, _check_search_tabs(app, window, f"{width}x{height}"))
        for k in range(window.views.count()):
            window.views.setCurrentIndex(k)
            view = window.views.tabText(k).lower()
            _wait(app, lambda: window.views.currentWidget().isVisible())
            code = max(code, _misfits_shown(app, window, f"{width}x{height} {view}"))
            picture = window.grab()
            paths = [folder / f"{width}x{height}-{view}.png"]
            if readme_picture is not None and ((width, height), view) == (README_SIZE, README_VIEW):
                paths.append(readme_picture)
            for path in paths:
                if not picture.save(str(path)):
                    print(f"error: cannot write {path}", file=sys.stderr)
                    code = 2
                print(path)
        window.search.shutdown()
        window.close()
        window.deleteLater()
        app.processEvents()
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--readme-picture", type=Path, metavar="PATH",
                        help=f"where the README's picture goes (default {README_PICTURE.relative_to(DEFAULT_FOLDER.parents[1])}, "
                             "or FOLDER/screenshot.png when a FOLDER is given)")
    parser.add_argument("--search-seconds", type=float, default=6.0, metavar="S")
    args = parser.parse_args(argv)
    readme = args.readme_picture or (README_PICTURE if args.folder.resolve() == DEFAULT_FOLDER else args.folder / "screenshot.png")
    code = shoot(args.folder, args.search_seconds, readme)
    sys.stdout.flush()
    os._exit(code)  # as app.__main__ does: no interpreter finalization of Qt wrappers


if __name__ == "__main__":
    main()
