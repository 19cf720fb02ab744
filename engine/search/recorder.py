"""A run being searched -> its rows in the run database, written as it goes from a writer thread
(`systolic search` and the window's search both store through it): `put(position, DesignResult)`
with each design's result so far or final, `finish(status)` at the end. Storing never stops or slows
the search: a failure is kept in `error` and reported by the caller after the results."""
from __future__ import annotations

import threading

from engine.errors import EngineError
from engine.search.progress import DesignResult
from engine.search.store import RunStore

LOCKED_RETRY = 1.0  # seconds before a checkpoint another writer's lock refused is tried again


class RunRecorder:
    """Stores a run as it goes, from a writer thread, so the search never waits for the disk: the
    latest result of each design waits in `pending` (a newer one replaces it) until the thread
    writes it. A checkpoint refused because another writer holds the database's lock is tried again
    later; any other failure does not stop the search either: the error is kept, nothing more is
    written, and it is reported after the results are printed."""

    def __init__(self, store: RunStore, run_id: int):
        self.store, self.run_id, self.error = store, run_id, None
        self._pending: dict[int, DesignResult] = {}
        self._wake = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._write_pending, name="run-store", daemon=True)
        self._thread.start()

    def put(self, position: int, result: DesignResult) -> None:
        with self._wake:
            self._pending[position] = result
            self._wake.notify()

    def finish(self, status: str) -> None:
        """Write what is pending, then the run's final status."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join()
        self._write(self.store.finish, self.run_id, status)

    def _write_pending(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closing:
                    self._wake.wait()
                if not self._pending or self.error is not None:
                    return
                batch, self._pending = self._pending, {}
                closing = self._closing
            for position, result in sorted(batch.items()):
                if not self._write(self.store.put_design, self.run_id, position, result, retry=not closing):
                    with self._wake:  # another writer held the lock: try again, unless newer results came
                        self._pending.setdefault(position, result)
                        self._wake.wait(LOCKED_RETRY)

    def _write(self, write, *args, retry: bool = False) -> bool:
        """True when written (or when storing has already failed); False for a lock worth retrying."""
        if self.error is not None:
            return True
        try:
            write(*args)
        except EngineError as exc:
            if retry and "database is locked" in str(exc):
                return False
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - a failed write must not end the search; it is reported
            self.error = EngineError(f"{type(exc).__name__}: {exc}")
        return True
