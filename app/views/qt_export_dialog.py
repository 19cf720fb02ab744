"""QtExportDialog(selection): writes the Vitis HLS project of the selected design and configuration
into a folder (engine.export.export_project, in a TaskWorker), then offers to run the C simulation
(engine.csim.run_csim) and the timed C simulation (engine.csim.run_timed_csim: cycles of the
exported code, per dataflow process, beside the model's latency) of the project as written, the full
problem. Those run as the Verify tab's do, in a child process group of the Verify tab's runner
(app/workers/verify_process.VerifyRunner): the step and the time so far (of the estimate, for the C
simulation) shown while it runs, and Cancel (or closing the dialog) kills it with g++ and the program
it started. The outcome (or the one-line error) is shown in place. A timed
result is also handed to the selection (DesignSelection.set_measured), so the topology's heat colours
follow the exported code's busy cycles for that configuration.

"Preview kernel" generates the project into a temporary folder (nothing written where the export
goes) and shows its HLS kernel (src/kernel_kernel.cpp) in the preview pane; an export shows the
kernel it wrote there. The dialog says what it exports (design id, throughput at the chosen clock, whether it fits), lets
the Vitis platform (the device file's `vitis_platforms`, or an .xpfm path) and the kernel clock
(MHz, up to the device's `clock_mhz_max`) be chosen, proposes a folder named after the kernel and
the design, and opens the written folder. The project names the user's kernel file, not the
window's working copy. A non-empty folder or a design over the budget is refused in place, naming
the checkbox that allows it."""
from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path

import time

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
)

from app.models.design_selection import DesignSelection
from app.models.verification import plan_for
from app.views.dialog_fit import fit_height
from app.workers.task_worker import TaskWorker
from app.workers.verify_process import VerifyRequest, VerifyRunner
from engine.export import export_project
from engine.export.build_files import DEFAULT_PLATFORM
from engine.export.project import safe_directory_name
from engine.models.device import DEVICES

try:
    from engine.csim import run_csim, run_timed_csim  # (run in the verification process: see the docstring)
    from engine.csim.timed import format_timed
except ImportError:  # the C simulation lands in a parallel change; until then the dialog says so
    run_csim = run_timed_csim = format_timed = None
TICK_MS = 250  # the running simulation's progress line


def timed_module_cycles(result) -> dict[str, float]:
    """Each descriptor module's busy cycles in a timed C simulation (its busiest process)."""
    cycles: dict[str, float] = {}
    for p in result.processes:
        if p.module:
            cycles[p.module] = max(cycles.get(p.module, 0.0), float(p.busy))
    return cycles


DEFAULT_PARENT = Path.home() / "systolic-studio-exports"
KERNEL_FILE = Path("src") / "kernel_kernel.cpp"  # the HLS kernel of an exported project


def preview_kernel(space, design, values, device, platform) -> str:
    """The HLS kernel the export would write, generated into a temporary folder that is then removed."""
    folder = Path(tempfile.mkdtemp(prefix="systolic-preview-"))
    try:
        project = export_project(space, design, values, folder / "project", device=device, platform=platform,
                                 allow_over_budget=True)
        return (Path(project) / KERNEL_FILE).read_text(encoding="utf-8")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def default_folder(parent: str | Path, kernel: str, design_id: str) -> Path:
    """The folder proposed for an export: `parent` / <kernel>-<design id>, a name Vitis accepts."""
    return Path(parent or DEFAULT_PARENT) / safe_directory_name(f"{kernel}-{design_id}")


def platforms(device_name: str) -> list[str]:
    """The Vitis platforms the device file names (its default first), or the exporter's default."""
    try:
        named = json.loads((DEVICES / f"{device_name}.json").read_text(encoding="utf-8")).get("vitis_platforms", {})
    except (OSError, ValueError):
        named = {}
    first = named.get("default", DEFAULT_PLATFORM)
    return [first] + [p for p in named.values() if p != first]


