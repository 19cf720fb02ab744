"""A shown widget -> the texts cut inside it: a label's text (plain or rich, one line or word-wrapped
at the label's width) measured with the label's font must fit the label's contents rect (less its
margin and indent); a push button's, check box's or radio button's text (with its icon) must fit
the room the style gives it (its padding and indicator taken off); a group box's title must lie
within the box. An ElidedLabel (app/views/elided_label.py) elides by design and is not checked.
app/window_geometry.py adds these lines to the widgets that do not fit; the texts are measured here
rather than taken from each widget's size hint, which a subclass may change."""
from __future__ import annotations

from PySide6 import QtGui
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QGroupBox,
    QLabel,
    QPushButton,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QStyleOptionGroupBox,
    QWidget,
)

from app.views.elided_label import ElidedLabel

_SLACK = 1  # pixels: rounding of fractional font advances
_UNBOUNDED = 100_000


def text_misfits(window: QWidget) -> list[str]:
    """One line per visible label, button, check box, radio button or group box (`window` or one of
    its children, other windows left out) whose text does not fit inside it."""
    problems = []
    for widget in [window, *window.findChildren(QWidget)]:
        if not widget.isVisible() or (widget.isWindow() and widget is not window):
            continue
        if isinstance(widget, QLabel) and not isinstance(widget, ElidedLabel):
            problem = _label(widget)
        elif isinstance(widget, (QPushButton, QCheckBox, QRadioButton)):
            problem = _button(widget)
        elif isinstance(widget, QGroupBox):
            problem = _group_box(widget)
        else:
            continue
        if problem:
            problems.append(f"{_name(widget)}: {problem}")
    return problems


def label_room(label: QLabel) -> QRect:
    """Where a label lays out its text: its contents rect less its margin and its indent (QLabel's own
    rule: without an indent set, a framed label indents by the width of an 'x')."""
    margin = label.margin()
    room = label.contentsRect().adjusted(margin, margin, -margin, -margin)
    indent = label.indent()
    if indent < 0 and label.frameWidth():
        indent = label.fontMetrics().horizontalAdvance("x") - 2 * margin
    if indent > 0:
        align = label.alignment()
        if align & (Qt.AlignLeft | Qt.AlignRight):
            room.setWidth(room.width() - indent)
        if align & (Qt.AlignTop | Qt.AlignBottom):
            room.setHeight(room.height() - indent)
    return room


def label_text_size(label: QLabel, width: int | None) -> tuple[int, int]:
    """The (width, height) the label's text takes in its font, wrapped at `width` (None: on the lines
    it is written on)."""
    text = label.text()
    rich = label.textFormat() == Qt.RichText or (label.textFormat() == Qt.AutoText and QtGui.Qt.mightBeRichText(text))
    if rich:
        document = QTextDocument()
        document.setDocumentMargin(0)
        document.setDefaultFont(label.font())
        document.setHtml(text)
        document.setTextWidth(-1 if width is None else max(width, 0))
        size = document.size()
        return round(size.width()), round(size.height())
    flags = int(Qt.AlignLeft | Qt.AlignTop | Qt.TextExpandTabs) | (int(Qt.TextShowMnemonic) if label.buddy() else 0)
    if width is not None:
        flags |= int(Qt.TextWordWrap)
    bounds = label.fontMetrics().boundingRect(QRect(0, 0, _UNBOUNDED if width is None else max(width, 0),
                                                    _UNBOUNDED), flags, text)
    return bounds.width(), bounds.height()


def _label(label: QLabel) -> str:
    if not label.text() or label.pixmap() is not None and not label.pixmap().isNull():
        return ""
    room = label_room(label)
    width, height = label_text_size(label, room.width() if label.wordWrap() else None)
    if width <= room.width() + _SLACK and height <= room.height() + _SLACK:
        return ""
    return (f"the text {_excerpt(label.text())} needs {width}x{height}"
            f"{' wrapped' if label.wordWrap() else ''}, it has {room.width()}x{room.height()}")


def _button(button: QAbstractButton) -> str:
    if not button.text():
        return ""
    option = QStyleOptionButton()
    option.initFrom(button)
    option.text = button.text()
    option.icon = button.icon()
    option.iconSize = button.iconSize()
    element = (QStyle.SE_PushButtonContents if isinstance(button, QPushButton) else
               QStyle.SE_CheckBoxContents if isinstance(button, QCheckBox) else QStyle.SE_RadioButtonContents)
    room = button.style().subElementRect(element, option, button)
    text = button.fontMetrics().size(int(Qt.TextShowMnemonic), button.text())
    width = text.width() + (button.iconSize().width() + 4 if not button.icon().isNull() else 0)
    if width <= room.width() + _SLACK and text.height() <= room.height() + _SLACK:
        return ""
    return f"the text {_excerpt(button.text())} needs {width}x{text.height()}, it has {room.width()}x{room.height()}"


def _group_box(box: QGroupBox) -> str:
    if not box.title():
        return ""
    option = QStyleOptionGroupBox()
    option.initFrom(box)
    option.text = box.title()
    option.textAlignment = box.alignment()
    option.subControls = QStyle.SC_GroupBoxFrame | QStyle.SC_GroupBoxLabel | (
        QStyle.SC_GroupBoxCheckBox if box.isCheckable() else QStyle.SC_None)
    title = box.style().subControlRect(QStyle.CC_GroupBox, option, QStyle.SC_GroupBoxLabel, box)
    if title.isEmpty() or box.rect().adjusted(-_SLACK, -_SLACK, _SLACK, _SLACK).contains(title):
        return ""
    return f"the title {_excerpt(box.title())} at {title.getRect()} runs past the box {box.rect().getRect()}"


def _name(widget: QWidget) -> str:
    name = type(widget).__name__ + (f" {widget.objectName()!r}" if widget.objectName() else "")
    parent = widget.parentWidget()
    while parent is not None and type(parent).__module__.startswith("PySide6"):
        parent = parent.parentWidget()  # the nearest widget of ours says where it is
    return f"{name} in {type(parent).__name__}" if parent is not None else name


def _excerpt(text: str, length: int = 48) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= length else flat[:length - 1] + "…")
