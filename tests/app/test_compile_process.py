"""The compile process (app/workers/compile_process.py): the kernel compiled in the child comes back
as the same DesignSpace an in-process compile makes, a broken kernel as its error and line, the
child ends at shutdown; a KernelSession given the host compiles through it."""
from __future__ import annotations

import weakref

import pytest

from app.models.kernel_session import KernelSession
from app.workers.compile_process import CompileHost, compile_work_copy

DEFINES = {"I": "32", "J": "32", "K": "32"}


@pytest.fixture(scope="module")
def host():
    host = CompileHost()
    yield host
    host.shutdown()


def test_the_child_compiles_the_same_space(host, bundled, tmp_path):
    path = tmp_path / "mm.c"
    path.write_text(bundled("mm").read_text())
    here = compile_work_copy(path, path.read_text(), DEFINES)
    there = host.compile(path, path.read_text(), DEFINES)
    assert not host.broken and there.error == "" and there.space is not None
    assert there.space.designs == here.space.designs and there.space.kernel == here.space.kernel
    assert [str(d) for d in there.space.dependences.all()] == [str(d) for d in here.space.dependences.all()]


def test_a_broken_kernel_comes_back_as_its_error_and_line(host, bundled, tmp_path):
    path = tmp_path / "mm.c"
    lines = bundled("mm").read_text().splitlines()
    target = next(k for k, line in enumerate(lines) if "C[i][j] +=" in line)
    lines[target] = lines[target].replace("C[i][j] +=", "C[i][j] += undefined_name +")
    path.write_text("\n".join(lines) + "\n")
    result = host.compile(path, path.read_text(), DEFINES)
    assert result.space is None and result.error_line == target + 1 and f"line {target + 1}" in result.error
    assert not host.broken


def test_a_session_with_the_host_compiles_in_the_child(bundled, qtbot):
    session = KernelSession()
    session.asynchronous = True
    session.host = CompileHost()
    try:
        session.open(bundled("mm"), overrides={"I": 32, "J": 32, "K": 32})
        qtbot.waitUntil(lambda s=session: not s.compiling, timeout=120000)
        assert session.space is not None and session.error == "" and not session.host.broken
        assert session.space.kernel.sizes["I"] == 32
    finally:
        children = list((session.host._executor._processes or {}).values())
        session.shutdown()
    assert session.host is None and children
    # the executor's thread may reap the child first: is_alive() follows once it has
    qtbot.waitUntil(lambda: not any(child.is_alive() for child in children), timeout=10000)
    # freed here, by its last reference (its worker holds none: see tests/app/test_session_lifetime.py)
    freed = weakref.ref(session)
    del session
    assert freed() is None
