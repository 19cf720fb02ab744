"""A shown window -> the widgets that do not fit: every visible widget must lie within its parent
(unless it is the content of a scroll area, which scrolls) and within the window, and be at least
its minimum size. `tests/app/test_window_geometry.py` checks every view at 1366x768 and 1920x1080;
`python -m app.screenshots` refuses to write pictures of a window that does not fit."""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractScrollArea, QWidget

SIZES = ((1366, 768), (1920, 1080))


def _scrolled(widget: QWidget, window: QWidget) -> bool:
    """Inside a scroll area's viewport (its content may extend past what is shown)."""
    ancestor = widget.parentWidget()
    while ancestor is not None and ancestor is not window:
        area = ancestor.parentWidget()
        if isinstance(area, QAbstractScrollArea) and ancestor is area.viewport():
            return True
        ancestor = area
    return False


def misfits(window: QWidget) -> list[str]:
    """One line per visible widget that is clipped by its parent or the window, or below its minimum size."""
    problems = []
    frame = window.rect()
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.isWindow() or widget.parentWidget() is None:
            continue
        name = f"{type(widget).__name__} {widget.objectName()!r}".rstrip(" ''")
        minimum = widget.minimumSize()
        if widget.width() < minimum.width() or widget.height() < minimum.height():
            problems.append(f"{name}: {widget.width()}x{widget.height()} below its minimum "
                            f"{minimum.width()}x{minimum.height()}")
        if _scrolled(widget, window):
            continue
        parent = widget.parentWidget()
        if not parent.rect().contains(widget.geometry()):
            problems.append(f"{name}: {widget.geometry().getRect()} outside its parent {type(parent).__name__} "
                            f"{parent.rect().getRect()}")
        at = widget.mapTo(window, widget.rect().topLeft())
        if not frame.contains(widget.rect().translated(at)):
            problems.append(f"{name}: {widget.rect().translated(at).getRect()} outside the window {frame.getRect()}")
    return problems
