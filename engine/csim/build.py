"""An exported project + generated C++ -> a built C-simulation program, in folders csim owns.

Nothing is written inside the export: a plain C simulation builds in a fresh private temporary
folder (`tempfile.mkdtemp`, removed after a pass, kept after a failure so that its command can be
rerun); the timed C simulation keeps its builds in a cache folder keyed by the hash of everything
that goes into g++ (`$SYSTOLIC_STUDIO_CACHE/csim` or the user cache folder), each build folder
marked as csim's own by a `.systolic-csim` file. Folders without that mark are never removed, and a
project file that is a symlink leading out of the export is refused.

Nothing built is taken from the cache on its name alone: beside each build a manifest
(`build.sha256`) records the key (the SHA-256 of the sources, headers, compiler, flags and linked
objects' contents) and the SHA-256 of the executable as it was built; beside each cached object a
`.sha256` file records its own. A cached build is reused only when it is a real folder owned by this
user and writable by no one else, its sources hash to the key asked for and its executable (or
object) still has the recorded hash; anything else is rebuilt.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from engine.errors import EngineError

MARK = ".systolic-csim"
MANIFEST = "build.sha256"
SHIM_INCLUDE = Path(__file__).parent / "include"


class CsimError(EngineError):
    """The directory is not an exported project, or no C++ compiler is available."""


@dataclass(frozen=True)
class Build:
    ok: bool
    exe: Path
    folder: Path
    command: list[str]
    log: str
    error: str  # one line: the first g++ error with its file and line, "" when ok


def project_file(project_dir: Path, relative: str) -> Path:
    """A file of the export, refused when a symlink takes it out of the export."""
    path = project_dir / relative
    if not path.is_file():
        raise CsimError(f"{project_dir} has no {relative}: not an exported project")
    real, root = path.resolve(), project_dir.resolve()
    if root not in real.parents:
        raise CsimError(f"{path} is a symlink to {real}, outside the export; csim reads only the export's own files")
    return path


def compiler() -> str:
    found = shutil.which(os.environ.get("CXX", "g++"))
    if found is None:
        raise CsimError(f"no C++ compiler found ({os.environ.get('CXX', 'g++')}; set $CXX)")
    return found


def private_folder(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    (folder / MARK).write_text("created by systolic csim; removed by it when no longer needed\n")
    return folder


def remove_own(folder: Path) -> None:
    """Remove a folder csim created (it carries the mark and is not a symlink); anything else stays."""
    if folder.is_dir() and not folder.is_symlink() and (folder / MARK).is_file():
        shutil.rmtree(folder, ignore_errors=True)


def first_error(stderr: str) -> str:
    """The first `file:line:col: error: ...` line g++ printed (or the first line of its output)."""
    for line in stderr.splitlines():
        if re.search(r"\berror\b", line):
            return line.strip()
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0].strip() if lines else "the compiler failed without a message"


def compile_program(sources: list[Path], exe: Path, *, includes: list[Path], flags: list[str]) -> Build:
    cxx = compiler()
    command = [cxx, "-std=c++14", *flags, "-Wno-unknown-pragmas", "-Wno-unused-label",
               *[f"-I{i}" for i in includes], *map(str, sources), "-o", str(exe)]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    log = built.stdout + built.stderr
    if built.returncode == 0:
        return Build(True, exe, exe.parent, command, log, "")
    error = first_error(log) if log.strip() else f"{cxx} exited with status {built.returncode} and printed nothing"
    return Build(False, exe, exe.parent, command, log, error)


def cache_root() -> Path:
    base = os.environ.get("SYSTOLIC_STUDIO_CACHE")
    return (Path(base) if base else Path(platformdirs.user_cache_dir("systolic-studio"))) / "csim"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _private(path: Path) -> bool:
    """A real file or folder (not a symlink) owned by this user and writable by no one else."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return not stat.S_ISLNK(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def cached_object(source: Path, *, includes: list[Path], flags: list[str], cache: Path | None = None) -> Path:
    """`source` compiled once per content (and compiler and flags) into the cache: the object file,
    reused only while it has the hash recorded beside it when it was built."""
    root = cache or cache_root()
    digest = hashlib.sha256(source.read_bytes() + " ".join([compiler(), *flags]).encode())
    for include in includes:
        for header in sorted(include.glob("*.h")):
            digest.update(header.read_bytes())
    target = root / f"{source.stem}-{digest.hexdigest()[:24]}.o"
    recorded = target.with_name(target.name + ".sha256")
    if _private(target) and _private(recorded) and recorded.read_text().strip() == file_sha256(target):
        return target
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder = Path(tempfile.mkdtemp(prefix=f"{source.stem}.build-", dir=root))
    (folder / MARK).write_text("a build of systolic csim\n")
    built_object = folder / target.name
    command = [compiler(), "-std=c++14", *flags, "-c", *[f"-I{i}" for i in includes], str(source),
               "-o", str(built_object)]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    if built.returncode != 0:
        raise CsimError(f"cannot build {source.name}: {first_error(built.stderr)} (build folder kept: {folder})")
    os.chmod(built_object, 0o600)
    (folder / recorded.name).write_text(file_sha256(built_object) + "\n")
    for stale in (target, recorded):  # a replaced or foreign file in the way is not ours to keep
        if stale.is_symlink() or stale.is_file():
            stale.unlink()
    os.replace(folder / recorded.name, recorded)
    os.replace(built_object, target)
    remove_own(folder)
    return target


