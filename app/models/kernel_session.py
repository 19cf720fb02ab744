"""KernelSession: the kernel being edited (text, size overrides, data type, device, AutoSA's
--simd-touch-space) -> a compiled
DesignSpace or an error with the editor line it points at. Evented: views listen to `compiled`.

The editor's text is compiled from a work copy in a private folder (headers next to the original
are copied beside it), so unsaved edits compile and error locations point at the edited lines.
With `asynchronous` (the window sets it) the compilation runs in a TaskWorker, off the GUI thread
(CNN takes about a second): `compiling` is True until `compiled` is emitted; a compile asked for
meanwhile runs after it, with the text and sizes of that moment. `compileStarted` is emitted
whenever a compilation is asked for (one that waits too), `compiled` whenever one is done. With a
`host` (the window gives one after its first paint) the worker has the compile process
(app/workers/compile_process.py) compile and unpickles its answer: islpy's long calls then hold no
GIL of the window's process.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, Signal

from app.workers.compile_process import CompileHost, Compiled, compile_work_copy
from app.workers.kernel_source import KernelSource
from app.workers.task_worker import TaskWorker
from engine.errors import EngineError
from engine.models.device import load_device
from engine.resources import DEFAULT_KERNEL

if TYPE_CHECKING:  # the compiler (islpy, sympy) is imported by the compilation, off the GUI thread
    from engine.compiler.design_space import DesignSpace

DATA_TYPES = ("float", "int16_t", "int8_t")
TYPE_MACRO = "DATA_T"
DEVICES = ("u250",)


KEEP_CLOCK = object()  # KernelSession.open: the clock chosen stays

class KernelSession(QObject):
    compiled = Signal()  # space, error and error_line have changed
    compileStarted = Signal()  # a compilation was asked for: `space` and `error` are about to change
    sourceChanged = Signal()  # a new kernel was opened (text, path, sizes reset)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.path: Path | None = None
        self.text = ""
        self.overrides: dict[str, int] = {}
        self.data_type: str | None = None
        self.device = DEVICES[0]
        self.clock_mhz: float | None = None  # the device bar's kernel clock (None: the device file's)
        self.simd_touch_space = False  # AutoSA's --simd-touch-space: also SIMD on a parallel space loop
        self.compiled_simd_touch_space = False  # the flag `space` was compiled with
        self.space: DesignSpace | None = None
        self.error: str = ""
        self.error_line: int | None = None
        self._last_sizes: dict[str, int] = {}
        self.compiled_text = ""  # the text `space` was compiled from (the editor may have moved on)
        self.compiled_defines: dict[str, str] = {}
        self.asynchronous = False
        self.compiling = False
        self._worker: TaskWorker | None = None
        self._compiling_source: tuple[str, dict[str, str], bool] = ("", {}, False)  # the running compilation's
        # text, defines and --simd-touch-space
        self._again = False  # compile again when the running compilation is done
        self._held = False  # compilations wait for release() (the window's first paint)
        self.host: CompileHost | None = None  # the compile process, once the window has one
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
             data_type: str | None = None, device: str | None = None, clock_mhz=KEEP_CLOCK,
             simd_touch_space: bool | None = None) -> None:
        """Open a kernel file (or `text` under that name); raises EngineError, with nothing changed,
        if it cannot be read, the device is unknown or refuses `clock_mhz` (MHz, None: the device's own;
        by default the clock stays; `simd_touch_space` likewise, None: it stays). Headers beside it
        are copied to the work folder; a `.h` that is a folder, a dangling symlink or unreadable is
        skipped (the compiler names it if the kernel includes it)."""
        path = Path(path)
        if text is None:
            if path.is_dir():
                raise EngineError(f"cannot read {path}: it is a folder, not a kernel file")
            try:
                text = path.read_text()
            except OSError as exc:
                raise EngineError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
            except UnicodeDecodeError as exc:
                raise EngineError(f"cannot read {path}: not UTF-8 text at byte {exc.start}") from None
        clock = self.clock_mhz if clock_mhz is KEEP_CLOCK else clock_mhz
        chosen = load_device(device or self.device)  # an unknown device or a bad device file: EngineError
        if clock_mhz is not KEEP_CLOCK and clock_mhz is not None:
            load_device(device or self.device, clock_mhz=clock_mhz)  # a clock the device refuses: likewise
        self._copy_headers(path.parent)
        self.path, self.text = path, text
        self.overrides = {k: int(v) for k, v in (overrides or {}).items()}
        self.data_type = data_type
        self.device = device or self.device
        if simd_touch_space is not None:
            self.simd_touch_space = bool(simd_touch_space)
        self.clock_mhz = None if clock is None or clock > chosen.clock_mhz_max or clock == chosen.clock_mhz else clock
        self._last_sizes = {}
        self.sourceChanged.emit()
        self.compile()

    def _copy_headers(self, folder: Path) -> None:
        try:
            headers = [h for h in folder.glob("*.h") if h.is_file()] if folder.is_dir() else []
        except OSError:
            return
        for header in headers:
            try:
                shutil.copy(header, Path(self._folder.name) / header.name)
            except OSError:
                continue

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

    def set_simd_touch_space(self, on: bool) -> None:
        """AutoSA's --simd-touch-space (compile_kernel's `simd_touch_space`): the kernel is compiled again
        with (or without) the designs that put SIMD on a parallel space loop (ids `..__simd-<loop>`)."""
        if bool(on) != self.simd_touch_space:
            self.simd_touch_space = bool(on)
            self.compile()

    def set_device(self, device: str) -> None:
        chosen = load_device(device)  # raises EngineError for an unknown device, nothing changed
        self.device = device
        if self.clock_mhz is not None and self.clock_mhz > chosen.clock_mhz_max:
            self.clock_mhz = None  # faster than this device's platform allows: its own clock
        self.compiled.emit()

    def set_clock(self, mhz: float | None) -> None:
        """The kernel clock every throughput figure uses (None: the device file's); raises
        EngineError naming the accepted range, with nothing changed, for a clock the device refuses."""
        load_device(self.device, clock_mhz=mhz)
        if mhz is not None and mhz == load_device(self.device).clock_mhz:
            mhz = None  # the device's own clock: the same source as before any choice
        if mhz != self.clock_mhz:
            self.clock_mhz = mhz
            self.compiled.emit()  # the same designs, every model and figure at the new clock

    def device_clock(self) -> float:
        """The clock in use, MHz."""
        return self.clock_mhz if self.clock_mhz is not None else load_device(self.device).clock_mhz

    def hold(self) -> None:
        """Asynchronous compilations asked for from now on wait (`compiling` is True meanwhile) until
        release(): the window opens its kernel before it is shown, and a compilation started then
        (the compiler's imports, then islpy) would compete with its first paint."""
        self._held = True

    def release(self) -> None:
        """Start the compilation held since hold(), if one was asked for."""
        if self._held:
            self._held = False
            if self._again and self._worker is None:
                self._again = False
                self.compile()

    def compile(self) -> None:
        self.compileStarted.emit()
        if self._worker is not None or (self._held and self.asynchronous):
            self._again = True
            self.compiling = self.compiling or self._held  # held: it counts as started
            return
        text, defines, path, touch = self.text, self.defines(), self.work_file, self.simd_touch_space
        path.write_text(text)
        if not self.asynchronous:
            self._apply(compile_work_copy(path, text, defines, touch))
            return
        self.compiling = True
        self._compiling_source = (text, defines, touch)
        host = self.host
        work = (lambda: host.compile(path, text, defines, touch)) if host is not None else (
            lambda: compile_work_copy(path, text, defines, touch))
        # The worker holds nothing of the session (its work and these slots are no closures over
        # `self`) and is not its child but the application's, deleting itself once its thread has
        # ended: a session freed mid-compile is destroyed at once (its connections go with it) and
        # the thread runs to its end unobserved; a session freed after its compile is never freed
        # from inside its worker's destructor (a closure over `self` held by a connection of a child
        # worker made the worker's deleteLater free the session, which deleted that half-destroyed
        # child again: a segfault in the event loop).
        worker = self._worker = TaskWorker(work, QCoreApplication.instance(), background=True)
        worker.succeeded.connect(self._apply)
        worker.failed.connect(self._compile_failed)
        worker.finished.connect(self._worker_done)
        worker.finished.connect(worker.deleteLater)  # queued after _worker_done, which waits for the thread
        worker.start()

    def _compile_failed(self, message: str) -> None:
        text, defines, touch = self._compiling_source
        self._apply(Compiled(text, defines, None, message, None, touch))

    def _worker_done(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.wait()
        if self._again:
            self._again = False
            self.compile()
        else:
            self.compiling = False

    def wait(self, timeout_ms: int = 60000) -> None:
        """Block until a running compilation is done (closing the window, tests)."""
        if self._worker is not None:
            self._worker.wait(timeout_ms)

    def shutdown(self) -> None:
        """Wait for a running compilation, then end the compile process (the window is closing)."""
        self.wait()
        if self.host is not None:
            self.host.shutdown()
            self.host = None

    def _apply(self, result: Compiled) -> None:
        self.space, self.error, self.error_line = result.space, result.error, result.error_line
        if result.space is not None:
            self.compiled_text, self.compiled_defines = result.text, result.defines
            self.compiled_simd_touch_space = result.simd_touch_space
            self._last_sizes = dict(result.space.kernel.sizes)
        self.compiled.emit()

    def source(self) -> KernelSource | None:
        """The compiled kernel as the model pool and the search process take it (None if none)."""
        if self.space is None:
            return None
        return KernelSource(self.compiled_text, self.work_file.name, self._folder.name, dict(self.compiled_defines),
                            dict(self.space.kernel.sizes), self.device, self.clock_mhz, self.compiled_simd_touch_space)

    def sizes(self) -> dict[str, int]:
        """The kernel's sizes as compiled (overrides applied), or the overrides alone."""
        return dict(self.space.kernel.sizes) if self.space else {**self._last_sizes, **self.overrides}
