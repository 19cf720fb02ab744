"""QtProof(selection, tree_model, search): the selected design's certificate -> a few lines of text,
and a "Prove" button that runs the certifier (engine/search/certify.py) on the design's best in a
background TaskWorker, never on the GUI thread. The certificate shows here ("optimal" or "within x%
of optimal (proven)" beside the best's throughput, the proven bound and the boxes) and in the
design tree's proof column, and is stored with the latest run of the session (RunStore
certificates); certificates stored with that run are shown when a design is selected. "Load this configuration"
(`loadRequested(design, params)`) asks the window to show the proof's best configuration in every
panel when it is not the one shown; a refusal (the kernel changed since) is shown here."""
from __future__ import annotations

import threading

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QDoubleSpinBox, QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.models.design_selection import DesignSelection
from app.models.design_tree_model import DesignTreeModel
from app.models.search_session import SearchSession
from app.views import theme
from app.workers.task_worker import TaskWorker
from engine.errors import EngineError
from engine.search.store import RunStore


def certify(*args, **kwargs):
    """engine.search.certify.certify, imported when first used (on the worker thread: it imports the
    search and the solvers, which the window must not wait for before it paints)."""
    from engine.search.certify import certify as run

    return run(*args, **kwargs)


class QtProof(QWidget):
    loadRequested = Signal(str, dict)  # design, the proof's best configuration

    def __init__(self, selection: DesignSelection, tree_model: DesignTreeModel, search: SearchSession, parent=None):
        super().__init__(parent)
        self.selection, self.tree_model, self.search = selection, tree_model, search
        self.certificates: dict[str, dict] = {}  # design id -> Certificate.to_json()
        self._loaded_runs: set[int] = set()
        self._worker: TaskWorker | None = None
        self._proving = ""  # the design the running proof is for
        self._stop = threading.Event()
        self.error = ""  # the last proof's failure, shown until the next selection
        self.text = QLabel("Select a design.")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.seconds = QDoubleSpinBox(minimum=1, maximum=3600, value=20, suffix=" s", decimals=0)
        self.seconds.setToolTip("time for the proof")
        self.gap = QDoubleSpinBox(minimum=0, maximum=100, value=1, suffix=" %", decimals=1)
        self.gap.setToolTip("target gap: the proof stops when the best is proven this close to the optimum")
        self.button = QPushButton("Prove")
        self.button.setToolTip("prove the design's best optimal or within the gap (or find a better one)")
        self.button.clicked.connect(self.prove)
        self.load_button = QPushButton("Load this configuration")
        self.load_button.setToolTip("show the proof's best configuration in every panel (and as the design's "
                                    "best in the tree)")
        self.load_button.clicked.connect(self.load)
        self.load_button.setVisible(False)
        self.refusal = QLabel()
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet(f"color: {theme.ERROR}")
        self.refusal.setVisible(False)
        self._controls = QGridLayout()  # one row, or two when the dock is narrower than one (_arrange)
        self._controls.setContentsMargins(0, 0, 0, 0)
        self._gap_label, self._time_label = QLabel("gap"), QLabel("time")
        self._two_rows: bool | None = None
        self._arrange(False)
        layout = QVBoxLayout(self)
        layout.addLayout(self._controls)
        layout.addWidget(self.text)
        layout.addWidget(self.load_button, 0, Qt.AlignLeft)
        layout.addWidget(self.refusal)
        layout.addStretch(1)
        selection.changed.connect(self._show)

    def _arrange(self, two_rows: bool) -> None:
        """Prove, gap and time in one row, or the time under the gap (a narrow dock: presentation mode at
        1366x768), so that the dock never has to be wider than the two-row arrangement."""
        if two_rows == self._two_rows:
            return
        self._two_rows = two_rows
        grid = self._controls
        for widget in (self.button, self._gap_label, self.gap, self._time_label, self.seconds):
            grid.removeWidget(widget)
        grid.addWidget(self.button, 0, 0)
        grid.addWidget(self._gap_label, 0, 1)
        grid.addWidget(self.gap, 0, 2)
        grid.addWidget(self._time_label, int(two_rows), 1 if two_rows else 3)
        grid.addWidget(self.seconds, int(two_rows), 2 if two_rows else 4)
        for column in range(6):
            grid.setColumnStretch(column, 0)
        grid.setColumnStretch(3 if two_rows else 5, 1)

    def _one_row_width(self) -> int:
        spacing = max(self._controls.horizontalSpacing(), 0)
        widgets = (self.button, self._gap_label, self.gap, self._time_label, self.seconds)
        margins = self.layout().contentsMargins()
        return (sum(w.sizeHint().width() for w in widgets) + spacing * (len(widgets) - 1)
                + margins.left() + margins.right())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._arrange(self.width() < self._one_row_width())

    def minimumSizeHint(self):
        """The two-row arrangement's width (the one-row layout's minimum is wider)."""
        hint = super().minimumSizeHint()
        if self.layout() is None:
            return hint
        spacing = max(self._controls.horizontalSpacing(), 0)
        margins = self.layout().contentsMargins()
        two_rows = (self.button.sizeHint().width() + max(self._gap_label.sizeHint().width(),
                                                          self._time_label.sizeHint().width())
                    + max(self.gap.sizeHint().width(), self.seconds.sizeHint().width()) + 2 * spacing
                    + margins.left() + margins.right())
        hint.setWidth(min(hint.width(), max(two_rows, self.text.minimumSizeHint().width())))
        return hint

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def _run_id(self) -> int | None:
        return self.search.run_ids[-1] if self.search.run_ids else None

    def _load_stored(self) -> None:
        run_id = self._run_id()
        if run_id is None or run_id in self._loaded_runs:
            return
        self._loaded_runs.add(run_id)
        try:
            with RunStore(self.search.database) as store:
                stored = store.certificates(run_id)
        except EngineError:
            return
        for design, certificate in stored.items():
            self.certificates.setdefault(design, certificate)
            self.tree_model.set_certificate(design, self.certificates[design])

    def loadable(self) -> dict | None:
        """The proof's best configuration of the selected design when it is not the one shown."""
        design = self.selection.design
        certificate = self.certificates.get(design.id) if design is not None else None
        params = certificate.get("params") if certificate else None
        if not params or self.busy:
            return None
        names = [p.name for p in design.params if p.tunable]
        return None if all(self.selection.values.get(n) == params.get(n) for n in names) else dict(params)

    def load(self) -> None:
        params = self.loadable()
        if params is not None:
            self.loadRequested.emit(self.selection.design.id, params)

    def show_refusal(self, why: str) -> None:
        """Why the configuration asked for was not loaded ("": it was)."""
        self.refusal.setText(why)
        self.refusal.setVisible(bool(why))

    def _show(self) -> None:
        design = self.selection.design
        self.load_button.setVisible(self.loadable() is not None)
        if design is None:
            self.text.setText("Select a design.")
            return
        if self.busy:
            return
        self._load_stored()
        self.button.setEnabled(True)
        certificate = self.certificates.get(design.id)
        best = self.tree_model.best.get(design.id)
        if certificate is None:
            start = "its best so far" if best else "the configuration shown"
            self.text.setText(f"{design.id}: not proven yet. Prove starts from {start}.")
            return
        self.text.setText(describe(certificate, best.throughput_gops * best.latency_cycles if best else None))

    def prove(self) -> None:
        """Certify the selected design from its best (or the values shown) in a background worker."""
        design = self.selection.design
        if design is None or self.busy or self.selection.space is None:
            return
        best = self.tree_model.best.get(design.id)
        names = [p.name for p in design.params if p.tunable]
        values = best.params if best else self.selection.values
        start = {n: int(values[n]) for n in names} if all(n in values for n in names) else None
        load_model = self.selection.load_model
        gap, seconds = self.gap.value() / 100, self.seconds.value()
        self._stop.clear()
        stop = self._stop
        self.error = ""

        def work():
            from engine.search.space import SearchSpace

            search = SearchSpace(load_model(design))
            c = certify(search, start, gap=gap, seconds=seconds, stop=stop.is_set)
            data = c.to_json()
            if c.latency_cycles is not None:
                data["throughput_constant"] = search.throughput(c.latency_cycles) * c.latency_cycles
            return data

        # the worker holds nothing of this widget (no closure over `self`) and belongs to the
        # application, deleting itself once its thread has ended (KernelSession.compile says why)
        self._proving = design.id
        worker = self._worker = TaskWorker(work, QCoreApplication.instance(), background=True)
        worker.succeeded.connect(self._proved)
        worker.failed.connect(self._proof_failed)
        worker.finished.connect(self._done)
        worker.finished.connect(worker.deleteLater)
        self.button.setEnabled(False)
        self.text.setText(f"{design.id}: proving (up to {seconds:g} s, in the background)...")
        self._worker.start()

    def _proved(self, certificate: dict) -> None:
        design = certificate["design"]
        self.certificates[design] = certificate
        self.tree_model.set_certificate(design, certificate)
        run_id = self._run_id()
        if run_id is not None:
            try:
                with RunStore(self.search.database) as store:
                    store.put_certificate(run_id, certificate)
            except EngineError as exc:
                certificate["notes"] = [f"not stored: {exc}"]

    def _failed(self, design: str, message: str) -> None:
        self.error = f"{design}: the proof failed: {message}"

    def _proof_failed(self, message: str) -> None:
        self._failed(self._proving, message)

    def _done(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.wait()
        self.button.setEnabled(True)
        if self.error:
            self.text.setText(self.error)
        else:
            self._show()
        self.load_button.setVisible(self.loadable() is not None)

    def shutdown(self, timeout_ms: int = 10000) -> None:
        """Stop a running proof (at its next batch) and wait for it."""
        self._stop.set()
        if self._worker is not None:
            self._worker.wait(timeout_ms)


def describe(c: dict, constant: float | None) -> str:
    """A certificate as text; `constant` (throughput x latency of the design) turns cycles into GOP/s."""
    constant = c.get("throughput_constant", constant)
    gops = (lambda cycles: f", {constant / cycles:,.1f} GOP/s") if constant else (lambda cycles: "")
    if not c.get("fits", True):
        return f"{c['design']}: no configuration fits the device (proven). {' '.join(c.get('notes', []))}".strip()
    lines = [f"{c['design']}: {c.get('status', '')}"]
    if c.get("latency_cycles") is not None:
        lines.append(f"best {c['latency_cycles']:,.0f} cycles{gops(c['latency_cycles'])}"
                     + (" (found by the proof)" if c.get("improved") else ""))
    if c.get("lower_bound_cycles"):
        lines.append(f"no configuration below {c['lower_bound_cycles']:,.0f} cycles{gops(c['lower_bound_cycles'])}")
    lines.append(f"{c.get('boxes_explored', 0):,} boxes explored, {c.get('boxes_pruned', 0):,} pruned, "
                 f"{c.get('seconds', 0):.1f} s")
    return "\n".join(lines)
