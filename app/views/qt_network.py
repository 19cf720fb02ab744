"""NetworkSession -> the explorer's Network tab: choose a workload, run every (layer, design) search
of the window's kernel as a network job off the GUI thread, and watch the answers fill in.

Top: the workload, the budget per pair (seconds, or samples for a reproducible run), the local
cluster's workers, Run / Stop and one progress line. Left: the per-layer table (best design, GOP/s,
the single array's share of the layer's peak). Right: the selected layer's bars, every design's best
throughput on it (the layer's best and the single array's design marked), and under them the chosen
single array and the best single dataflow. Clicking a layer emits `layerChosen(sizes, design,
params)`: the window sets the kernel to the layer's sizes and selects its best design. A workload
whose layers do not give exactly the sizes the window's kernel uses is refused in place, naming
them, when it is opened, when the kernel is compiled again and at Run, before anything runs.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
    QDoubleSpinBox,
)

from app.models.network_session import NetworkLayersModel, NetworkRequest, NetworkSession, NetworkUpdate
from engine.errors import EngineError
from engine.network.workload import check_against_kernel


class LayerBars(QWidget):
    """Horizontal bars: each design's best GOP/s on one layer, longest first."""

    BAR = 16

    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = ""
        self.bars: list[tuple[str, float]] = []  # (design, GOP/s), sorted
        self.best: str | None = None
        self.single: str | None = None
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def set_layer(self, title: str, designs: dict[str, float | None], best: str | None, single: str | None) -> None:
        self.title, self.best, self.single = title, best, single
        self.bars = sorted(((d, g or 0.0) for d, g in designs.items()), key=lambda b: -b[1])
        self.setMinimumHeight(24 + self.BAR * len(self.bars))
        self.update()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        palette = self.palette()
        text = palette.color(QPalette.WindowText)
        painter.setPen(text)
        painter.drawText(4, 14, self.title or "select a layer")
        if not self.bars:
            return
        top = max(g for _d, g in self.bars) or 1.0
        label_width = min(220, self.width() // 2)
        bar_width = max(10, self.width() - label_width - 70)
        for row, (design, gops) in enumerate(self.bars):
            y = 22 + row * self.BAR
            painter.setPen(text)
            name = design + (" (single array)" if design == self.single else "")
            painter.drawText(QRectF(4, y, label_width - 8, self.BAR), Qt.AlignVCenter | Qt.AlignRight,
                             painter.fontMetrics().elidedText(name, Qt.ElideMiddle, label_width - 8))
            color = QColor("#d9822b") if design == self.best else QColor("#4c78a8")
            if design == self.single and design != self.best:
                color = QColor("#59a14f")
            painter.fillRect(QRectF(label_width, y + 2, bar_width * gops / top, self.BAR - 4), color)
            painter.drawText(QRectF(label_width + bar_width * gops / top + 4, y, 66, self.BAR), Qt.AlignVCenter,
                             f"{gops:.0f}" if gops else "none")


class QtNetwork(QWidget):
    layerChosen = Signal(dict, str, dict)  # kernel sizes, design id, that pair's parameters
    messageShown = Signal(str)

    def __init__(self, session: NetworkSession, kernel_path, parent=None, *, kernel=None):
        """`kernel_path()`: the kernel file the run compiles (the window's compiled copy); `kernel()`:
        that kernel parsed (None: not compiled), against which a workload's sizes are checked
        before anything runs."""
        super().__init__(parent)
        self.session, self.kernel_path, self.kernel = session, kernel_path, kernel
        self.model = NetworkLayersModel(session, self)
        self.workload = QLabel("no workload: File > Open network...")
        self.open_button = QPushButton("Open workload...")
        self.budget_kind = QComboBox()
        self.budget_kind.addItems(["seconds per pair", "samples per pair"])
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.1, 600.0)
        self.seconds.setValue(1.0)
        self.samples = QSpinBox()
        self.samples.setRange(10, 10_000_000)
        self.samples.setValue(3000)
        self.samples.setVisible(False)
        self.workers = QSpinBox()
        self.workers.setRange(0, 256)
        self.workers.setSpecialValueText("one per core")
        self.workers.setPrefix("workers ")
        self.run_button = QPushButton("Run network")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.progress = QLabel("")
        self.refusal = QLabel("")  # why the workload does not fit the window's kernel
        self.refusal.setObjectName("error")
        self.refusal.setWordWrap(True)
        self.refusal.setVisible(False)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        self.bars = LayerBars()
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)

        controls = QHBoxLayout()
        for widget in (self.open_button, self.workload, self.budget_kind, self.seconds, self.samples, self.workers,
                       self.run_button, self.stop_button):
            controls.addWidget(widget)
        controls.setStretch(1, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.bars, 1)
        right_layout.addWidget(self.summary)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.table)
        split.addWidget(right)
        split.setSizes([500, 400])
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.progress)
        layout.addWidget(self.refusal)
        layout.addWidget(split, 1)

        self.open_button.clicked.connect(self.ask_network)
        self.budget_kind.currentIndexChanged.connect(self._budget_kind)
        self.run_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(session.stop)
        self.table.clicked.connect(lambda index: self.choose_layer(index.row()))
        self.table.selectionModel().currentRowChanged.connect(lambda current, _previous: self._show_bars())
        session.networkChanged.connect(self._network_changed)
        session.updated.connect(self._updated)
        session.stateChanged.connect(self._state)
        session.failed.connect(self._failed)
        self._state()

    # -- input -------------------------------------------------------------------------------
    def ask_network(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open network workload", "",
                                              "Workloads (*.json *.csv);;All files (*)")
        if path:
            self.open_network(path)

    def open_network(self, path) -> bool:
        if self.session.running:
            self.messageShown.emit("stop the network run before opening another workload")
            return False
        try:
            self.session.open(path)
        except EngineError as error:
            self.messageShown.emit(str(error))
            return False
        return True

    def _budget_kind(self, index: int) -> None:
        self.seconds.setVisible(index == 0)
        self.samples.setVisible(index == 1)

    def request(self, **overrides) -> NetworkRequest:
        by_samples = self.budget_kind.currentIndex() == 1
        values = dict(kernel_path=str(self.kernel_path()), network=self.session.network,
                      seconds=None if by_samples else self.seconds.value(),
                      samples=self.samples.value() if by_samples else None,
                      workers=self.workers.value() or None)
        values.update(overrides)
        return NetworkRequest(**values)

    def start(self, **overrides) -> None:
        """Run the workload on the window's kernel (`overrides`: NetworkRequest fields, for tests)."""
        if self.session.network is None:
            self.messageShown.emit("open a workload first (File > Open network...)")
            return
        if self.kernel_path() is None:
            self.messageShown.emit("compile a kernel first")
            return
        problem = self.check_kernel()
        if problem:  # refused before anything runs: no run stored, no cluster started
            self.messageShown.emit(problem)
            return
        try:
            self.session.start(self.request(**overrides))
        except EngineError as error:
            self.messageShown.emit(str(error))

    def check_kernel(self) -> str:
        """Why the workload does not match the window's kernel (a layer missing one of its sizes, or
        giving one it lacks), shown in place; "" when it matches or there is nothing to check yet."""
        kernel = self.kernel() if self.kernel is not None else None
        problem = ""
        if kernel is not None and self.session.network is not None:
            try:
                check_against_kernel(self.session.network, kernel)
            except EngineError as error:
                problem = f"this workload does not fit the kernel {kernel.name}: {error}"
        self.refusal.setText(problem)
        self.refusal.setVisible(bool(problem))
        return problem

    # -- output ------------------------------------------------------------------------------
    def _network_changed(self) -> None:
        network = self.session.network
        path = Path(network.path).name if network.path else network.name
        self.workload.setText(f"{network.name}: {len(network.layers)} layers ({path})")
        self.progress.setText("")
        self.summary.setText("")
        self.check_kernel()
        self._state()
        self._show_bars()

    def _state(self) -> None:
        running = self.session.running
        self.run_button.setEnabled(not running and self.session.network is not None)
        self.stop_button.setEnabled(running)
        self.open_button.setEnabled(not running)
        if not running and self.session.update is not None:
            u = self.session.update
            self.progress.setText(f"run {u.run_id} {u.status}: {u.done}/{u.total} pairs "
                                  f"(stored; `systolic network --resume {u.run_id}` continues it)"
                                  if u.status == "interrupted" else f"run {u.run_id} {u.status}: {u.done}/{u.total} pairs")
        elif running and self.session.update is None:
            self.progress.setText("compiling the designs and starting the cluster...")

    def _failed(self, message: str) -> None:
        self.progress.setText(f"failed: {message}")
        self.messageShown.emit(message)

    def _updated(self, update: NetworkUpdate) -> None:
        if self.session.running:
            eta = f", about {update.eta:.0f} s left" if update.eta else ""
            self.progress.setText(f"run {update.run_id}: {update.done}/{update.total} pairs{eta}")
        answers = update.answers
        lines = []
        if answers is not None and answers.designs:
            top = answers.designs[0]
            lines.append(f"best single dataflow: {top.id}, {100 * top.geomean_share:.0f}% of the per-layer "
                         "peak (geo. mean)")
        single = answers.single_array if answers is not None else None
        if single is not None:
            params = ", ".join(f"{k}={v}" for k, v in sorted(single.params.items()))
            lines.append(f"single array: {single.design}, {single.network_gops:.1f} GOP/s over the network, "
                         f"{100 * single.share_of_peak:.0f}% of the per-layer peak; {params}")
        self.summary.setText("\n".join(lines))
        self._show_bars()

    def current_row(self) -> int:
        index = self.table.selectionModel().currentIndex()
        return index.row() if index.isValid() else 0

    def _show_bars(self) -> None:
        update, row = self.session.update, self.current_row()
        answer = self.model.answer(row)
        if answer is None:
            layers = self.model.layers()
            self.bars.set_layer(layers[row].name if row < len(layers) else "", {}, None, None)
            return
        single = update.answers.single_array
        self.bars.set_layer(f"{answer.name}: best GOP/s per design", answer.designs, answer.best_design,
                            single.design if single else None)

    def choose_layer(self, row: int) -> None:
        """A layer clicked: its sizes and best design in the rest of the window."""
        self.table.selectRow(row)
        self._show_bars()
        sizes, design, params = self.model.chosen(row)
        self.layerChosen.emit(sizes, design or "", params)
