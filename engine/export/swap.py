"""A staged folder of generated files + the folder they go to -> that folder holding the new files and
everything else it held, switched in one step.

The staging folder is a hidden sibling of the target (same file system). When the target exists, the
files it holds that are not replaced are hard-linked (copied where links fail) into the staging
folder, then the two folders are exchanged with one `renameat2(RENAME_EXCHANGE)` and the old one is
removed. Until the exchange the target is untouched, so a failure, Ctrl-C or kill before it leaves the
old project as it was (plus at worst a hidden `.NAME.*.export` folder); after it, the new project is
complete. Where the kernel or file system cannot exchange, two renames are used instead: the window
between them is one system call, and a failure of the second renames the old folder back.

A new folder gets the mode a plain `mkdir` would (0777 less the umask), a replaced one keeps its mode;
a target that is a symlink to a folder is replaced at the folder it names, so the link stays a link.
"""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from engine.errors import EngineError

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def existing_ancestor_problem(out_dir: Path) -> str | None:
    """Why `out_dir` cannot be created as a folder, or None: the nearest existing ancestor must be a
    folder (`-o notes.txt/sub` names a path under a regular file)."""
    for parent in Path(os.path.abspath(out_dir)).parents:
        if parent.exists():
            return None if parent.is_dir() else f"{parent} is a file, not a folder"
        if parent.is_symlink():
            return f"{parent} is a symlink to nothing"
    return None


def write_folder(files: dict[str, str], out_dir: Path) -> Path:
    """Write `files` (relative path -> text) into `out_dir`, replacing those paths and keeping every
    other entry of an existing `out_dir`; all at once as described above. Returns the folder written
    (the symlink's target when `out_dir` is a symlink)."""
    target = Path(os.path.realpath(out_dir))
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".export", dir=target.parent))
    try:
        for rel, text in files.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(text)
        if target.is_dir():
            shutil.copymode(target, staging)
            _carry_over(target, staging, PurePosixPath("."), set(files))
            _exchange(staging, target)  # staging now holds the old project
        else:
            os.chmod(staging, 0o777 & ~current_umask())
            os.rename(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _carry_over(old_root: Path, new_root: Path, rel: PurePosixPath, replaced: set[str]) -> None:
    """Link every entry under old_root/rel that is not replaced into new_root/rel (folders created
    with the old ones' modes, symlinks recreated as they were)."""
    with os.scandir(old_root / rel) as entries:
        for entry in entries:
            key = (rel / entry.name).as_posix()
            if key in replaced:
                if entry.is_dir(follow_symlinks=False):
                    raise EngineError(f"{old_root / key} is a folder; the export writes a file there (move it away)")
                continue
            target = new_root / key
            staged_dir = target.is_dir() and not target.is_symlink()
            if entry.is_symlink():
                if staged_dir:
                    raise EngineError(f"{old_root / key} is a symlink; the export writes a folder there "
                                      "(replace it by a folder)")
                os.symlink(os.readlink(entry.path), target)
            elif entry.is_dir():
                if not staged_dir:
                    target.mkdir()
                    shutil.copymode(entry.path, target)
                _carry_over(old_root, new_root, rel / entry.name, replaced)
            elif staged_dir:
                raise EngineError(f"{old_root / key} is a file; the export writes a folder there (move it away)")
            else:
                try:
                    os.link(entry.path, target, follow_symlinks=False)
                except OSError:
                    shutil.copy2(entry.path, target, follow_symlinks=False)


def _exchange(a: Path, b: Path) -> None:
    """Swap two folders' names atomically where Linux can, else with two renames (b set back if the
    second one fails)."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        renameat2 = None
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(code, os.strerror(code), str(b))
    aside = Path(tempfile.mkdtemp(prefix=f".{b.name}.", suffix=".old", dir=b.parent))
    os.rename(b, aside / "project")
    try:
        os.rename(a, b)
    except BaseException:
        os.rename(aside / "project", b)
        os.rmdir(aside)
        raise
    os.rename(aside / "project", a)
    os.rmdir(aside)


def current_umask() -> int:
    """The process umask, read without changing it where Linux shows it (os.umask sets it)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
