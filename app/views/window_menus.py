"""WindowMenus(window): the main window's menu bar -> File (kernels, projects with the recent ones,
stored runs, export), Edit (undo / redo of parameter edits, pin for comparison, paste an AutoSA
--sa-sizes string), Search (start,
stop, select the best design), View (the tabs, the docks, the theme, presentation mode: F5) and
Help (shortcuts, the user documentation, about), with their shortcuts. The actions call the window's public methods; the
menus keep nothing but the recent-projects menu and `actions_by_name`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from app.views.window_look import WindowLook

if TYPE_CHECKING:
    from app.main_window import MainWindow

THEMES = ("system", "dark", "light")
TABS = ("Topology", "Bottleneck", "Compare", "Pods", "Network", "Sweep", "Verify")


class WindowMenus:
    def __init__(self, window: MainWindow):
        self.window = w = window
        self.look = WindowLook(window)
        bar = w.menuBar()
        file = bar.addMenu("&File")
        for text, slot, key in (("Open kernel...", self.ask_kernel, QKeySequence.Open),
                                ("Open project...", self.ask_project, "Ctrl+Shift+O"),
                                ("Save project", w.save, QKeySequence.Save),
                                ("Save project as...", w.ask_save, QKeySequence.SaveAs),
                                ("Open network...", w.open_network, "Ctrl+Shift+N")):
            self._add(file, text, slot, key)
        self.recent_menu = file.addMenu("Recent projects")
        file.addSeparator()
        self._add(file, "Stored search runs...", w.show_runs)
        export = self._add(file, "Export Vitis project...", w.show_export, "Ctrl+E")
        file.addSeparator()
        quit_action = self._add(file, "Quit", w.close, "Ctrl+Q")
        self.fill_recent()

        edit = bar.addMenu("&Edit")
        undo = w.detail.undo_stack.createUndoAction(w, "Undo parameter edit")
        undo.setShortcut(QKeySequence("Ctrl+Z"))
        redo = w.detail.undo_stack.createRedoAction(w, "Redo parameter edit")
        redo.setShortcut(QKeySequence("Ctrl+Shift+Z"))
        edit.addAction(undo)
        edit.addAction(redo)
        pin = self._add(edit, "Pin the configuration for comparison", w.compare_view.pin_selected, "Ctrl+P")
        edit.addSeparator()
        sa_sizes = self._add(edit, "Paste AutoSA sizes…", w.paste_sa_sizes, "Ctrl+Shift+V")

        search = bar.addMenu("&Search")
        start = self._add(search, "Start", lambda: w.search_panel.start_button.click()
                          if w.search_panel.start_button.isEnabled() else None, "Ctrl+R")
        stop = self._add(search, "Stop", lambda: w.search.stop(), "Esc")
        search.addSeparator()
        self._add(search, "Select the best design", w.focus.select_best, "Ctrl+B")
        search.addSeparator()
        demo = self._add(search, "Demo: the bundled MM, a fixed seed and sample budget", w.start_demo, "Ctrl+Shift+D")
        self.actions_by_name = {"quit": quit_action, "export": export, "start": start, "stop": stop, "undo": undo,
                                "redo": redo, "pin": pin, "demo": demo, "sa_sizes": sa_sizes}

        view = bar.addMenu("&View")
        for k, name in enumerate(TABS):
            self._add(view, name, lambda _=False, n=name: w.views.setCurrentIndex(
                next(i for i in range(w.views.count()) if w.views.tabText(i) == n)), f"Ctrl+{k + 1}")
        view.addSeparator()
        for dock in w.docks.values():
            view.addAction(dock.toggleViewAction())
        view.addSeparator()
        themes = view.addMenu("Theme")
        for mode in THEMES:
            action = self._add(themes, mode, lambda _=False, m=mode: self.set_theme(m))
            action.setCheckable(True)
            action.setChecked(self.look.mode == mode)
        presentation = self._add(view, "Presentation mode (larger fonts)", self.look.toggle_presentation, "F5")
        presentation.setCheckable(True)
        self.actions_by_name["presentation"] = presentation

        help_menu = bar.addMenu("&Help")
        for text, slot in (("Keyboard shortcuts", self.show_shortcuts), ("Documentation", self.open_docs),
                           ("About Systolic Studio", self.show_about)):
            self._add(help_menu, text, slot)

    def _add(self, menu: QMenu, text: str, slot, key=None) -> QAction:
        action = QAction(text, self.window)
        if key is not None:
            action.setShortcut(key)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.window.recent_files():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.window.open_project(p))
        self.recent_menu.setEnabled(bool(self.window.recent_files()))

    def shortcuts(self) -> list[tuple[str, str]]:
        """(keys, what) of every menu action with a shortcut."""
        out = []
        for menu in self.window.menuBar().findChildren(QMenu):
            for action in menu.actions():
                if not action.shortcut().isEmpty():
                    out.append((action.shortcut().toString(QKeySequence.NativeText), action.text().replace("&", "")))
        out.append(("Ctrl+Return", "Compile the kernel"))
        return sorted(set(out), key=lambda kv: kv[1])

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;&nbsp;{what}</td></tr>" for k, what in self.shortcuts())
        box = QMessageBox(QMessageBox.NoIcon, "Keyboard shortcuts", f"<table>{rows}</table>", QMessageBox.Ok,
                          self.window)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()

    def open_docs(self):
        """Help > Documentation: the user documentation (README's "Desktop explorer") in a window."""
        from app.views.qt_user_guide import QtUserGuide

        guide = QtUserGuide(self.window)
        guide.show()
        return guide

    def show_about(self) -> None:
        QMessageBox.about(self.window, "About Systolic Studio",
                          "<b>Systolic Studio</b><br>compiles C loop nests into systolic arrays (AutoSA), tunes them "
                          "(Odyssey) and exports Vitis HLS projects for the Alveo U250.<br>"
                          "Documentation: README.md and docs/ beside the application.")

    def set_theme(self, mode: str) -> None:
        """Applied at once, and remembered for the next start."""
        self.look.set_theme(mode)
        for action in self.window.findChildren(QAction):  # the actions are the window's children
            if action.isCheckable() and action.text() in THEMES:
                action.setChecked(action.text() == mode)

    def ask_kernel(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open kernel", "", "C kernels (*.c);;All files (*)")
        if path:
            self.window.open_kernel(path)

    def ask_project(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open project", "",
                                              "Systolic Studio projects (*.ssproj *.json)")
        if path:
            self.window.open_project(path)
