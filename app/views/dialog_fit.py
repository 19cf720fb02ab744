"""fit_height(dialog): a dialog whose layout wraps text (word-wrapped labels) -> one that is always at
least as tall as that text needs at its width. Qt gives a window whose layout has a height for its
width no minimum height of its own (QLayout's default constraint sets 0), so a message shown after the
dialog opened, or wrapped onto another line by larger fonts (presentation mode), was cut to one line
and the buttons under it squeezed. An event filter sets the dialog's minimum size whenever its layout
or its width changes: the layout's minimum width, and its minimum height for the dialog's width; a dialog
shorter than that grows."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QDialog


class _KeepTall(QObject):
    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.LayoutRequest, QEvent.Resize, QEvent.Show):
            fit(watched)
        return False


def fit_height(dialog: QDialog) -> None:
    """Keep `dialog` as tall as its layout needs at its width (see the module docstring)."""
    dialog.installEventFilter(_KeepTall(dialog))


def fit(dialog: QDialog) -> None:
    layout = dialog.layout()
    if layout is None:
        return
    layout.activate()
    width = max(dialog.width(), layout.totalMinimumSize().width())
    height = (layout.totalMinimumHeightForWidth(width) if layout.hasHeightForWidth()
              else layout.totalMinimumSize().height())
    height = max(height, layout.totalMinimumSize().height())
    if (dialog.minimumWidth(), dialog.minimumHeight()) != (layout.totalMinimumSize().width(), height):
        dialog.setMinimumSize(layout.totalMinimumSize().width(), height)
    if dialog.height() < height or dialog.width() < width:
        dialog.resize(max(dialog.width(), width), max(dialog.height(), height))
