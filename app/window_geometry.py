"""A shown window -> the widgets that do not fit: every visible widget must lie within its parent
(unless it is the content of a scroll area, which scrolls, though not past the viewport along a
direction whose scroll bar is off) and within the window, and be at least its minimum size; each label's, button's, check box's and group box's text must fit inside its
widget (app/text_fit.py: measured with the widget's font, a word-wrapped label at its width); inside
each visible plot (pyqtgraph draws its text in a scene the widget check
cannot see) the title and the axis labels must fit the room their layout gives them, and a text
item placed in the data must lie within its view box. `tests/app/test_window_geometry.py` checks
every view at 1366x768 and 1920x1080, and in presentation mode (F5) at 1366x768; `python -m
app.screenshots` refuses to write pictures of a window that does not fit."""
from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea, QScrollArea, QWidget

from app.text_fit import text_misfits

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
    """One line per visible widget that is clipped by its parent or the window, or below its minimum
    size, per text cut inside its widget (app/text_fit.py) and per text clipped inside a plot."""
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
    return problems + scroll_misfits(window) + text_misfits(window) + plot_misfits(window)


def scroll_misfits(window: QWidget) -> list[str]:
    """One line per visible scroll area whose content is cut along a direction it does not scroll
    (its scroll bar always off, e.g. a dock that wraps its text to its width): the content's minimum
    is wider (or taller) than the viewport, so the rest is out of reach."""
    problems = []
    areas = ([window] if isinstance(window, QScrollArea) else []) + window.findChildren(QScrollArea)
    for area in areas:
        content = area.widget()
        if not area.isVisible() or content is None or not content.isVisible():
            continue
        name = f"{type(content).__name__} {content.objectName()!r}".rstrip(" ''")
        view = area.viewport()
        for policy, size, room, along in ((area.horizontalScrollBarPolicy(), content.width(), view.width(), "wide"),
                                          (area.verticalScrollBarPolicy(), content.height(), view.height(), "tall")):
            if policy == Qt.ScrollBarAlwaysOff and size > room:
                problems.append(f"{name}: {size} px {along} in a scroll area of {room} px that does not scroll "
                                f"that way (in {type(area.parentWidget()).__name__})")
    return problems


def plot_misfits(window: QWidget) -> list[str]:
    """One line per text clipped inside a visible plot (`window` or one of its children): a title or
    an axis label outside the plot's visible area or wider than its room, a text item outside its view
    box (pyqtgraph not imported: no plots, nothing to check)."""
    pg = sys.modules.get("pyqtgraph")
    if pg is None:
        return []
    problems = []
    views = ([window] if isinstance(window, pg.GraphicsView) else []) + window.findChildren(pg.GraphicsView)
    for view in views:
        if not view.isVisible():
            continue
        name = f"{type(view).__name__} in {type(view.parentWidget()).__name__}"
        shown = view.mapToScene(view.viewport().rect()).boundingRect().adjusted(-1, -1, 1, 1)
        for item in view.scene().items():
            if not item.isVisible():
                continue
            if isinstance(item, pg.LabelItem) and item.text:
                text, room = _inked(item.item), item.boundingRect().width()
                if text.width() > room + 1 or not shown.contains(text):
                    problems.append(f"{name}: the title {item.text!r} {_rect(text)} is clipped "
                                    f"(the plot shows {_rect(shown)})")
            elif isinstance(item, pg.AxisItem) and item.label.isVisible() and item.label.toPlainText().strip():
                along = item.width() if item.orientation in ("top", "bottom") else item.height()
                text = _inked(item.label)
                if max(text.width(), text.height()) > along + 1 or not shown.contains(text):
                    problems.append(f"{name}: the {item.orientation} axis label {item.label.toPlainText()!r} "
                                    f"{_rect(text)} is clipped (the plot shows {_rect(shown)})")
            elif isinstance(item, pg.TextItem) and item.textItem.toPlainText():
                box, text = item.getViewBox(), _inked(item.textItem)
                if box is not None and not box.sceneBoundingRect().adjusted(-1, -1, 1, 1).contains(text):
                    problems.append(f"{name}: the text {item.textItem.toPlainText()!r} {_rect(text)} outside its "
                                    f"view box {_rect(box.sceneBoundingRect())}")
    return problems


def _inked(text_item):
    """A QGraphicsTextItem's text in scene coordinates, without its document's blank margin."""
    margin = text_item.document().documentMargin()
    return text_item.mapRectToScene(text_item.boundingRect().adjusted(margin, margin, -margin, -margin))


def _rect(rect) -> str:
    return f"({rect.x():.0f}, {rect.y():.0f}, {rect.width():.0f}x{rect.height():.0f})"
