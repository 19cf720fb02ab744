"""WindowActions: what the main window does on the user's behalf with files and dialogs - recent
files, projects (save, open: the kernel, sizes, budget, selection and runs of a session), the stored
runs dialog, the export dialog, the deterministic demo, AutoSA's --sa-sizes strings pasted (Edit menu). A mixin of MainWindow (app/main_window.py),
which composes the window's parts; these methods use them (`session`, `search`, `search_panel`, `selection`, `focus`,
`settings`, `menus`, `show_message`)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from app.project import Project, ProjectError, load_project, save_project
from engine.errors import EngineError
from engine.resources import DEFAULT_KERNEL

MAX_RECENT = 8
DEMO_METHOD, DEMO_SAMPLES, DEMO_SEED = "hybrid", 27_000, 1  # 1,000 samples a design of the bundled MM


class WindowActions:
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _remember(self, path: Path) -> None:
        recent = [str(path)] + [p for p in self.recent_files() if p != str(path)]
        self.settings.setValue("recent", recent[:MAX_RECENT])
        self.menus.fill_recent()

    def ask_save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save project", "", "Systolic Studio projects (*.ssproj)")
        if path:
            self.save(path)

    def show_runs(self) -> None:
        dialog = self.runs_dialog()
        if dialog is not None and dialog.exec() and dialog.chosen is not None:
            self.reopen_run(dialog.chosen)

    def runs_dialog(self):
        """The stored runs dialog, not shown yet (None, and the reason shown, when the database cannot
        be read)."""
        from app.views.qt_runs_dialog import QtRunsDialog  # sqlite: when asked for, not before the first paint
        from engine.search.run_sizes import run_sizes
        from engine.search.store import RunStore

        try:
            with RunStore(self.search.database) as store:
                runs = store.list_runs()
                path = store.path
        except EngineError as exc:
            self.show_message(str(exc))
            return None
        return QtRunsDialog(runs, run_sizes(path), self, database=path)

    def reopen_run(self, run_id: int) -> None:
        try:
            self.search.replay(self.search.load_run(run_id))
        except EngineError as exc:
            self.show_message(str(exc))

    def show_export(self):
        from app.views.qt_export_dialog import QtExportDialog, default_folder  # the exporter: when asked for

        design = self.selection.design
        folder = default_folder(self.settings.value("export_parent", ""), self.session.name,
                                design.id if design else "design")
        dialog = QtExportDialog(self.selection, folder, self, kernel_path=self.session.path)
        dialog.exported.connect(lambda path: self.settings.setValue("export_parent", str(Path(path).parent)))
        dialog.open()
        return dialog

    # -- AutoSA's --sa-sizes -------------------------------------------------------------------
    def paste_sa_sizes(self):
        """Edit > Paste AutoSA sizes: the dialog (app/views/qt_sa_sizes_dialog.py), opened non-modal."""
        from app.views.qt_sa_sizes_dialog import QtSaSizesDialog

        dialog = QtSaSizesDialog(self.load_sa_sizes, self)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def load_sa_sizes(self, text: str) -> str:
        """An AutoSA --sa-sizes string -> its design and tuning parameters (engine/compiler/sa_sizes.py),
        against the kernel compiled now, loaded in every panel as a configuration from a plot or a proof
        is (DesignFocus.load). "" when loaded; else the one-line reason, with nothing changed."""
        from engine.compiler.sa_sizes import SimdFactorError, select  # the compiler: when asked for

        space = self.selection.space
        if space is None or self.session.space is None:
            return "compile the kernel first: " + (self.session.error or "no kernel compiled")
        try:
            chosen = select(space, text)
        except SimdFactorError as exc:
            return str(exc) + ("" if space.simd_touch_space else
                               "; tick \"SIMD on space loops\" in the Kernel panel for those designs")
        except EngineError as exc:
            return str(exc)
        why = self.focus.refusal(chosen.design.id, chosen.params)
        if why:
            return why
        self.focus.load(chosen.design.id, chosen.params)
        self.statusBar().showMessage(f"--sa-sizes is: {chosen.equivalent()}" +
                                     (f" ({chosen.note})" if chosen.note else ""), 10000)
        return ""

    # -- projects ------------------------------------------------------------------------------
    def project(self) -> Project:
        s = self.session
        return Project(kernel_path=str(s.path), kernel_text=self.kernel_panel.editor.toPlainText(),
                       sizes=dict(s.overrides), data_type=s.data_type, device=s.device, clock_mhz=s.clock_mhz,
                       simd_touch_space=s.simd_touch_space,
                       method=self.search_panel.method.currentText(), seconds=self.search_panel.seconds.value(),
                       samples=self.search_panel.samples.value() if self.search_panel.budget_kind.currentIndex() else
                       None, seed=self.search_panel.seed_value() or 0,
                       design=self.selection.design.id if self.selection.design else None,
                       values=dict(self.selection.values), database=self.search.database,
                       runs=list(self.search.run_ids))

    def save(self, path=None) -> bool:
        path = Path(path) if path else self.project_path
        if path is None:
            self.ask_save()
            return self.project_path is not None
        try:
            save_project(self.project(), path)
        except ProjectError as exc:
            self.show_message(str(exc))
            return False
        self.project_path = path
        self._remember(path)
        self.statusBar().showMessage(f"saved {path}", 5000)
        return True

    def open_project(self, path) -> bool:
        """Open a project; an unreadable or corrupt file changes nothing and shows why."""
        if self.search.running:
            self.show_message("stop the search before opening a project")
            return False
        try:
            project = load_project(path)
        except ProjectError as exc:
            self.show_message(str(exc))
            return False
        previous, self.focus.pending = self.focus.pending, (
            (project.design, project.values) if project.design else None)
        try:  # first: an unknown device changes nothing (the compile it starts is asynchronous)
            self.session.open(project.kernel_path, text=project.kernel_text, overrides=project.sizes,
                              data_type=project.data_type, device=project.device, clock_mhz=project.clock_mhz,
                              simd_touch_space=project.simd_touch_space)
        except EngineError as exc:
            self.focus.pending = previous
            self.show_message(f"cannot open project {path}: {exc}")
            return False
        self.search.database, self.search.run_ids = project.database, list(project.runs)
        self.search_panel.method.setCurrentText(project.method)
        self.search_panel.set_budget(project.seconds, project.samples, project.seed)
        if project.runs:
            self.reopen_run(project.runs[-1])
        self.project_path = Path(path)
        self._remember(self.project_path)
        return True

    # -- demo ----------------------------------------------------------------------------------
    def start_demo(self) -> None:
        """The demo (Search > Demo, `--demo`): the bundled kernel at its own sizes on the device's own
        clock, every design, hybrid, DEMO_SAMPLES samples from DEMO_SEED: the same result every time,
        whatever the machine's load (a sample budget, not a time budget)."""
        if self.search.running:
            self.show_message("stop the search before starting the demo")
            return
        panel = self.search_panel
        panel.method.setCurrentText(DEMO_METHOD)
        panel.set_budget(None, DEMO_SAMPLES, DEMO_SEED)
        panel.scope.setCurrentIndex(0)
        try:
            self.session.open(DEFAULT_KERNEL, device="u250", clock_mhz=None, simd_touch_space=False)
        except EngineError as exc:
            self.show_message(str(exc))
            return
        self.session.compiled.connect(self._demo_compiled)
        self.statusBar().showMessage(f"demo: {DEFAULT_KERNEL.name}, every design, {DEMO_METHOD}, "
                                     f"{DEMO_SAMPLES:,} samples, seed {DEMO_SEED}", 10000)

    def _demo_compiled(self) -> None:
        """A compile ended: the demo's kernel's (its text, no size changed since) starts the search; an
        earlier one still running when the demo began is not the demo's."""
        s = self.session
        if s.space is not None and (s.compiled_text, s.compiled_defines, s.compiled_simd_touch_space) != (
                s.text, s.defines(), s.simd_touch_space):
            return  # an earlier compile: the demo's comes next
        s.compiled.disconnect(self._demo_compiled)
        if s.space is not None and s.path == DEFAULT_KERNEL and not s.overrides:
            self.search_panel.request_start()
