"""`export --force` file by file (engine/export/swap.py through export_project): a failure or an
interrupt while writing leaves the old project byte for byte; a success replaces the exported files
and leaves everything else alone -- the user's files, files another process creates meanwhile,
existing folders (same inode, owner, mode), symlinks; the staging happens inside the target, so a
read-only parent is fine and `-o .` keeps the folder the shell is in; a signal during the renames
lands after the last one; a new folder respects the umask; a symlinked project stays a symlink; an
output path under a regular file is one clear error; a rename refused half-way puts back what the
renames before it replaced."""
from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from engine.compiler.design_space import compile_kernel
from engine.errors import EngineError
from engine.export import project, swap
from engine.export.project import export_project
from engine.resources import KERNELS

CONFIG = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4}


@pytest.fixture(scope="module")
def mm():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    return space, space.design("i-j__i-j.k")


@pytest.fixture(autouse=True)
def stand_in_kernel(monkeypatch):
    monkeypatch.setattr(project, "kernel_export", lambda descriptor, values, report=None, **_: ({
        "kernel_kernel.cpp": "// stand-in kernel\n", "kernel_kernel.h": "// stand-in header\n"}, {}))


def _snapshot(folder: Path) -> dict:
    """Every entry under folder: bytes of files, targets of symlinks, modes."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path))
        elif path.is_file():
            out[rel] = ("file", path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        else:
            out[rel] = ("dir", stat.S_IMODE(path.stat().st_mode))
    return out


def _old_project(tmp_path: Path, mm) -> Path:
    space, design = mm
    out = tmp_path / "proj"
    export_project(space, design, {**CONFIG, "k_t2": 2}, out, floorplan="none")
    (out / "notes.txt").write_text("mine")
    (out / "build").mkdir()
    (out / "build" / "log.txt").write_text("a long build")
    os.chmod(out / "build", 0o750)
    (out / "src" / "extra.cpp").write_text("// mine")
    (out / "data").symlink_to("/nonexistent/elsewhere")
    return out


def _leftovers(parent: Path) -> list[str]:
    """Hidden entries beside the project or staging folders left inside it."""
    return ([p.name for p in parent.iterdir() if p.name.startswith(".")]
            + [str(p) for p in parent.rglob(swap.STAGING_PREFIX + "*")])


def test_force_keeps_other_files_and_replaces_the_exported_ones(mm, tmp_path):
    space, design = mm
    out = _old_project(tmp_path, mm)
    os.chmod(out, 0o750)
    before = _snapshot(out)
    export_project(space, design, CONFIG, out, force=True, floorplan="none")
    after = _snapshot(out)
    for rel in ("notes.txt", "build", "build/log.txt", "src/extra.cpp", "data"):
        assert after[rel] == before[rel], rel
    assert after["design.json"] != before["design.json"]  # k_t2 changed
    assert stat.S_IMODE(out.stat().st_mode) == 0o750
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failure_while_writing_leaves_the_old_project(mm, tmp_path, monkeypatch, failure):
    space, design = mm
    out = _old_project(tmp_path, mm)
    before = _snapshot(out)
    written = []
    real_write = Path.write_text

    def write_then_fail(self, text, *args, **kwargs):
        if len(written) == 4:
            raise failure
        written.append(self)
        return real_write(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_then_fail)
    with pytest.raises((EngineError, KeyboardInterrupt)):
        export_project(space, design, CONFIG, out, force=True, floorplan="none")
    monkeypatch.undo()
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("existing", [True, False])
def test_a_rename_refused_half_way_puts_everything_back(mm, tmp_path, monkeypatch, existing):
    """The fifth rename fails (a folder the user may not write, say): the four files already renamed
    are put back (the same files: inodes kept), a new project leaves no folder behind."""
    space, design = mm
    out = _old_project(tmp_path, mm) if existing else tmp_path / "proj"
    before = _snapshot(out) if existing else None
    inodes = {rel: (out / rel).stat().st_ino for rel in ("design.json", "src/kernel_kernel.cpp")} if existing else None
    real_replace = os.replace
    moved = []

    def refuse_the_fifth(src, dst):
        if out in Path(dst).parents and swap.STAGING_PREFIX in str(src) and "replaced-" not in str(src):
            if len(moved) == 4:
                raise PermissionError(13, "Permission denied", str(dst))
            moved.append(dst)
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", refuse_the_fifth)
    with pytest.raises(EngineError, match="Permission denied"):
        export_project(space, design, CONFIG, out, force=True)
    monkeypatch.undo()
    assert len(moved) == 4
    if existing:
        assert _snapshot(out) == before
        assert {rel: (out / rel).stat().st_ino for rel in inodes} == inodes
    else:
        assert not out.exists()
    assert _leftovers(tmp_path) == []


def test_a_signal_during_the_renames_lands_after_the_last_one(mm, tmp_path, monkeypatch):
    space, design = mm
    out = _old_project(tmp_path, mm)
    real_replace = os.replace
    moved = []

    def replace_and_signal(src, dst):
        if out in Path(dst).parents:  # (the model cache renames its files too)
            if not moved:
                os.kill(os.getpid(), signal.SIGINT)  # held back until every file is in place
            moved.append(dst)
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_and_signal)
    # Python's own SIGINT handler for the test: a shell starts a background job with SIGINT ignored,
    # and an ignored signal is (rightly) ignored after the renames too
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            export_project(space, design, CONFIG, out, force=True, floorplan="none")
    finally:
        signal.signal(signal.SIGINT, previous)
    monkeypatch.undo()
    assert len(moved) == 9 and '"k_t2": 4' in (out / "design.json").read_text()
    assert _leftovers(tmp_path) == []


def test_a_file_created_during_the_export_survives(mm, tmp_path, monkeypatch):
    space, design = mm
    out = _old_project(tmp_path, mm)
    real_write = Path.write_text

    def write_and_meanwhile(self, text, *args, **kwargs):  # another process writing into the project
        if not (out / "src" / "theirs.log").exists():
            real_write(out / "src" / "theirs.log", "another process")
            real_write(out / "theirs.txt", "another process")
        return real_write(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_and_meanwhile)
    export_project(space, design, CONFIG, out, force=True, floorplan="none")
    monkeypatch.undo()
    assert (out / "src" / "theirs.log").read_text() == (out / "theirs.txt").read_text() == "another process"
    assert '"k_t2": 4' in (out / "design.json").read_text() and _leftovers(tmp_path) == []


def test_existing_folders_are_kept_not_recreated(mm, tmp_path):
    space, design = mm
    out = _old_project(tmp_path, mm)
    os.chmod(out / "src", 0o700)
    os.chmod(out, 0o711)
    before = {p: os.stat(p) for p in (out, out / "src")}
    (out / "src" / "kernel_host.cpp").chmod(0o600)
    export_project(space, design, CONFIG, out, force=True, floorplan="none")
    for path, old in before.items():
        new = os.stat(path)
        assert (new.st_ino, new.st_uid, new.st_gid, stat.S_IMODE(new.st_mode)) == \
            (old.st_ino, old.st_uid, old.st_gid, stat.S_IMODE(old.st_mode)), path
    assert stat.S_IMODE((out / "src" / "kernel_host.cpp").stat().st_mode) == 0o600  # a replaced file keeps its mode


def test_a_writable_project_in_a_read_only_parent_is_exported(mm, tmp_path, monkeypatch):
    space, design = mm
    out = _old_project(tmp_path, mm)
    parent_before = sorted(p.name for p in tmp_path.iterdir())
    os.chmod(tmp_path, 0o555)
    written = []
    real_write = Path.write_text

    def record(self, text, *args, **kwargs):
        written.append(self)
        return real_write(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", record)
    try:
        export_project(space, design, CONFIG, out, force=True, floorplan="none")
    finally:
        os.chmod(tmp_path, 0o755)
    monkeypatch.undo()
    assert written and all(out in p.parents for p in written)  # staged inside the project, never beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == parent_before
    assert '"k_t2": 4' in (out / "design.json").read_text()


def test_export_into_the_current_folder_keeps_that_folder(mm, tmp_path, monkeypatch):
    space, design = mm
    out = _old_project(tmp_path, mm)
    monkeypatch.chdir(out)
    inode = os.stat(".").st_ino
    export_project(space, design, CONFIG, Path("."), force=True, floorplan="none")
    assert os.stat(".").st_ino == inode == os.stat(out).st_ino and Path("notes.txt").read_text() == "mine"
    assert '"k_t2": 4' in Path("design.json").read_text()


def test_a_folder_where_the_export_writes_a_file_is_refused_untouched(mm, tmp_path):
    space, design = mm
    out = _old_project(tmp_path, mm)
    (out / "README.md").unlink()
    (out / "README.md").mkdir()
    (out / "README.md" / "keep").write_text("mine")
    before = _snapshot(out)
    with pytest.raises(EngineError, match="README.md is a folder; the export writes a file there"):
        export_project(space, design, CONFIG, out, force=True, floorplan="none")
    assert _snapshot(out) == before and _leftovers(tmp_path) == []


def test_a_new_project_folder_respects_the_umask(mm, tmp_path):
    space, design = mm
    old = os.umask(0o027)
    try:
        export_project(space, design, CONFIG, tmp_path / "fresh", floorplan="none")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "fresh" / "README.md").stat().st_mode) == 0o640


def test_a_symlinked_project_stays_a_symlink(mm, tmp_path):
    space, design = mm
    real = _old_project(tmp_path, mm)
    link = tmp_path / "link"
    link.symlink_to(real)
    export_project(space, design, CONFIG, link, force=True, floorplan="none")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert '"k_t2": 4' in (real / "design.json").read_text() and (real / "notes.txt").read_text() == "mine"


def test_an_output_under_a_regular_file_is_one_clear_error(mm, tmp_path):
    space, design = mm
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(EngineError, match=r"notes.txt is a file, not a folder"):
        export_project(space, design, CONFIG, tmp_path / "notes.txt" / "sub" / "proj", floorplan="none")
    assert (tmp_path / "notes.txt").read_text() == "mine" and _leftovers(tmp_path) == []
