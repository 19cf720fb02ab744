"""TaskWorker(fn): a QThread that runs one engine call (an export, a C simulation) and reports
`succeeded(result)` or `failed(one-line message)` as queued signals; engine errors keep their text,
anything else becomes one line too, never a traceback."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QThread, Signal

from engine.errors import EngineError


class TaskWorker(QThread):
    succeeded = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[], object], parent=None):
        super().__init__(parent)
        self.fn = fn

    def run(self) -> None:
        try:
            result = self.fn()
        except EngineError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 (shown in the dialog)
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.succeeded.emit(result)
