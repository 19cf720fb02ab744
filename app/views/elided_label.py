"""A one-line QLabel that shows as much of its text as its width allows, eliding the end (put what
matters first), with the whole text as its tooltip; `text()` is the whole text."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.setToolTip(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self.setToolTip(text)

    def shown_text(self) -> str:
        """What the label shows at its present width."""
        return self.fontMetrics().elidedText(self.text(), Qt.ElideRight, self.contentsRect().width())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(0, super().minimumSizeHint().height())

    def paintEvent(self, event) -> None:  # noqa: N802
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment() | Qt.AlignVCenter),
                                  self.palette(), self.isEnabled(), self.shown_text(), QPalette.WindowText)
