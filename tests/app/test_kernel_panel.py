"""The kernel editor: every bundled kernel opens and compiles; sizes and data type recompile; a
broken kernel shows its error in place (marker on the line, message under the editor)."""
from __future__ import annotations

import pytest

from app.models.kernel_session import KernelSession
from app.views.qt_kernel_panel import QtKernelPanel
from engine.resources import bundled_kernels


@pytest.fixture
def panel(qtbot):
    session = KernelSession()
    view = QtKernelPanel(session)
    qtbot.addWidget(view)
    return view


@pytest.mark.parametrize("name", sorted(bundled_kernels()))
def test_each_bundled_kernel_opens_and_compiles(panel, name):
    panel.openRequested.connect(panel.session.open)
    index = panel.picker.findText(name)
    panel.picker.setCurrentIndex(index)
    panel.picker.activated.emit(index)
    session = panel.session
    assert session.space is not None and session.error == ""
    assert session.space.kernel.name == name
    assert panel.editor.toPlainText() == bundled_kernels()[name].read_text()
    table = {panel.sizes.item(r, 0).text(): int(panel.sizes.item(r, 1).text()) for r in range(panel.sizes.rowCount())}
    assert table == session.space.kernel.sizes
    assert panel.editor.error_line is None and panel.message.text() == ""


def test_sizes_and_data_type_recompile(panel, bundled):
    panel.session.open(bundled("mm"))
    row = next(r for r in range(panel.sizes.rowCount()) if panel.sizes.item(r, 0).text() == "I")
    panel.sizes.item(row, 1).setText("48")
    assert panel.session.space.kernel.sizes["I"] == 48
    assert dict(zip(panel.session.space.designs[0].band_loops, panel.session.space.designs[0].problem_size))["i"] == 48
    panel.data_type.setCurrentText("int8_t")
    panel.data_type.activated.emit(panel.data_type.currentIndex())
    assert {a.dtype for a in panel.session.space.kernel.arrays.values()} == {"int8"}
    panel.sizes.item(row, 1).setText("many")  # refused in place, the last good compile stays
    assert "not a positive whole number" in panel.message.text()
    assert panel.session.space.kernel.sizes["I"] == 48


def test_a_broken_kernel_marks_the_line_and_shows_the_message(panel, bundled):
    panel.session.open(bundled("mm"))
    lines = panel.editor.toPlainText().split("\n")
    target = next(n for n, line in enumerate(lines) if "C[i][j] += A[i][k] * B[k][j];" in line)
    lines[target] = lines[target].replace("A[i][k] * B[k][j]", "expf(A[i][k])")
    panel.editor.setPlainText("\n".join(lines))
    panel.compile_button.click()
    session = panel.session
    assert session.space is None
    assert session.error_line == target + 1 == panel.editor.error_line
    assert "expf" in panel.message.text() and f"line {target + 1}" in panel.message.text()
    assert len(panel.editor.extraSelections()) == 1
    lines[target] = lines[target].replace("expf(A[i][k])", "A[i][k] * B[k][j]")
    panel.editor.setPlainText("\n".join(lines))
    panel.compile_button.click()
    assert session.space is not None and panel.editor.error_line is None and panel.message.text() == ""


@pytest.mark.parametrize("text", ["", "int main(void) { return 0; }\n", "#pragma scop\nfor (;;) {}\n",
                                  "\x00\x01garbage {{{ ]]]", "#include \"missing.h\"\n"])
def test_nothing_typed_crashes_the_compile(panel, bundled, text):
    panel.session.open(bundled("mm"))
    panel.editor.setPlainText(text)
    panel.compile_button.click()
    assert panel.session.space is None and panel.message.text()


def test_the_editor_scrolls_to_the_marked_error_line(panel, bundled, qtbot):
    panel.session.open(bundled("mm"))
    panel.resize(500, 400)
    panel.show()
    qtbot.waitExposed(panel)
    lines = panel.editor.toPlainText().split("\n")
    target = next(n for n, line in enumerate(lines) if "C[i][j] +=" in line)
    lines[target] = lines[target].replace("A[i][k] * B[k][j]", "expf(A[i][k])")
    padded = lines[:target] + ["// a long comment block"] * 300 + lines[target:]  # the error far below the top
    panel.editor.setPlainText("\n".join(padded))
    panel.editor.verticalScrollBar().setValue(0)
    assert target + 301 not in panel.editor.visible_lines()
    panel.compile_button.click()
    assert panel.editor.error_line == target + 301
    assert target + 301 in panel.editor.visible_lines() and panel.editor.visible_lines().start > 1


def test_the_picker_names_the_users_file_not_a_bundled_kernel(panel, tiny_mm, bundled):
    panel.session.open(tiny_mm)
    assert panel.picker.currentIndex() == -1 and panel.picker.placeholderText() == "tiny.c"
    panel.session.open(bundled("mm"))
    assert panel.picker.currentText() == "mm"
