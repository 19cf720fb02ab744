"""The window opens on the default kernel and shows its designs; a broken kernel shows the error."""
from __future__ import annotations

from app.__main__ import MainWindow


def test_window_lists_the_default_kernels_designs(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.designs.rowCount() == 18
    assert window.status.text() == "mm: 18 legal systolic arrays"


def test_broken_kernel_shows_the_error_in_place(qtbot, write_kernel):
    path = write_kernel("for (int i = 0; i < 4; i++) A[i] = sqrt(A[i]);\n", prelude="float A[4];\n")
    window = MainWindow(path)
    qtbot.addWidget(window)
    assert window.designs.rowCount() == 0
    assert f"{path}:" in window.status.text() and "sqrt" in window.status.text()
