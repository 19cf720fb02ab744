"""DesignSelection with the selection process (what the window uses): the report, descriptor and
topology of a design come back from the child, the model stays there; editing a value re-evaluates
there; after shutdown a result still on its way is dropped, never delivered to a dead object."""
from __future__ import annotations

import time

import pytest

from app.models.design_selection import DesignSelection
from app.workers.model_pool import KernelSource
from app.workers.selection_process import SelectionHost
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS

DEFINES = {"I": "64", "J": "64", "K": "64"}


@pytest.fixture(scope="module")
def mm():
    return compile_kernel(KERNELS / "mm.c", defines=DEFINES)


@pytest.fixture
def selection(mm, model_cache_folder, qtbot):
    path = KERNELS / "mm.c"
    source = KernelSource(path.read_text(), path.name, str(path.parent), dict(DEFINES), dict(mm.kernel.sizes), "u250")
    selection = DesignSelection()
    selection.cache.folder = model_cache_folder
    selection.use_process(SelectionHost())
    selection.set_space(mm, "u250", source)
    selection.select("i__i-j.k")  # in a thread; the child starts after it
    qtbot.waitUntil(lambda: selection.host.ready, timeout=120000)
    yield selection
    selection.shutdown()


def test_before_the_child_is_ready_a_thread_evaluates(mm, qtbot, settle):
    path = KERNELS / "mm.c"
    source = KernelSource(path.read_text(), path.name, str(path.parent), dict(DEFINES), dict(mm.kernel.sizes), "u250")
    selection = DesignSelection()
    selection.use_process(SelectionHost())
    selection.set_space(mm, "u250", source)
    try:
        assert not selection.host.ready
        selection.select("i-j__i-j.k")
        settle(selection, timeout=120000)
        assert selection.report is not None and selection.model is not None  # evaluated here
        qtbot.waitUntil(lambda: selection.host.ready, timeout=120000)  # the child started after it
    finally:
        selection.shutdown()


def test_a_design_is_evaluated_in_the_child(selection, settle):
    selection.select("i-j__i-j.k")
    settle(selection, timeout=120000)
    assert selection.error == "" and selection.report is not None
    assert selection.topology() is not None and selection.descriptor is not None
    assert selection.model is None  # it stays in the child
    selection.set_value("i_t1", "4")
    settle(selection, timeout=60000)
    assert selection.report["params"]["i_t1"] == 4


def test_a_broken_value_is_an_error_from_the_child(selection, settle):
    selection.select("i-j__i-j.k")
    settle(selection, timeout=120000)
    selection.set_value("i_t1", "100000")
    settle(selection, timeout=60000)
    assert selection.report is None and selection.error


def test_no_result_is_delivered_after_shutdown(selection, qtbot):
    selection.select("i-j__i-j.k")
    future = selection._future
    assert future is not None
    delivered = []
    selection._processed.connect(lambda *_: delivered.append(1))
    selection.shutdown()
    deadline = time.monotonic() + 120
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.05)
    qtbot.wait(100)
    assert not delivered


def test_another_kernel_is_evaluated_in_the_child_too(selection, qtbot, settle):
    defines = {"I": "32", "J": "32", "K": "32"}
    path = KERNELS / "mm.c"
    other = compile_kernel(path, defines=defines)
    source = KernelSource(path.read_text(), path.name, str(path.parent), defines, dict(other.kernel.sizes), "u250")
    selection.set_space(other, "u250", source)
    selection.select("i-j__i-j.k")
    settle(selection, timeout=120000)
    assert selection.report is not None and selection.model is None  # the child compiled the new kernel
    assert selection.report["params"]["i_t1"] <= 32
