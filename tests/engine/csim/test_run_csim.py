import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.compiler.design_space import compile_kernel
from engine.export import export_project
from engine.export.interface import kernel_interface
from engine.csim import CsimError, run_csim
from engine.errors import EngineError
from engine.resources import KERNELS

PARAMS = {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 2, "k_t2": 2}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The export once per module; each test edits its own copy (`project`)."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "8", "J": "8", "K": "8"})
    return export_project(space, space.design("i-j__i-j.k"), PARAMS, tmp_path_factory.mktemp("pristine") / "mm_2d",
                          floorplan="none")


@pytest.fixture
def project(exported, tmp_path):
    return Path(shutil.copytree(exported, tmp_path / "mm_2d", symlinks=True))


def test_an_exported_design_passes_with_any_seed(project):
    for seed in (0, 1):
        result = run_csim(project, seed=seed)
        assert result.passed and result.summary == "PASS: 64 elements of C match" and result.mismatch is None
    assert not (project / "csim").exists()


@pytest.fixture
def natural_project(tmp_path):
    """The storer writes C at its padded row-major place: C[1][5]'s word is known from the interface."""
    space = compile_kernel(KERNELS / "mm.c", defines={"I": "8", "J": "8", "K": "8"})
    return export_project(space, space.design("i-j__i-j.k"), PARAMS, tmp_path / "mm_2d", layout="natural",
                          floorplan="none")


def test_a_corrupted_output_names_the_first_mismatch_and_the_command(natural_project):
    project = natural_project
    source = project / "src" / "kernel_kernel.cpp"
    text = source.read_text()
    store = re.search(r"C\[(.*)\] = value;", text)
    assert store, "the storer writes whole C words"
    design = json.loads((project / "design.json").read_text())
    port = kernel_interface(design["descriptor"], design["values"]).port("C")
    word, lane = divmod(1 * port.padded_shape[-1] + 5, port.word_elements)  # C[1][5]
    source.write_text(text.replace(store.group(0), "{ C_word v = value; if ((%s) == %d) v.lane[%d] += 1; C[%s] = v; }"
                                   % (store.group(1), word, lane, store.group(1))))
    result = run_csim(project)
    assert not result.passed
    assert result.mismatch.startswith("C[1][5] expected ") and result.summary == "FAIL: " + result.mismatch
    assert "g++" in result.command and "kernel_kernel.cpp" in result.command
    rerun = subprocess.run(result.command, shell=True, capture_output=True, text=True, check=False)
    assert rerun.returncode != 0 and result.mismatch in rerun.stdout


def test_a_missing_producer_is_a_failure_naming_the_empty_stream(project):
    source = project / "src" / "kernel_kernel.cpp"
    lines = source.read_text().splitlines()
    source.write_text("\n".join(l for l in lines if not l.strip().startswith("A_L3_in(A,")) + "\n")
    result = run_csim(project)
    assert not result.passed and "read while empty" in result.summary and "A_to_A_L2_in_0" in result.summary


def test_a_compile_error_is_a_failure_with_the_compiler_message(project):
    source = project / "src" / "kernel_kernel.cpp"
    source.write_text(source.read_text() + "\nthis is not C++;\n")
    result = run_csim(project)
    assert not result.passed and result.summary.startswith("FAIL: compile error:") and "error" in result.log


def test_a_directory_without_design_json_is_a_one_line_engine_error(tmp_path):
    with pytest.raises(CsimError) as info:
        run_csim(tmp_path)
    assert isinstance(info.value, EngineError) and "design.json" in str(info.value) and "\n" not in str(info.value)
    (tmp_path / "design.json").write_text("{}")
    (tmp_path / "src").mkdir()
    for name in ("kernel_kernel.cpp", "kernel_kernel.h"):
        (tmp_path / "src" / name).write_text("")
    with pytest.raises(CsimError, match="not a design file"):
        run_csim(tmp_path)


def test_a_word_left_in_a_fifo_fails_the_run(project):
    """Item 6 of issue 13: kernel0 writes one word more than its consumer reads."""
    source = project / "src" / "kernel_kernel.cpp"
    text = source.read_text()
    call = next(l for l in text.splitlines() if l.strip().startswith("A_L3_in(A,"))
    stream = call.split(",")[1].strip().rstrip(");")
    source.write_text(text.replace(call, f"{call}\n  {stream}.write(decltype({stream}.read())());"))
    result = run_csim(project)
    assert not result.passed and "left in FIFOs" in result.summary and "1 word" in result.summary


def test_csim_never_writes_into_the_export_and_keeps_the_users_csim_folder(project, tmp_path):
    """Issue 19 item 2: a user's DIR/csim/ survives a pass, and a csim symlink is not followed."""
    mine = project / "csim"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert run_csim(project).passed
    assert (mine / "notes.txt").read_text() == "mine" and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    shutil.rmtree(mine)
    outside = tmp_path / "outside"
    outside.mkdir()
    mine.symlink_to(outside)
    before = sorted(p.name for p in project.rglob("*"))
    assert run_csim(project).passed
    assert list(outside.iterdir()) == [] and sorted(p.name for p in project.rglob("*")) == before


def test_a_kept_build_is_a_private_folder_outside_the_export(project):
    result = run_csim(project, keep_build=True)
    folder = Path(shlex.split(result.command.split(" && ")[1])[0]).parent
    try:
        assert result.passed and folder.is_dir() and project.resolve() not in folder.resolve().parents
        assert (folder / "csim_harness.cpp").is_file()
    finally:
        shutil.rmtree(folder)


def test_a_project_file_that_links_out_of_the_export_is_refused(project, tmp_path):
    source = project / "src" / "kernel_kernel.cpp"
    elsewhere = tmp_path / "kernel_kernel.cpp"
    elsewhere.write_text(source.read_text())
    source.unlink()
    source.symlink_to(elsewhere)
    with pytest.raises(CsimError, match="outside the export") as info:
        run_csim(project)
    assert "\n" not in str(info.value)


def test_a_read_only_export_is_simulated(project):
    modes = {p: p.stat().st_mode for p in [project, *project.rglob("*")]}
    try:
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        assert run_csim(project).passed
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_a_design_json_whose_descriptor_is_not_an_object_is_one_line(project):
    (project / "design.json").write_text('{"descriptor": 5, "values": {}}')
    with pytest.raises(CsimError, match="is not a design file") as info:
        run_csim(project)
    assert "\n" not in str(info.value)


def test_a_compiler_that_fails_silently_is_named(project, monkeypatch):
    monkeypatch.setenv("CXX", "/bin/false")
    result = run_csim(project)
    assert not result.passed
    assert result.summary == "FAIL: compile error: /bin/false exited with status 1 and printed nothing"
