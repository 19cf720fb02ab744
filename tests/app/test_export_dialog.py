"""The export dialog writes the Vitis project of the selected design and configuration in a worker,
then offers the C simulation and the timed one of the project, run in the Verify tab's child process
(VerifyRunner) with its step shown and a Cancel that kills it; errors (e.g. a non-empty folder) are
shown in the dialog."""
from __future__ import annotations

import json
import os

import pytest

from app.models.design_selection import DesignSelection
from app.views.qt_export_dialog import QtExportDialog
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS


@pytest.fixture
def selection(settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 16, "J": 16, "K": 16}))
    selection.select("i-j__i-j.k", {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 1, "k_t2": 2})
    settle(selection)
    yield selection
    selection.shutdown()


def _export(dialog, qtbot):
    with qtbot.waitSignal(dialog.export_button.clicked):
        dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=300000)
    if "not written yet" in dialog.outcome.text():  # the HLS generator lands in a parallel change
        assert dialog.project_dir is None and "\n" not in dialog.outcome.text()
        pytest.skip(dialog.outcome.text())


def test_export_writes_the_selected_configuration(qtbot, tmp_path, selection):
    out = tmp_path / "project"
    dialog = QtExportDialog(selection, out)
    qtbot.addWidget(dialog)
    _export(dialog, qtbot)
    assert dialog.project_dir == out, dialog.outcome.text()
    design = json.loads((out / "design.json").read_text())
    assert design["values"] == selection.full_values()
    assert design["descriptor"]["design"]["id"] == "i-j__i-j.k"
    assert "wrote" in dialog.outcome.text() and "design.json" in dialog.log.toPlainText()
    # exporting again into the same folder is refused in place unless overwriting is ticked
    _export(dialog, qtbot)
    assert dialog.outcome.text() and "wrote" not in dialog.outcome.text()
    dialog.force.setChecked(True)
    _export(dialog, qtbot)
    assert "wrote" in dialog.outcome.text()


def test_the_c_simulation_runs_on_the_export(qtbot, tmp_path, selection):
    pytest.importorskip("engine.csim", reason="engine.csim is written in a parallel change")
    dialog = QtExportDialog(selection, tmp_path / "project")
    qtbot.addWidget(dialog)
    _export(dialog, qtbot)
    assert dialog.csim_button.isEnabled()
    with qtbot.waitSignal(dialog.runner.phase, timeout=300_000, check_params_cb=lambda index, _text: index >= 1):
        dialog.csim_button.click()
        assert dialog.simulating and dialog.cancel_button.isEnabled() and not dialog.export_button.isEnabled()
    assert "step 2 of 2" in dialog.outcome.text() and "of about" in dialog.outcome.text()  # the estimate shown
    assert dialog.busy.maximum() == 1000  # a progress bar against the estimate
    qtbot.waitUntil(lambda: not dialog.simulating, timeout=300000)
    assert dialog.csim_result is not None and dialog.csim_result.passed, dialog.outcome.text()
    assert "passed" in dialog.outcome.text() and dialog.csim_result.command in dialog.log.toPlainText()
    assert not dialog.cancel_button.isEnabled() and dialog.csim_button.isEnabled()


def test_cancel_kills_the_c_simulation_and_everything_it_started(qtbot, tmp_path, selection):
    pytest.importorskip("engine.csim", reason="engine.csim is written in a parallel change")
    dialog = QtExportDialog(selection, tmp_path / "project")
    qtbot.addWidget(dialog)
    _export(dialog, qtbot)
    with qtbot.waitSignal(dialog.runner.phase, timeout=300_000, check_params_cb=lambda index, _text: index >= 1):
        dialog.timed_button.click()
    pid = dialog.runner._process.pid
    dialog.cancel_button.click()
    assert not dialog.simulating and "cancelled" in dialog.outcome.text()
    assert dialog.timed_result is None and dialog.timed_button.isEnabled() and not dialog.cancel_button.isEnabled()

    def group_gone() -> bool:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        return False

    qtbot.waitUntil(group_gone, timeout=30_000)  # the process group (g++ or the traced program included)


def test_an_invalid_configuration_cannot_be_exported(qtbot, tmp_path, selection, settle):
    selection.set_value("i_t2", "3")
    settle(selection)
    dialog = QtExportDialog(selection, tmp_path / "project")
    qtbot.addWidget(dialog)
    assert not dialog.export_button.isEnabled() and "must divide" in dialog.outcome.text()


def test_the_timed_c_simulation_runs_in_a_child_process_and_colours_the_topology(qtbot, tmp_path, selection):
    """The button builds, runs and replays the export (g++) in the verification's child process, shows
    format_timed's table, and hands the busy cycles to the selection for the topology's heat colours."""
    import app.views.qt_export_dialog as export_dialog

    pytest.importorskip("engine.csim.timed")
    dialog = QtExportDialog(selection, tmp_path / "project")
    qtbot.addWidget(dialog)
    assert not dialog.timed_button.isEnabled()  # nothing exported yet
    _export(dialog, qtbot)
    assert dialog.timed_button.isEnabled()
    dialog.timed_button.click()
    assert not dialog.timed_button.isEnabled() and not dialog.export_button.isEnabled()
    assert dialog.simulating and dialog.runner._process.pid != os.getpid()
    qtbot.waitUntil(lambda: not dialog.simulating, timeout=240000)
    result = dialog.timed_result
    assert result is not None and result.passed, dialog.outcome.text()
    assert f"{result.cycles:,} cycles" in dialog.outcome.text()
    assert dialog.log.toPlainText() == export_dialog.format_timed(result)
    source, cycles = selection.measured_cycles()
    assert source == "timed C simulation"
    assert cycles == export_dialog.timed_module_cycles(result) and "PE" in cycles


