"""Generated files (relative path -> text) + the folder they go to -> that folder holding the new files
and everything else it held, untouched.

Every file is first written into a hidden staging folder created INSIDE the target
(`.systolic-export-*`, so on its file system, and needing no write access to the target's parent),
then each one is renamed over its place. Nothing the export does not write is touched: other files in
the project (including ones another process creates meanwhile), existing folders (their owner and
mode), symlinks. The target folder itself is never replaced, so a shell or `make` working in it stays
in it. A conflict (a folder or symlink where the export writes a file, a file where it needs a folder)
is found before anything is written; a failure while writing (disk full, Ctrl-C) leaves the project as
it was, and so does one during the renames (a rename refused half-way through, say in a folder the
user cannot write): each file replaced is kept beside the staged ones (a hard link, else a copy) until
the last rename, and put back, with the new files and folders removed, if one fails -- nothing is left
half-written. The renames run with SIGINT, SIGTERM and SIGHUP held back, so a signal lands after the
last one.

A missing folder on the way is created with the mode a plain `mkdir` gives (0777 less the umask); a
replaced file keeps the mode it had; a target that is a symlink to a folder is written at the folder
it names, so the link stays a link.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path, PurePosixPath

from engine.errors import EngineError

STAGING_PREFIX = ".systolic-export-"
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


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
    """Write `files` (relative path -> text) into `out_dir` as described above, creating it if needed.
    Returns the folder written (the symlink's target when `out_dir` is a symlink)."""
    target = Path(os.path.realpath(out_dir))
    created = not target.exists()
    if not created:
        _check_conflicts(target, files)
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=target))
    try:
        for rel, text in files.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(text)
        _move_into_place(staging, target, files)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            _remove_if_empty(target)
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return target


def _check_conflicts(target: Path, files: dict[str, str]) -> None:
    """Refuse, before writing, a path the export cannot write without removing something of the user's."""
    for rel in files:
        parts = PurePosixPath(rel).parts
        for depth in range(1, len(parts)):
            folder = target.joinpath(*parts[:depth])
            if folder.is_symlink():
                raise EngineError(f"{folder} is a symlink; the export writes a folder there (replace it by a folder)")
            if folder.exists() and not folder.is_dir():
                raise EngineError(f"{folder} is a file; the export writes a folder there (move it away)")
            if not folder.exists():
                break
        path = target / rel
        if path.is_dir() and not path.is_symlink():
            raise EngineError(f"{path} is a folder; the export writes a file there (move it away)")


def _move_into_place(staging: Path, target: Path, files: dict[str, str]) -> None:
    """Rename each staged file over its place (missing folders created, replaced files' modes kept),
    with the termination signals held back until the last rename; if one fails, the renames done are
    undone (the replaced files put back from their copies in `staging`) before the error goes on."""
    kept = Path(tempfile.mkdtemp(prefix="replaced-", dir=staging))
    done: list[tuple[Path, Path | None]] = []  # (destination, the file it replaced, kept) in order
    created: list[Path] = []  # folders made on the way, parents first
    with _signals_held():
        try:
            for n, rel in enumerate(files):
                destination = target / rel
                created += _make_folders(destination.parent)
                try:
                    old = os.lstat(destination)
                except FileNotFoundError:
                    old = None
                previous = None
                if old is not None and stat.S_ISREG(old.st_mode):
                    os.chmod(staging / rel, stat.S_IMODE(old.st_mode))
                    previous = _keep(destination, kept / str(n))
                os.replace(staging / rel, destination)
                done.append((destination, previous))
        except BaseException:
            _undo(done, created)
            raise


def _make_folders(folder: Path) -> list[Path]:
    """mkdir -p, returning the folders it created, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
    return list(reversed(missing))


def _keep(path: Path, copy: Path) -> Path:
    """A copy of `path` at `copy` (a hard link: same file system, no data copied; else a copy)."""
    try:
        os.link(path, copy)
    except OSError:
        shutil.copy2(path, copy)
    return copy


def _undo(done: list[tuple[Path, Path | None]], created: list[Path]) -> None:
    """Put back what the renames replaced, remove what they added (best effort: the error that
    stopped the renames is the one reported)."""
    for destination, previous in reversed(done):
        try:
            if previous is not None:
                os.replace(previous, destination)
            else:
                destination.unlink()
        except OSError:
            pass
    for folder in reversed(created):
        _remove_if_empty(folder)


@contextlib.contextmanager
def _signals_held():
    """SIGINT, SIGTERM and SIGHUP noted instead of handled inside the block, then raised again on
    leaving it (Python handles signals on the main thread only, so elsewhere there is nothing to hold)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {s: signal.signal(s, lambda number, _frame: arrived.append(number)) for s in _HELD_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        for number in dict.fromkeys(arrived):
            signal.raise_signal(number)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


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