def build_key(files: dict[str, str], *, includes: list[Path], flags: list[str], objects: tuple[Path, ...] = ()) -> str:
    """The SHA-256 of everything that goes into g++: sources, headers, compiler, flags, linked objects."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    for include in includes:
        for header in sorted(include.glob("*.h")):
            digest.update(header.name.encode() + b"\0" + header.read_bytes() + b"\0")
    digest.update(" ".join([compiler(), *flags]).encode())
    for obj in objects:
        digest.update(b"\0" + file_sha256(obj).encode())
    return digest.hexdigest()


def _reusable(folder: Path, key: str, files: dict[str, str], exe_name: str) -> bool:
    """A cache folder may be run from: csim's own, private, its sources the ones asked for (byte for
    byte, so they hash to `key`) and its executable the one built there (the hash in its manifest)."""
    exe, manifest = folder / exe_name, folder / MANIFEST
    if not all(_private(p) for p in (folder, exe, manifest)) or not (folder / MARK).is_file():
        return False
    try:
        recorded = json.loads(manifest.read_text())
        if not isinstance(recorded, dict) or recorded.get("key") != key:
            return False
        if any((folder / name).read_bytes() != text.encode() for name, text in files.items()):
            return False
        return recorded.get("exe") == file_sha256(exe)
    except (OSError, ValueError):
        return False


def cached_build(files: dict[str, str], exe_name: str, *, includes: list[Path], flags: list[str],
                 objects: tuple[Path, ...] = (), cache: Path | None = None) -> tuple[Build, bool]:
    """Build `files` (name -> text; the .cpp ones are compiled) once per content: (build, reused).

    A new build happens in a fresh marked folder of the cache, gets its manifest and is renamed to
    its key when it succeeds (replacing a cached folder that failed the checks of `_reusable`); a
    failed one keeps its folder (sources and log) and says where it is."""
    root = cache or cache_root()
    key = build_key(files, includes=includes, flags=flags, objects=objects)
    final = root / key[:24]
    if _reusable(final, key, files, exe_name):
        return Build(True, final / exe_name, final, [], "", ""), True
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder = Path(tempfile.mkdtemp(prefix=f"{key[:24]}.build-", dir=root))
    (folder / MARK).write_text("a timed C-simulation build of systolic csim\n")
    for name, text in files.items():
        (folder / name).write_bytes(text.encode())
    build = compile_program([*(folder / n for n in sorted(files) if n.endswith(".cpp")), *objects],
                            folder / exe_name, includes=includes, flags=flags)
    (folder / "build.log").write_text(shlex.join(build.command) + "\n" + build.log)
    if not build.ok:
        return build, False
    os.chmod(build.exe, 0o700)
    (folder / MANIFEST).write_text(json.dumps({"key": key, "exe": file_sha256(build.exe)}) + "\n")
    if final.is_symlink():
        final.unlink()
    elif final.exists() and not _reusable(final, key, files, exe_name):
        remove_own(final)  # a tampered or stale build of this key (a folder without the mark stays)
    try:
        os.rename(folder, final)
    except OSError:  # another run built the same key meanwhile, or a foreign folder holds the name
        if _reusable(final, key, files, exe_name):
            remove_own(folder)
            return Build(True, final / exe_name, final, build.command, build.log, ""), False
        return build, False  # run the fresh build where it was made
    return Build(True, final / exe_name, final, build.command, build.log, ""), False
