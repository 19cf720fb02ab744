"""README.md's "Desktop explorer" section (the user documentation of the window) -> the Help >
Documentation window: the section rendered as Markdown with its screenshots, in the application,
not an engineering note opened in another program. Links open in the system's browser."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

ROOT = Path(__file__).resolve().parents[2]  # the checkout: README.md and docs/ beside app/
SECTION = "## Desktop explorer"


def user_guide(readme: Path = ROOT / "README.md") -> str:
    """The README's section on the window, up to the next second-level heading, as Markdown."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return (f"The user documentation is the \"Desktop explorer\" section of README.md, which is not "
                f"beside this installation ({readme}).")
    start = text.find(SECTION)
    if start < 0:
        return f"{readme} has no \"Desktop explorer\" section."
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end if end >= 0 else len(text)].strip() + "\n"


class QtUserGuide(QDialog):
    def __init__(self, parent=None, readme: Path = ROOT / "README.md"):
        super().__init__(parent)
        self.setWindowTitle("Systolic Studio: using the explorer")
        self.resize(900, 700)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(True)
        self.text.setSearchPaths([str(readme.parent)])  # the screenshots under docs/
        self.text.setMarkdown(user_guide(readme))
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.setAttribute(Qt.WA_DeleteOnClose)
