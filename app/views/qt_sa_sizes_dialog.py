"""QtSaSizesDialog(apply): Edit > "Paste AutoSA sizes..." -> an AutoSA `--sa-sizes` string typed or
pasted into one line (prefilled from the clipboard when it holds one, i.e. starts with `{kernel[]`),
handed to `apply(text) -> str` on OK. `apply` returns "" when the string was loaded (the dialog
closes) or the one-line reason it was refused, shown in place (the dialog stays open)."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout

from app.views.dialog_fit import fit_height

PREFIX = "{kernel[]"


class QtSaSizesDialog(QDialog):
    def __init__(self, apply: Callable[[str], str], parent=None):
        super().__init__(parent)
        self.apply = apply
        self.setWindowTitle("Paste AutoSA sizes")
        caption = QLabel("An AutoSA --sa-sizes string: it selects the design of the compiled kernel and its "
                         "tuning parameters.")
        caption.setWordWrap(True)
        self.line = QLineEdit()
        from engine.compiler.sa_sizes import EXAMPLE  # the compiler: imported when the dialog is asked for

        self.line.setPlaceholderText(EXAMPLE)
        self.line.setMinimumWidth(520)
        clipboard = QGuiApplication.clipboard().text().strip()
        if clipboard.startswith(PREFIX):
            self.line.setText(clipboard)
        self.message = QLabel()
        self.message.setObjectName("error")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.line.textEdited.connect(lambda _: self.message.hide())
        layout = QVBoxLayout(self)
        layout.addWidget(caption)
        layout.addWidget(self.line)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        fit_height(self)  # the refusal shown under the line makes the dialog taller, never cuts it

    def accept(self) -> None:
        """OK: loaded, the dialog closes; refused, the reason shows under the line and it stays open."""
        why = self.apply(self.line.text().strip())
        if why:
            self.message.setText(why)
            self.message.show()
            return
        super().accept()
