"""KernelSession: the kernel being edited (text, size overrides, data type, device) -> a compiled
DesignSpace or an error with the editor line it points at. Evented: views listen to `compiled`.

The editor's text is compiled from a work copy in a private folder (headers next to the original
are copied beside it), so unsaved edits compile and error locations point at the edited lines.
With `asynchronous` (the window sets it) the compilation runs in a TaskWorker, off the GUI thread
(CNN takes about a second): `compiling` is True until `compiled` is emitted; a compile asked for
meanwhile runs after it, with the text and sizes of that moment.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.workers.model_pool import KernelSource
from app.workers.task_worker import TaskWorker
from engine.compiler.design_space import DesignSpace, compile_kernel
from engine.errors import EngineError
from engine.resources import DEFAULT_KERNEL

DATA_TYPES = ("float", "int16_t", "int8_t")
TYPE_MACRO = "DATA_T"
DEVICES = ("u250",)


class KernelSession(QObject):
    compiled = Signal()  # space, error and error_line have changed
    sourceChanged = Signal()  # a new kernel was opened (text, path, sizes reset)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.path: Path | None = None
        self.text = ""
        self.overrides: dict[str, int] = {}
        self.data_type: str | None = None
        self.device = DEVICES[0]
        self.space: DesignSpace | None = None
        self.error: str = ""
        self.error_line: int | None = None
        self._last_sizes: dict[str, int] = {}
        self.compiled_text = ""  # the text `space` was compiled from (the editor may have moved on)
        self.compiled_defines: dict[str, str] = {}
        self.asynchronous = False
        self.compiling = False
        self._worker: TaskWorker | None = None
        self._again = False  # compile again when the running compilation is done
        self._folder = tempfile.TemporaryDirectory(prefix="systolic-studio-")

    @property
    def name(self) -> str:
        return self.path.stem if self.path else "kernel"

    @property
    def work_file(self) -> Path:
        return Path(self._folder.name) / (self.path.name if self.path else "kernel.c")

    @property
    def has_type_macro(self) -> bool:
        return re.search(rf"#\s*define\s+{TYPE_MACRO}\b", self.text) is not None

    def open(self, path: str | Path = DEFAULT_KERNEL, *, text: str | None = None, overrides=None,
             data_type: str | None = None, device: str | None = None) -> None:
        """Open a kernel file (or `text` under that name); raises EngineError if it cannot be read."""
        path = Path(path)
        if text is None:
            try:
                text = path.read_text()
            except (OSError, UnicodeDecodeError) as exc:
                raise EngineError(f"cannot read {path}: {exc.strerror if isinstance(exc, OSError) else exc}") from None
        self.path, self.text = path, text
        self.overrides = {k: int(v) for k, v in (overrides or {}).items()}
        self.data_type = data_type
        self.device = device or self.device
        self._last_sizes = {}
        for header in path.parent.glob("*.h") if path.parent.is_dir() else ():
            shutil.copy(header, Path(self._folder.name) / header.name)
        self.sourceChanged.emit()
        self.compile()

    def defines(self) -> dict[str, str]:
        defines = {k: str(v) for k, v in self.overrides.items()}
        if self.data_type and self.has_type_macro:
            defines[TYPE_MACRO] = self.data_type
        return defines

    def set_text(self, text: str) -> None:
        self.text = text

    def set_size(self, name: str, value: int) -> None:
        self.overrides[name] = int(value)
        self.compile()

    def set_sizes(self, overrides: dict[str, int]) -> None:
        """Replace every size override at once (a named preset), then compile once."""
        self.overrides = {k: int(v) for k, v in overrides.items()}
        self.compile()

    def set_data_type(self, data_type: str) -> None:
        self.data_type = data_type
        self.compile()

    def set_device(self, device: str) -> None:
        self.device = device
        self.compiled.emit()

    def compile(self) -> None:
        if self._worker is not None:
            self._again = True
            return
        text, defines, path = self.text, self.defines(), self.work_file
        path.write_text(text)
        if not self.asynchronous:
            self._apply(_compile(path, text, defines))
            return
        self.compiling = True
        worker = self._worker = TaskWorker(lambda: _compile(path, text, defines), self, background=True)
        worker.succeeded.connect(self._apply)
        worker.failed.connect(lambda message: self._apply(Compiled(text, defines, None, message, None)))
        worker.finished.connect(self._worker_done)
        worker.start()

    def _worker_done(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.wait()
            worker.deleteLater()
        if self._again:
            self._again = False
            self.compile()
        else:
            self.compiling = False

    def wait(self, timeout_ms: int = 60000) -> None:
        """Block until a running compilation is done (closing the window, tests)."""
        if self._worker is not None:
            self._worker.wait(timeout_ms)

    def _apply(self, result: "Compiled") -> None:
        self.space, self.error, self.error_line = result.space, result.error, result.error_line
        if result.space is not None:
            self.compiled_text, self.compiled_defines = result.text, result.defines
            self._last_sizes = dict(result.space.kernel.sizes)
        self.compiled.emit()

    def source(self) -> KernelSource | None:
        """The compiled kernel as the model pool and the search process take it (None if none)."""
        if self.space is None:
            return None
        return KernelSource(self.compiled_text, self.work_file.name, self._folder.name, dict(self.compiled_defines),
                            dict(self.space.kernel.sizes), self.device)

    def sizes(self) -> dict[str, int]:
        """The kernel's sizes as compiled (overrides applied), or the overrides alone."""
        return dict(self.space.kernel.sizes) if self.space else {**self._last_sizes, **self.overrides}


@dataclass(frozen=True)
class Compiled:
    text: str
    defines: dict
    space: DesignSpace | None
    error: str
    error_line: int | None


def _compile(path: Path, text: str, defines: dict) -> Compiled:
    """Compile the work copy: a DesignSpace, or the error with the editor line it points at."""
    try:
        return Compiled(text, defines, compile_kernel(path, defines=defines), "", None)
    except EngineError as exc:
        location = exc.location
        line = location.line if location and location.file and Path(location.file).name == path.name else None
        return Compiled(text, defines, None, (f"line {line}: " if line else "") + exc.reason, line)
    except Exception as exc:  # noqa: BLE001 (a kernel the front end trips on must not crash the window)
        return Compiled(text, defines, None, f"the compiler failed on this kernel: {type(exc).__name__}: {exc}", None)
