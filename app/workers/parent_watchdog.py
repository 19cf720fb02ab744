"""watch_parent(pid): a child process ends itself when the process that started it is gone, so a
search child does not outlive a window that crashed or was killed (SIGKILL runs no cleanup).

Two mechanisms, either one suffices:
- on Linux, prctl(PR_SET_PDEATHSIG): the kernel sends SIGTERM when the parent thread that started
  the child exits, even while the child holds the GIL in a long native call;
- everywhere, a daemon thread that waits on multiprocessing's parent sentinel (a pipe the parent
  holds open) and checks os.getppid(), then exits with ORPHANED_EXIT_CODE.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading

ORPHANED_EXIT_CODE = 3
POLL_SECONDS = 0.5
PR_SET_PDEATHSIG = 1


def watch_parent(parent_pid: int, *, kernel_signal: bool = True) -> threading.Thread:
    """Start watching; the returned daemon thread never returns while the parent lives.
    `kernel_signal=False` leaves the watching to the thread alone."""
    if kernel_signal:
        _ask_kernel_for_a_signal()
    if os.getppid() != parent_pid:  # the parent died before the signal was asked for
        os._exit(ORPHANED_EXIT_CODE)
    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else None
    thread = threading.Thread(target=_watch, args=(parent_pid, sentinel), daemon=True, name="parent-watchdog")
    thread.start()
    return thread


def _watch(parent_pid: int, sentinel) -> None:
    while True:
        if sentinel is not None:
            gone = bool(multiprocessing.connection.wait([sentinel], timeout=POLL_SECONDS))
        else:
            threading.Event().wait(POLL_SECONDS)
            gone = False
        if gone or os.getppid() != parent_pid:
            os._exit(ORPHANED_EXIT_CODE)


def _ask_kernel_for_a_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # no usable libc: the thread alone watches
        pass
