"""`export --force` all or nothing (engine/export/swap.py through export_project): a failure or an
interrupt part-way leaves the old project byte for byte; a success keeps the user's other files
(links, modes, symlinks) and replaces the exported ones; a new folder respects the umask; a symlinked
project stays a symlink; an output path under a regular file is one clear error."""
from __future__ import annotations

import os
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
    export_project(space, design, {**CONFIG, "k_t2": 2}, out)
    (out / "notes.txt").write_text("mine")
    (out / "build").mkdir()
    (out / "build" / "log.txt").write_text("a long build")
    os.chmod(out / "build", 0o750)
    (out / "src" / "extra.cpp").write_text("// mine")
    (out / "data").symlink_to("/nonexistent/elsewhere")
    return out


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


def test_force_keeps_other_files_and_replaces_the_exported_ones(mm, tmp_path):
    space, design = mm
    out = _old_project(tmp_path, mm)
    os.chmod(out, 0o750)
    before = _snapshot(out)
    export_project(space, design, CONFIG, out, force=True)
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
        export_project(space, design, CONFIG, out, force=True)
    monkeypatch.undo()
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == []


def test_an_interrupt_while_carrying_files_over_leaves_the_old_project(mm, tmp_path, monkeypatch):
    space, design = mm
    out = _old_project(tmp_path, mm)
    before = _snapshot(out)
    real_link = os.link

    def link_once_then_interrupt(*args, **kwargs):
        monkeypatch.setattr(os, "link", _interrupt)
        return real_link(*args, **kwargs)

    def _interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "link", link_once_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        export_project(space, design, CONFIG, out, force=True)
    monkeypatch.undo()
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == []


def test_without_an_atomic_exchange_two_renames_do_it(mm, tmp_path, monkeypatch):
    space, design = mm
    out = _old_project(tmp_path, mm)
    monkeypatch.setattr(swap.ctypes, "CDLL", lambda *a, **k: (_ for _ in ()).throw(OSError("no libc")))
    export_project(space, design, CONFIG, out, force=True)
    assert (out / "notes.txt").read_text() == "mine" and '"k_t2": 4' in (out / "design.json").read_text()
    assert _leftovers(tmp_path) == []


def test_a_failed_second_rename_puts_the_old_project_back(tmp_path, monkeypatch):
    old, new = tmp_path / "proj", tmp_path / "staged"
    old.mkdir()
    (old / "a").write_text("old")
    new.mkdir()
    monkeypatch.setattr(swap.ctypes, "CDLL", lambda *a, **k: (_ for _ in ()).throw(OSError("no libc")))
    real_rename = os.rename

    def rename(src, dst):
        if Path(src) == new:
            raise OSError(5, "Input/output error")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError):
        swap._exchange(new, old)
    assert (old / "a").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["proj", "staged"]


def test_a_folder_where_the_export_writes_a_file_is_refused_untouched(mm, tmp_path):
    space, design = mm
    out = _old_project(tmp_path, mm)
    (out / "README.md").unlink()
    (out / "README.md").mkdir()
    (out / "README.md" / "keep").write_text("mine")
    before = _snapshot(out)
    with pytest.raises(EngineError, match="README.md is a folder; the export writes a file there"):
        export_project(space, design, CONFIG, out, force=True)
    assert _snapshot(out) == before and _leftovers(tmp_path) == []


def test_a_new_project_folder_respects_the_umask(mm, tmp_path):
    space, design = mm
    old = os.umask(0o027)
    try:
        export_project(space, design, CONFIG, tmp_path / "fresh")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "fresh" / "README.md").stat().st_mode) == 0o640


def test_a_symlinked_project_stays_a_symlink(mm, tmp_path):
    space, design = mm
    real = _old_project(tmp_path, mm)
    link = tmp_path / "link"
    link.symlink_to(real)
    export_project(space, design, CONFIG, link, force=True)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert '"k_t2": 4' in (real / "design.json").read_text() and (real / "notes.txt").read_text() == "mine"


def test_an_output_under_a_regular_file_is_one_clear_error(mm, tmp_path):
    space, design = mm
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(EngineError, match=r"notes.txt is a file, not a folder"):
        export_project(space, design, CONFIG, tmp_path / "notes.txt" / "sub" / "proj")
    assert (tmp_path / "notes.txt").read_text() == "mine" and _leftovers(tmp_path) == []
