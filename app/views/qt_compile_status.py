"""QtCompileStatus(session): the kernel's compile state -> one line for the status bar, true at every
moment: "compiling NAME..." from the moment a compilation is asked for, then "NAME: N legal systolic
arrays" or "does not compile: REASON" (saying when the designs shown are the previous kernel's).

It is a normal status-bar widget (QStatusBar.addWidget): a passing message (showMessage with a
timeout: a search's end, a save) hides it for a while, and it is shown again, still true, when
that message goes. It ignores its text's width (a long reason must not widen the window) and
carries the whole text as its tooltip."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QSizePolicy

from app.models.kernel_session import KernelSession


class QtCompileStatus(QLabel):
    def __init__(self, session: KernelSession, designs_shown: Callable[[], bool] = lambda: False, parent=None):
        """`designs_shown()`: designs of an earlier compile are on screen (a failed compile keeps them)."""
        super().__init__(parent)
        self.session, self.designs_shown = session, designs_shown
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        session.compileStarted.connect(self._started)
        session.compiled.connect(self._compiled)
        if session.compiling:
            self._started()
        elif session.space is not None or session.error:
            self._compiled()

    def _show(self, text: str) -> None:
        self.setText(text)
        self.setToolTip(text)

    def _started(self) -> None:
        self._show(f"compiling {self.session.name}...")

    def _compiled(self) -> None:
        s = self.session
        if s.space is not None:
            self._show(f"{s.space.kernel.name}: {len(s.space.designs)} legal systolic arrays")
            return
        reason = " ".join((s.error or "no kernel").split())
        kept = " (the designs shown are the previous kernel's)" if self.designs_shown() else ""
        self._show(f"does not compile: {reason}{kept}")