def summary_text(selection: DesignSelection, clock_mhz: float | None = None) -> str:
    """What is exported: design id and name, throughput at `clock_mhz` (the selection's clock by
    default: the cycles do not change with the clock, the throughput scales with it), fit verdict, values."""
    design, report = selection.design, selection.report
    if design is None:
        return "<b>no design selected</b>"
    head = f"<b>{design.id}</b>: {design.name}"
    if report is not None:
        fits = ("fits the device's budget" if report["fits"] else
                "<span style='color:#ff6b6b'>does not fit: " + "; ".join(report["violations"]) + "</span>")
        shown = report["device"]["clock_mhz"]
        clock = clock_mhz or shown
        head += (f"<br>{report['throughput_gops'] * clock / shown:,.1f} GOP/s at {clock:g} MHz, "
                 f"{report['latency_cycles']:,.0f} cycles; {fits}")
    return head + "<br>" + ", ".join(f"{k}={v}" for k, v in (selection.full_values() or {}).items())


class QtExportDialog(QDialog):
    exported = Signal(object)  # the project's folder (a Path), once written

    def __init__(self, selection: DesignSelection, out_dir: str | Path = "", parent=None, *,
                 kernel_path: str | Path | None = None):
        """`out_dir`: the folder proposed; `kernel_path`: the user's kernel file the project names
        (default: the compiled kernel's own path)."""
        super().__init__(parent)
        self.setWindowTitle("Export Vitis HLS project")  # as wide as its row of buttons needs (its layout's minimum)
        self.selection = selection
        self.project_dir: Path | None = None
        self.csim_result = None
        self.timed_result = None
        self._exported_as: tuple[str, dict] | None = None  # (design id, values) of the export
        self._exporting: tuple[str, dict] | None = None
        self.worker: TaskWorker | None = None
        self.runner = VerifyRunner(self)  # the project's C simulations, as the Verify tab runs its own
        self.runner.phase.connect(self._phase)
        self.runner.finished.connect(self._verified)
        self.runner.failed.connect(self._verify_failed)
        self._step, self._estimate = "", None  # the running simulation's step, its estimated seconds
        self._ticker = QTimer(self)
        self._ticker.setInterval(TICK_MS)
        self._ticker.timeout.connect(self._tick)
        self.kernel_path = str(kernel_path) if kernel_path else None
        self.summary = summary = QLabel(summary_text(selection))
        summary.setWordWrap(True)
        self.platform = QComboBox()
        self.platform.setEditable(True)  # another platform name, or the path of an .xpfm file
        self.platform.addItems(platforms(selection.device_name))
        device = selection.device
        self.clock = QDoubleSpinBox(minimum=1, maximum=device.clock_mhz_max or device.clock_mhz,
                                    value=device.clock_mhz, decimals=0, suffix=" MHz")
        self.clock.setToolTip("the kernel clock of the build (v++ --kernel_frequency) and of the throughput "
                              f"figures; at most {self.clock.maximum():g} MHz on the {device.name}")
        self.clock.valueChanged.connect(lambda mhz: summary.setText(summary_text(selection, mhz)))
        self.folder = QLineEdit(str(out_dir))
        self.folder.setPlaceholderText("output folder")
        browse = QPushButton("Browse...")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        self.force = QCheckBox("overwrite a non-empty folder")
        self.over_budget = QCheckBox("export even if the design does not fit the device")
        self.export_button = QPushButton("Export")
        self.export_button.setObjectName("primary")
        self.csim_button = QPushButton("Run C simulation")
        self.csim_button.setEnabled(False)
        self.timed_button = QPushButton("Timed C simulation")
        self.timed_button.setToolTip("runs the exported C++ once, then replays its trace cycle by cycle: "
                                     "cycles per dataflow process beside the model's latency (docs/export.md)")
        self.timed_button.setEnabled(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("stop the running C simulation (g++ and the program it built with it)")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.open_button = QPushButton("Open folder")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self.open_folder)
        self.busy = QProgressBar()
        self.busy.setRange(0, 1)
        self.busy.setTextVisible(False)
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.preview.setPlaceholderText("Preview kernel: the HLS C++ the export writes (src/kernel_kernel.cpp)")
        self.pages = QTabWidget()
        self.pages.addTab(self.log, "files and log")
        self.pages.addTab(self.preview, "kernel preview")
        self.preview_button = QPushButton("Preview kernel")
        self.preview_button.setToolTip("generate the project in a temporary folder and show its HLS kernel")
        buttons = QHBoxLayout()
        buttons.addWidget(self.preview_button)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.csim_button)
        buttons.addWidget(self.timed_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        buttons.addWidget(close)
        form = QFormLayout()
        form.addRow("platform", self.platform)
        form.addRow("kernel clock", self.clock)
        form.addRow("folder", row)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addLayout(form)
        for item in (self.force, self.over_budget, self.busy, self.outcome, self.pages, buttons):
            layout.addLayout(item) if isinstance(item, QHBoxLayout) else layout.addWidget(item)
        self.export_button.clicked.connect(self.export)
        self.preview_button.clicked.connect(self.show_preview)
        self.csim_button.clicked.connect(self.simulate)
        self.timed_button.clicked.connect(self.simulate_timed)
        fit_height(self)  # a message wrapped onto more lines makes the dialog taller, never cuts it
        if selection.report is None:
            self._show(False, selection.error or "select a design with a valid configuration first")
            self.export_button.setEnabled(False)
            self.preview_button.setEnabled(False)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export into", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def _show(self, ok: bool, text: str) -> None:
        self.outcome.setObjectName("" if ok else "error")
        self.outcome.setStyleSheet("" if ok else "color: #ff6b6b;")
        self.outcome.setText(text)

    def _busy(self) -> None:
        self.busy.setRange(0, 0)
        self.export_button.setEnabled(False)
        self.preview_button.setEnabled(False)
        self.csim_button.setEnabled(False)
        self.timed_button.setEnabled(False)

    def _run(self, fn, on_success) -> None:
        self._busy()
        self.worker = TaskWorker(fn)
        self.worker.succeeded.connect(on_success)
        self.worker.failed.connect(self._failed)  # a bound method: the worker holds no closure over the dialog
        self.worker.finished.connect(self._done)
        self.worker.start()

    def _failed(self, message: str) -> None:
        self._show(False, message)

    def _done(self) -> None:
        if self.worker is not None:
            self.worker.wait()
            self.worker = None
        self._ready()

    def _ready(self) -> None:
        self.busy.setRange(0, 1)
        self.busy.setValue(0)
        self.export_button.setEnabled(True)
        self.preview_button.setEnabled(True)
        self.csim_button.setEnabled(self.project_dir is not None and run_csim is not None)
        self.timed_button.setEnabled(self.project_dir is not None and run_timed_csim is not None)

    def export(self) -> None:
        text = self.folder.text().strip()
        if not text:
            self._show(False, "choose an output folder")
            return
        s = self.selection
        out = Path(text).expanduser()
        force, over = self.force.isChecked(), self.over_budget.isChecked()
        if not force and out.is_dir() and any(out.iterdir()):
            self._show(False, f"{out} is not empty: tick \"{self.force.text()}\" to replace the exported files "
                              "in it, or choose another folder")
            return
        if not over and s.report is not None and not s.report["fits"]:
            self._show(False, f"{s.design.id} does not fit the device's budget ({'; '.join(s.report['violations'])})"
                              f": tick \"{self.over_budget.text()}\" to export it anyway")
            return
        space, design, values, device, platform = self._target()
        self._show(True, f"exporting into {out} ...")
        self._exporting = (design.id, dict(values))
        self._run(lambda: export_project(space, design, values, out, device=device, platform=platform, force=force,
                                         allow_over_budget=over), self._exported)

    def _target(self):
        """(space naming the user's kernel file, design, values, device at the chosen clock, platform)."""
        s = self.selection
        space = s.space
        if self.kernel_path:  # the project names the user's file, not the window's working copy
            space = dataclasses.replace(space, kernel=dataclasses.replace(space.kernel, path=self.kernel_path))
        device = dataclasses.replace(s.device, clock_mhz=self.clock.value())
        return space, s.design, s.full_values(), device, self.platform.currentText().strip() or None

    def show_preview(self) -> None:
        """Generate the kernel in a temporary folder (a worker thread) and show it in the preview pane."""
        space, design, values, device, platform = self._target()
        self._show(True, f"generating the kernel of {design.id} ...")
        self._run(lambda: preview_kernel(space, design, values, device, platform), self._previewed)

    def _previewed(self, text: str) -> None:
        self.preview.setPlainText(text)
        self.pages.setCurrentWidget(self.preview)
        self._show(True, f"the HLS kernel an export writes ({len(text.splitlines()):,} lines, {KERNEL_FILE}); "
                         "nothing was written to the folder")

    def open_folder(self) -> None:
        if self.project_dir is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.project_dir)))

    def _exported(self, path) -> None:
        self.project_dir = Path(path)
        self._exported_as = self._exporting  # what the project in project_dir holds
        files = sorted(str(p.relative_to(self.project_dir)) for p in self.project_dir.rglob("*") if p.is_file())
        plan = plan_for(self.selection, "csim", full=True) if self._exported_as == (
            self.selection.design.id if self.selection.design else None, self.selection.full_values()) else None
        estimate = (f" The C simulation of this full problem should take about {plan.text().rsplit('about ', 1)[1]};"
                    " the Verify tab runs it on a reduced problem in seconds, and can cancel it." if plan else "")
        then = ("Run the C simulation to check it." + estimate if run_csim is not None
                else "(the C simulation, engine.csim, is not available in this build)")
        self._show(True, f"wrote {len(files)} files into {self.project_dir}. {then}")
        self.log.setPlainText("\n".join(files))
        kernel = self.project_dir / KERNEL_FILE
        if kernel.is_file():
            self.preview.setPlainText(kernel.read_text(encoding="utf-8"))
        self.open_button.setEnabled(True)
        self.exported.emit(self.project_dir)

    @property
    def simulating(self) -> bool:
        return self.runner.running

    def simulate(self) -> None:
        """The exported project's C simulation, in the verification process (Cancel kills it)."""
        plan = plan_for(self.selection, "csim", full=True) if self._exported_as == (
            self.selection.design.id if self.selection.design else None, self.selection.full_values()) else None
        self._start_project("csim", plan.seconds if plan is not None else None)

    def simulate_timed(self) -> None:
        """The exported project's timed C simulation, in the verification process (Cancel kills it)."""
        self._start_project("timed", None)

    def _start_project(self, kind: str, estimate: float | None) -> None:
        if self.project_dir is None or self.runner.running:
            return
        self._estimate, self._step = estimate, ""
        self._busy()
        if estimate:
            self.busy.setRange(0, 1000)
            self.busy.setValue(0)
        self.cancel_button.setEnabled(True)
        self.runner.start(VerifyRequest.of_project(kind, self.project_dir))
        self._ticker.start()

    def _phase(self, index: int, text: str) -> None:
        self._step = f"step {index + 1} of {len(self.runner.request.phases)}: {text}"
        self._tick()

    def _tick(self) -> None:
        if not self.runner.running:
            return
        elapsed = time.monotonic() - self.runner.started_at
        about = ""
        if self._estimate:
            self.busy.setValue(int(1000 * min(0.99, elapsed / max(self._estimate, 0.1))))
            about = f" of about {self._estimate:,.0f} s"
        self._show(True, f"{self._step} ({elapsed:,.0f} s{about}); Cancel stops it")

    def _finish_project(self) -> None:
        self._ticker.stop()
        self.cancel_button.setEnabled(False)
        self._ready()

    def _verified(self, outcome: dict) -> None:
        self._finish_project()
        if outcome["kind"] == "timed":
            self._timed(outcome["result"])
        else:
            self._simulated(outcome["result"])

    def _verify_failed(self, message: str) -> None:
        self._finish_project()
        self._show(False, message)

    def cancel(self) -> None:
        """Kill the running C simulation (and g++ or the program it started)."""
        kind = self.runner.request.kind if self.runner.running else None
        if self.runner.cancel():
            self._finish_project()
            self._show(False, f"{'timed C simulation' if kind == 'timed' else 'C simulation'} cancelled")

    def _simulated(self, result) -> None:
        self.csim_result = result
        self._show(result.passed, f"C simulation {'passed' if result.passed else 'FAILED'}: {result.summary}")
        self.log.setPlainText(f"$ {result.command}\n\n{result.log}")

    def _timed(self, result) -> None:
        self.timed_result = result
        verdict = "values match" if result.passed else "values DO NOT match the loop nest"
        model = (f", model {result.model_latency:,.0f} ({result.model_error:+.1%})" if result.model_latency else "")
        self._show(result.passed and result.complete,
                   f"timed C simulation: {result.cycles:,} cycles{model}; slowest {result.slowest}; {verdict}")
        self.log.setPlainText(format_timed(result))
        cycles = timed_module_cycles(result)
        if cycles and self._exported_as is not None and hasattr(self.selection, "set_measured"):
            self.selection.set_measured(*self._exported_as, "timed C simulation", cycles)

    def done(self, code: int) -> None:
        self.runner.cancel()  # closing while a C simulation runs: it is killed
        self._ticker.stop()
        if self.worker is not None:  # an export or a preview (seconds at most): let it finish
            self.worker.wait()
        super().done(code)
