"""QtCodeEditor: a plain-text editor for C with line numbers, syntax highlighting and an error
marker (a red line and a dot in the gutter) on one line."""
from __future__ import annotations

import re

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPainter,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from app.views import theme

KEYWORDS = ["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t"]


def _format(colour: str, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Bold)
    fmt.setFontItalic(italic)
    return fmt


class CHighlighter(QSyntaxHighlighter):
    RULES = (
        (re.compile(r"\b(" + "|".join(KEYWORDS) + r")\b"), _format("#c792ea", bold=True)),
        (re.compile(r"\b\d+(\.\d*)?([eE][-+]?\d+)?[fFuUlL]*\b"), _format("#f78c6c")),
        (re.compile(r"^\s*#\s*\w+.*$"), _format("#89ddff")),
        (re.compile(r'"[^"\n]*"'), _format("#c3e88d")),
        (re.compile(r"//[^\n]*"), _format("#697098", italic=True)),
    )
    COMMENT = _format("#697098", italic=True)

    def highlightBlock(self, text: str) -> None:
        for pattern, fmt in self.RULES:
            for match in pattern.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), fmt)
        self.setCurrentBlockState(0)
        in_comment = self.previousBlockState() == 1
        start = 0 if in_comment else text.find("/*")
        search_from = 0 if in_comment else start + 2
        while start >= 0:
            end = text.find("*/", search_from)
            if end < 0:
                self.setCurrentBlockState(1)
                self.setFormat(start, len(text) - start, self.COMMENT)
                break
            self.setFormat(start, end + 2 - start, self.COMMENT)
            start = text.find("/*", end + 2)
            search_from = start + 2


class _Gutter(QWidget):
    def __init__(self, editor: QtCodeEditor):
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.editor.paint_gutter(event)


class QtCodeEditor(QPlainTextEdit):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.highlighter = CHighlighter(self.document())
        self.error_line: int | None = None
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._scroll_gutter)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 18 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def _scroll_gutter(self, rect, dy) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        r = self.contentsRect()
        self._gutter.setGeometry(QRect(r.left(), r.top(), self.gutter_width(), r.height()))

    def paint_gutter(self, event) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), QColor(theme.BACKGROUND))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            if block.isVisible():
                if number == self.error_line:
                    painter.setBrush(QColor(theme.ERROR))
                    painter.setPen(Qt.NoPen)
                    painter.drawEllipse(4, top + height // 2 - 4, 8, 8)
                painter.setPen(QColor(theme.ERROR if number == self.error_line else theme.MUTED))
                painter.drawText(0, top, self._gutter.width() - 4, height, Qt.AlignRight, str(number))
            top += round(self.blockBoundingRect(block).height())
            block = block.next()

    def set_error_line(self, line: int | None, message: str = "") -> None:
        """Mark one line (1-based) as the error's, or clear the mark with None."""
        self.error_line = line
        selections = []
        if line is not None and 1 <= line <= self.blockCount():
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(120, 30, 40, 160))
            selection.format.setProperty(QTextFormat.FullWidthSelection, True)
            selection.format.setToolTip(message)
            selection.cursor = self.textCursor()
            selection.cursor.setPosition(self.document().findBlockByNumber(line - 1).position())
            selection.cursor.clearSelection()
            selections.append(selection)
        self.setExtraSelections(selections)
        self._gutter.update()
        if selections:
            self.scroll_to_line(line)

    def visible_lines(self) -> range:
        """The 1-based numbers of the lines in view."""
        first = self.firstVisibleBlock().blockNumber() + 1
        rows = max(1, self.viewport().height() // max(1, self.fontMetrics().height()))
        return range(first, first + rows)

    def scroll_to_line(self, line: int) -> None:
        """Bring `line` (1-based) into view, near the middle, unless it is in view already; the text
        cursor stays where the user left it."""
        shown = self.visible_lines()
        if line not in shown:  # without wrapping, the vertical scroll bar counts lines
            self.verticalScrollBar().setValue(max(0, line - 1 - len(shown) // 2))
