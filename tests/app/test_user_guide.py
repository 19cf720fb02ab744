"""Help > Documentation shows the user documentation (README.md's "Desktop explorer" section, with its
screenshots) in the application, not an engineering note."""
from __future__ import annotations

from app.views.qt_user_guide import ROOT, QtUserGuide, user_guide


def test_the_guide_is_the_readme_s_explorer_section(tmp_path):
    text = user_guide()
    assert text.startswith("## Desktop explorer") and "Presentation mode" in text
    assert "\n## " not in text  # the section only, not the rest of the README
    assert "event-loop" not in text.lower()
    readme = tmp_path / "README.md"
    readme.write_text("# X\n\n## Desktop explorer\n\nUse it.\n\n## Layout\n\nnot this\n")
    assert user_guide(readme) == "## Desktop explorer\n\nUse it.\n"
    assert "not beside this installation" in user_guide(tmp_path / "missing.md")


def test_help_documentation_opens_the_guide_in_the_window(qtbot):
    from PySide6.QtWidgets import QMainWindow

    from app.views import window_menus

    class Host:  # the menu's slot needs only a parent window
        window = QMainWindow()

    qtbot.addWidget(Host.window)
    guide = window_menus.WindowMenus.open_docs(Host)
    qtbot.addWidget(guide)
    assert isinstance(guide, QtUserGuide) and guide.isVisible()
    assert "Desktop explorer" in guide.text.toPlainText()
    assert str(ROOT) in guide.text.searchPaths()
