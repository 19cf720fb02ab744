"""A workload file + the window's kernel -> a network run (engine/network) on a worker thread, and
its answers as a table model that fills as the (layer, design) pairs finish.

NetworkSession loads the workload (one line on bad input), runs `engine.network.runner.execute` on a
QThread (compiling the envelope's designs, starting the local Dask cluster and every search happen
there, never on the GUI thread) and hands the answers read back from the run database after each
finished pair to the GUI thread as queued signals. Stop sets the run's cancel flag: the pairs stored
so far stay in the runs database (`systolic network --resume RUN_ID` continues it).
NetworkLayersModel is the per-layer table: layer, sizes, best design, its GOP/s, and the share of the
layer's peak the chosen single array keeps.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, QThread, Signal

from engine.errors import EngineError
from engine.network.workload import Network, define_name, load_network

if TYPE_CHECKING:  # the answers import the engine's models: used only as a type here
    from engine.network.answers import NetworkAnswers

REDRAW_EVERY = 0.25  # seconds between two reads of the answers while pairs keep finishing


@dataclass(frozen=True)
class NetworkRequest:
    kernel_path: str
    network: Network
    seconds: float | None = 1.0  # per pair
    samples: int | None = None  # per pair (reproducible: see docs/network.md)
    workers: int | None = None  # local cluster size (default: one per core)
    designs: tuple[str, ...] = ()  # only these designs (default: all)
    single_designs: int = 3
    seed: int = 0
    db: str | None = None  # the runs database (default: $SYSTOLIC_STUDIO_DB or the user's)


@dataclass(frozen=True)
class NetworkUpdate:
    """What a view redraws from: progress and the answers from what is stored so far."""

    run_id: int
    done: int
    total: int
    eta: float | None
    answers: NetworkAnswers | None
    best_params: dict[str, dict[str, int]] = field(default_factory=dict)  # layer -> its best pair's params
    status: str = "running"


class _RunThread(QThread):
    updated = Signal(object)  # NetworkUpdate
    failed = Signal(str)

    def __init__(self, request: NetworkRequest, cancel: threading.Event, parent=None):
        super().__init__(parent)
        self.request, self.cancel = request, cancel

    def run(self) -> None:
        try:
            self._run()
        except EngineError as error:
            self.failed.emit(str(error))
        except Exception as error:  # noqa: BLE001 (shown as one line, never a traceback in the window)
            self.failed.emit(f"{type(error).__name__}: {error}")

    def _run(self) -> None:
        from engine.network.designs import network_designs  # noqa: PLC0415 (Dask and the compiler: only when run)
        from engine.network.runner import Cluster, SingleArrayOptions, execute, run_answers
        from engine.network.store import NetworkStore
        r = self.request
        checked = network_designs(r.kernel_path, r.network)
        ids = [checked.space.design(d).id for d in r.designs]
        with NetworkStore(r.db) as store:
            run_id = store.create(
                kernel_path=r.kernel_path, kernel_text=Path(r.kernel_path).read_text(), defines=[],
                network=r.network.name, workload=[{"name": l.name, "tags": list(l.tags), "sizes": l.sizes}
                                                  for l in r.network.layers],
                device="u250", method="hybrid", seconds=r.seconds, samples=r.samples, seed=r.seed,
                options={"network_path": r.network.path, "designs": ids})
            run = store.load(run_id)
            last = {"time": 0.0}

            def update(event, status="running", force=False) -> None:
                now = time.monotonic()
                if not force and now - last["time"] < REDRAW_EVERY and event.done < event.total:
                    return
                last["time"] = now
                answers = run_answers(run, store)
                self.updated.emit(NetworkUpdate(run_id, event.done, event.total, event.eta, answers,
                                                _best_params(store.pairs(run_id), answers), status))

            self.updated.emit(NetworkUpdate(run_id, 0, len(r.network.layers) * len(ids or checked.ids), None, None))
            with Cluster(workers=r.workers) as cluster:
                answers, status = execute(run, store, cluster, single=SingleArrayOptions(designs=r.single_designs),
                                          on_event=update, cancel=self.cancel)
            store.set_status(run_id, status)
            pairs = store.pairs(run_id)
            total = len(r.network.layers) * len(ids or checked.ids)
            self.updated.emit(NetworkUpdate(run_id, len(pairs), total, 0.0, answers,
                                            _best_params(pairs, answers), status))


def _best_params(pairs, answers: NetworkAnswers) -> dict[str, dict[str, int]]:
    found = {(p.layer, p.design): p for p in pairs}
    out = {}
    for layer in answers.layers:
        pair = found.get((layer.name, layer.best_design))
        if pair is not None and pair.best is not None:
            out[layer.name] = dict(pair.best.params)
    return out


class NetworkSession(QObject):
    """The network view's state: the workload, the running job and the latest answers."""

    networkChanged = Signal()
    updated = Signal(object)  # NetworkUpdate, on the GUI thread
    stateChanged = Signal()  # started or ended
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.network: Network | None = None
        self.update: NetworkUpdate | None = None
        self.error = ""
        self._thread: _RunThread | None = None
        self._cancel = threading.Event()

    @property
    def running(self) -> bool:
        return self._thread is not None

    def open(self, path: str | Path) -> Network:
        """Read a workload (Odyssey JSON or CSV); raises EngineError with one line on bad input."""
        network = load_network(path)
        self.network, self.update = network, None
        self.networkChanged.emit()
        return network

    def start(self, request: NetworkRequest) -> None:
        if self.running:
            raise EngineError("a network run is already running: stop it first")
        self.error, self.update = "", None
        self._cancel = threading.Event()
        thread = self._thread = _RunThread(request, self._cancel, self)
        thread.updated.connect(self._updated)
        thread.failed.connect(self._failed)
        thread.finished.connect(self._finished)
        thread.start()
        self.stateChanged.emit()

    def stop(self) -> None:
        self._cancel.set()

    def wait(self, timeout_ms: int = 120000) -> None:
        """Stop a running job and block until its thread is done (closing the window, tests)."""
        if self._thread is not None:
            self._cancel.set()
            self._thread.wait(timeout_ms)

    def _updated(self, update: NetworkUpdate) -> None:
        self.update = update
        self.updated.emit(update)

    def _failed(self, message: str) -> None:
        self.error = message
        self.failed.emit(message)

    def _finished(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.wait()
            thread.deleteLater()
        self.stateChanged.emit()


COLUMNS = ("layer", "sizes", "best design", "GOP/s", "single array")


class NetworkLayersModel(QAbstractTableModel):
    """One row per layer of the workload: its sizes, and once searched its best design and
    throughput, and the share of its peak the chosen single array keeps."""

    def __init__(self, session: NetworkSession, parent=None):
        super().__init__(parent)
        self.session = session
        session.networkChanged.connect(self._reset)
        session.updated.connect(self._reset)

    def _reset(self, *_args) -> None:
        self.beginResetModel()
        self.endResetModel()

    def layers(self):
        return self.session.network.layers if self.session.network else ()

    def answer(self, row: int):
        update = self.session.update
        if update is None or update.answers is None or row >= len(update.answers.layers):
            return None
        return update.answers.layers[row]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.layers())

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or role not in (Qt.DisplayRole, Qt.ToolTipRole):
            return None
        layer = self.layers()[index.row()]
        answer = self.answer(index.row())
        column = index.column()
        if column == 0:
            return layer.name
        if column == 1:
            return " ".join(f"{define_name(k)}={v}" for k, v in layer.sizes.items())
        if answer is None:
            return "" if column < 4 else None
        if column == 2:
            return answer.best_design or "-"
        if column == 3:
            return f"{answer.best_gops:.1f}" if answer.best_gops else "-"
        single = self.session.update.answers.single_array
        if single is None or layer.name not in single.layer_share:
            return ""
        return f"{100 * single.layer_share[layer.name]:.0f}%"

    def chosen(self, row: int) -> tuple[dict[str, int], str | None, dict[str, int]]:
        """(the layer's sizes as kernel defines, its best design or None, that pair's parameters)."""
        layer = self.layers()[row]
        sizes = {define_name(k): v for k, v in layer.sizes.items()}
        answer = self.answer(row)
        update = self.session.update
        params = update.best_params.get(layer.name, {}) if update else {}
        return sizes, answer.best_design if answer else None, params
