"""QtVerify(verification): the Verify tab. For the configuration shown, the cycle-level simulator and
the C simulation of the exported code, each with the problem it runs (reduced by default, the full
problem on request), what that is and how long it should take (said before starting), a Start
button, a progress bar with the current step and the elapsed / estimated time while it runs, a
Cancel button (kills the child process) and the outcome or the one-line error in place."""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.models.verification import NAMES, Verification
from app.views import theme

TICK_MS = 250
SIZES = ("reduced problem (a few tiles per loop)", "full problem")


class VerifyRow(QGroupBox):
    """One kind of verification: problem choice, plan, Start / Cancel, progress, outcome."""

    def __init__(self, verification: Verification, kind: str, parent=None):
        super().__init__({"simulate": "Cycle-level simulator (engine/sim)",
                          "csim": "C simulation of the exported code (g++)"}[kind], parent)
        self.verification, self.kind = verification, kind
        self.size = QComboBox()
        self.size.addItems(SIZES)
        self.size.setToolTip("reduced: each loop shrunk to a few of its tiles, the array and the tuning values "
                             "unchanged, so it finishes in seconds; full: the kernel's own sizes")
        self.start_button = QPushButton("Simulate" if kind == "simulate" else "Run C simulation")
        self.start_button.setObjectName("primary")
        self.cancel_button = QPushButton("Cancel")
        self.plan = QLabel()
        self.plan.setWordWrap(True)
        self.plan.setObjectName("muted")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.step = QLabel()
        self.step.setWordWrap(True)
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.size, 1)
        row.addWidget(self.start_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        for widget in (self.plan, self.progress, self.step, self.outcome):
            layout.addWidget(widget)
        self.size.currentIndexChanged.connect(self.refresh)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(verification.cancel)

    @property
    def full(self) -> bool:
        return self.size.currentIndex() == 1

    def start(self) -> bool:
        return self.verification.start(self.kind, self.full)

    def refresh(self) -> None:
        v = self.verification
        mine = v.running is not None and v.running.kind == self.kind
        plan = v.running if mine else v.plan(self.kind, self.full)
        self.plan.setText(plan.text() if plan else "select a design with a valid configuration")
        self.start_button.setEnabled(v.running is None and plan is not None)
        self.size.setEnabled(v.running is None)
        self.cancel_button.setEnabled(mine)
        self.progress.setVisible(mine)
        if mine:
            self.progress.setValue(int(v.fraction() * 1000))
            self.progress.setFormat(f"{v.elapsed():,.0f} s of about {plan.seconds:,.0f} s")
            self.step.setText(v.step)
        else:
            self.step.setText("")
        error = v.error.get(self.kind, "")
        self.outcome.setText(f"<span style='color:{theme.ERROR}'>{error}</span>" if error else
                             v.outcome.get(self.kind, ""))


class QtVerify(QWidget):
    def __init__(self, verification: Verification, parent=None):
        super().__init__(parent)
        self.verification = verification
        self.rows = {kind: VerifyRow(verification, kind) for kind in NAMES}
        note = QLabel("Both run in a child process of their own (the window stays responsive; Cancel kills it). "
                      "The reduced problem keeps the design, its array and its tuning values and shrinks each "
                      "loop to a few of its tiles; the full problem stays available with its estimate.")
        note.setWordWrap(True)
        note.setObjectName("muted")
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        for row in self.rows.values():
            layout.addWidget(row)
        layout.addStretch(1)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self.refresh)
        verification.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        for row in self.rows.values():
            row.refresh()
        running = self.verification.running is not None
        if running and not self._tick.isActive():
            self._tick.start()
        elif not running and self._tick.isActive():
            self._tick.stop()