def test_a_broken_export_shows_the_timed_simulation_error_in_place(qtbot, tmp_path, selection):
    pytest.importorskip("engine.csim.timed")
    dialog = QtExportDialog(selection, tmp_path / "project")
    qtbot.addWidget(dialog)
    _export(dialog, qtbot)
    (dialog.project_dir / "design.json").unlink()  # no longer an exported project
    dialog.timed_button.click()
    qtbot.waitUntil(lambda: not dialog.simulating, timeout=300000)
    text = dialog.outcome.text()
    assert dialog.timed_result is None and text and "\n" not in text and "Traceback" not in text
    assert "design.json" in text, text
    assert dialog.timed_button.isEnabled()  # the user may fix the folder and try again
    assert selection.measured_cycles() is None


def test_the_dialog_names_what_it_exports_and_takes_platform_clock_and_the_user_s_file(qtbot, tmp_path, selection,
                                                                                      monkeypatch):
    report = selection.report
    dialog = QtExportDialog(selection, tmp_path / "project", kernel_path=tmp_path / "my_kernel.c")
    qtbot.addWidget(dialog)
    text = dialog.summary.text()
    assert "i-j__i-j.k" in text and f"{report['throughput_gops']:,.1f} GOP/s at 300 MHz" in text
    assert "fits the device's budget" in text
    assert dialog.platform.currentText() == "xilinx_u250_gen3x16_xdma_4_1_202210_1" and dialog.platform.count() >= 2
    assert dialog.clock.value() == 300 and dialog.clock.maximum() == selection.device.clock_mhz_max
    dialog.clock.setValue(150)  # the cycles stay, the throughput halves
    assert f"{report['throughput_gops'] / 2:,.1f} GOP/s at 150 MHz" in dialog.summary.text()
    dialog.platform.setCurrentIndex(1)
    platform = dialog.platform.currentText()
    assert not dialog.open_button.isEnabled()
    _export(dialog, qtbot)
    out = tmp_path / "project"
    assert dialog.project_dir == out and dialog.open_button.isEnabled()
    design = json.loads((out / "design.json").read_text())
    assert design["platform"] == platform and design["report"]["device"]["clock_mhz"] == 150
    assert design["descriptor"]["kernel"]["path"] == str(tmp_path / "my_kernel.c")
    assert "FREQ_MHZ ?= 150\n" in (out / "Makefile").read_text()  # v++ --kernel_frequency $(FREQ_MHZ)
    assert str(tmp_path / "my_kernel.c") in (out / "README.md").read_text()
    opened = []
    monkeypatch.setattr("app.views.qt_export_dialog.QDesktopServices.openUrl", lambda url: opened.append(url))
    dialog.open_button.click()
    assert opened and opened[0].toLocalFile() == str(out)
    # the non-empty folder: the checkbox that allows it is named, nothing is written
    _export(dialog, qtbot)
    assert f'tick "{dialog.force.text()}"' in dialog.outcome.text() and "--force" not in dialog.outcome.text()


def test_the_default_folder_is_named_after_kernel_and_design(tmp_path):
    from app.views.qt_export_dialog import default_folder

    assert default_folder(tmp_path, "mm", "i-j__i-j.k") == tmp_path / "mm-i-j__i-j.k"
    assert default_folder("", "my kernel", "d").name == "my_kernel-d"


def test_the_kernel_is_previewed_without_writing_and_an_export_shows_what_it_wrote(qtbot, tmp_path, selection):
    out = tmp_path / "project"
    dialog = QtExportDialog(selection, out)
    qtbot.addWidget(dialog)
    dialog.preview_button.click()
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=300000)
    text = dialog.preview.toPlainText()
    assert "void kernel0(" in text and "#pragma HLS" in text, dialog.outcome.text()
    assert not out.exists() and "nothing was written" in dialog.outcome.text()
    assert dialog.pages.currentWidget() is dialog.preview
    _export(dialog, qtbot)
    assert dialog.preview.toPlainText() == (out / "src" / "kernel_kernel.cpp").read_text() == text
    # the C simulation of what was exported is the full problem: its estimate is said, and where a reduced one runs
    assert "should take about" in dialog.outcome.text() and "Verify tab" in dialog.outcome.text()


def test_a_folder_that_cannot_be_written_is_a_message_in_place_and_the_last_export_stays(qtbot, tmp_path, selection):
    dialog = QtExportDialog(selection, tmp_path / "first")
    qtbot.addWidget(dialog)
    _export(dialog, qtbot)
    assert dialog.project_dir == tmp_path / "first", dialog.outcome.text()
    blocker = tmp_path / "a-file"  # a plain file where a folder would have to be made (root ignores modes)
    blocker.write_text("not a folder\n")
    dialog.folder.setText(str(blocker / "project"))
    _export(dialog, qtbot)
    message = dialog.outcome.text()
    assert message and "\n" not in message and str(blocker) in message and "Traceback" not in message
    assert dialog.outcome.objectName() == "error"
    assert dialog.project_dir == tmp_path / "first" and dialog.open_button.isEnabled()  # the last export stays
    assert dialog.export_button.isEnabled()
