"""A design descriptor and a configuration -> the cycle-level simulator's (engine.sim) busy cycles per
module, run in a background process (one, spawned on first use, at a lower priority, ending with the
window): the simulator's token kernel is compiled code that holds the GIL for the whole run, which in
the window's process would freeze the event loop for as long as the simulation takes.

`SimRunner.run(design_id, descriptor, values)` returns at once; `simulated(design_id, values, cycles,
module_busy, bottleneck)` or `failed(design_id, values, one-line reason)` follow as queued signals."""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor

from PySide6.QtCore import QObject, Signal

from app.workers.parent_watchdog import watch_parent

SIM_NICENESS = 10
SIM_MAX_CYCLES = 200_000_000  # a configuration that needs more is reported, not waited for


def simulate_modules(descriptor: dict, values: dict) -> tuple[int, dict[str, float], str]:
    """In the simulation process: (total cycles, module -> busy cycles of its busiest instance, bottleneck)."""
    from engine.sim import simulate  # imported in the process only: the window never loads it

    result = simulate(descriptor, values, max_cycles=SIM_MAX_CYCLES)
    return result.cycles, {name: float(m.busy) for name, m in result.modules.items()}, result.bottleneck


def _start(parent_pid: int) -> None:
    watch_parent(parent_pid)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + SIM_NICENESS)
    except (AttributeError, OSError):
        pass


class SimRunner(QObject):
    simulated = Signal(str, dict, int, dict, str)  # design, values, cycles, module -> busy cycles, bottleneck
    failed = Signal(str, dict, str)  # design, values, reason
    _done = Signal(str, dict, object)  # from the executor's thread: design, values, finished future

    def __init__(self, parent=None):
        super().__init__(parent)
        self._executor: ProcessPoolExecutor | None = None
        self.running: tuple[str, dict] | None = None
        self._done.connect(self._on_done)

    def run(self, design_id: str, descriptor: dict, values: dict) -> bool:
        """Start a simulation; False if one is running already."""
        if self.running is not None:
            return False
        if self._executor is None:
            self._executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start, initargs=(os.getpid(),))
        self.running = (design_id, dict(values))
        future = self._executor.submit(simulate_modules, descriptor, dict(values))
        future.add_done_callback(lambda f, d=design_id, v=dict(values): self._done.emit(d, v, f))
        return True

    def _on_done(self, design_id: str, values: dict, future: Future) -> None:
        self.running = None
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.failed.emit(design_id, values, str(error).splitlines()[0] if str(error) else type(error).__name__)
            return
        cycles, busy, bottleneck = future.result()
        self.simulated.emit(design_id, values, int(cycles), busy, bottleneck)

    def shutdown(self) -> None:
        if self._executor is not None:
            for process in list(getattr(self._executor, "_processes", {}).values()):
                process.kill()  # a long simulation is not waited for
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self.running = None
