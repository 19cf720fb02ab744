"""A search child does not outlive the window's process: a helper process starts the child the way
the window does, the helper is killed with SIGKILL (no cleanup runs), and the child must be gone
within a few seconds. Once with the real search child (the kernel's death signal and the watching
thread both armed), once with the watching thread alone (the portable mechanism)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and /proc are POSIX")

GONE_WITHIN = 5.0

SEARCH_HELPER = """
    import sys, time
    from pathlib import Path
    from app.workers.model_pool import KernelSource
    from app.workers.search_process import SearchRequest, start_search_host
    from engine.compiler.design_space import compile_kernel

    if __name__ == "__main__":
        path = Path(sys.argv[1])
        space = compile_kernel(path)
        source = KernelSource(path.read_text(), path.name, str(path.parent), {}, dict(space.kernel.sizes), "u250")
        host = start_search_host()
        host.requests.put(SearchRequest(source, "mm", "hybrid", 600.0, (space.designs[0].id,)))
        while True:  # until the child is searching
            kind, _ = host.replies.get(timeout=300)
            if kind in ("progress", "error"):
                break
        print(host.process.pid, kind, flush=True)
        time.sleep(600)
"""

THREAD_HELPER = """
    import multiprocessing, os, time
    from app.workers.parent_watchdog import watch_parent

    def sleeper(parent_pid):
        watch_parent(parent_pid, kernel_signal=False)
        print("watching", flush=True)
        time.sleep(600)

    if __name__ == "__main__":
        child = multiprocessing.get_context("spawn").Process(target=sleeper, args=(os.getpid(),))
        child.start()
        print(child.pid, "started", flush=True)
        time.sleep(600)
"""


def _gone(pid: int) -> bool:
    """No such process, or a zombie nobody reaped yet (it has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return state in ("Z", "X")


def _kill_helper_and_wait_for_the_child(tmp_path, script: str, *args: str, wait_for: str = "") -> float:
    """Run the helper, read its child's pid (and then a line with `wait_for`, the child's own
    output), SIGKILL the helper; returns the seconds until the child was gone."""
    helper_file = tmp_path / "helper.py"
    helper_file.write_text(textwrap.dedent(script))
    helper = subprocess.Popen([sys.executable, str(helper_file), *args], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    child = None
    try:
        line = helper.stdout.readline().split()
        assert line, "the helper did not start its child"
        child = int(line[0])
        while wait_for and wait_for not in line:
            line = helper.stdout.readline()
            assert line, f"no '{wait_for}' from the child"
        assert not _gone(child)
        killed = time.perf_counter()
        helper.send_signal(signal.SIGKILL)
        helper.wait(10)
        while not _gone(child) and time.perf_counter() - killed < GONE_WITHIN + 5:
            time.sleep(0.05)
        return time.perf_counter() - killed
    finally:
        helper.kill()
        helper.wait(10)
        if child is not None and not _gone(child):
            os.kill(child, signal.SIGKILL)


def test_the_search_child_ends_when_the_window_process_is_killed(tmp_path, small_mm):
    took = _kill_helper_and_wait_for_the_child(tmp_path, SEARCH_HELPER, str(small_mm))
    assert took < GONE_WITHIN, f"the search child outlived its parent by {took:.1f} s"


def test_the_watching_thread_alone_ends_an_orphaned_child(tmp_path):
    took = _kill_helper_and_wait_for_the_child(tmp_path, THREAD_HELPER, wait_for="watching")
    assert took < GONE_WITHIN, f"the child outlived its parent by {took:.1f} s"
