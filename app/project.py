"""Project <-> JSON project file: the kernel (path and text), size overrides, data type, device and
its kernel clock,
search settings (method, time or sample budget, seed), the selected design and configuration, and the stored search runs (ids in a run
database). Written atomically (temp file + os.replace) and versioned; saving through a symlink
writes its target (the link stays a link), and the file gets the mode a plain open() would give it
(0666 less the umask, or the mode of the file it replaces). Reading checks everything and raises
ProjectError with one line, so a corrupt file changes nothing."""
from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engine.errors import EngineError
from engine.limits import INT64_MAX, MAX_EXTENT

FORMAT = "systolic-studio-project"
VERSION = 3  # 2: clock_mhz (version 1 files read as the device's own clock); 3: simd_touch_space (older: off)


class ProjectError(EngineError):
    """A project file cannot be read or written."""


@dataclass
class Project:
    kernel_path: str
    kernel_text: str
    sizes: dict[str, int] = field(default_factory=dict)  # -D overrides
    data_type: str | None = None
    device: str = "u250"
    method: str = "hybrid"
    seconds: float = 10.0
    design: str | None = None
    values: dict[str, int] = field(default_factory=dict)
    database: str | None = None
    runs: list[int] = field(default_factory=list)
    samples: int | None = None  # a sample budget instead of `seconds`
    seed: int = 0
    clock_mhz: float | None = None  # the device bar's kernel clock (None: the device's own)
    simd_touch_space: bool = False  # AutoSA's --simd-touch-space: the kernel panel's "SIMD on space loops"

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, **asdict(self)}


def save_project(project: Project, path: str | Path) -> None:
    link = Path(path)
    path = Path(os.path.realpath(link))  # through symlinks (chains included) to the file they name
    text = json.dumps(project.to_json(), indent=2) + "\n"
    from engine.export.swap import current_umask  # the exporter's package: not before the window paints

    temp = None
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~current_umask()
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None and os.path.exists(temp):
            os.unlink(temp)
        raise ProjectError(f"cannot write project {link}: {exc.strerror or exc}") from None


def load_project(path: str | Path) -> Project:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProjectError(f"cannot read project {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProjectError(f"{path} is not a project file (not UTF-8 text at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ProjectError(f"{path}:{exc.lineno}:{exc.colno}: not a project file (not JSON: {exc.msg})") from None
    except RecursionError:
        raise ProjectError(f"{path} is not a project file (JSON nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProjectError(f"{path} is not a Systolic Studio project file")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise ProjectError(f"{path} has project version {data.get('version')!r}; this version reads up to {VERSION}")
    try:
        project = Project(**{k: v for k, v in data.items() if k not in ("format", "version")})
    except TypeError as exc:
        raise ProjectError(f"{path}: bad project fields ({exc})") from None
    _check(project, path)
    return project


def _check(p: Project, path: Path) -> None:
    def bad(what):
        raise ProjectError(f"{path}: {what}")
    if not isinstance(p.kernel_path, str) or not isinstance(p.kernel_text, str):
        bad("kernel_path and kernel_text must be strings")
    if not p.kernel_path.strip() or p.kernel_path.endswith(("/", os.sep)) or Path(p.kernel_path).is_dir():
        bad(f"kernel_path {p.kernel_path!r} does not name a kernel file")
    if "\0" in p.kernel_path:
        bad("kernel_path contains a NUL character")
    if not isinstance(p.sizes, dict) or not all(isinstance(k, str) and type(v) is int for k, v in p.sizes.items()):
        bad("sizes must map names to integers")
    if any(not 0 <= v <= MAX_EXTENT for v in p.sizes.values()):
        bad(f"sizes must be in 0..2^31-1 = {MAX_EXTENT:,} (the limit per loop)")
    if not isinstance(p.values, dict) or not all(isinstance(k, str) and type(v) is int for k, v in p.values.items()):
        bad("values must map parameter names to integers")
    if any(not 0 <= v <= INT64_MAX for v in p.values.values()):
        bad("values must be in 0..2^63-1")
    if p.data_type is not None and not isinstance(p.data_type, str):
        bad("data_type must be a string")
    if not isinstance(p.simd_touch_space, bool):
        bad("simd_touch_space must be true or false")
    if not isinstance(p.device, str) or not isinstance(p.method, str):
        bad("device and method must be strings")
    if p.clock_mhz is not None and (isinstance(p.clock_mhz, bool) or not isinstance(p.clock_mhz, (int, float))
                                    or not 0 < p.clock_mhz < math.inf):
        bad("clock_mhz must be a positive number of MHz (or null: the device's own clock)")
    if isinstance(p.seconds, bool) or not isinstance(p.seconds, (int, float)) or not 0 < p.seconds < math.inf:
        bad("seconds must be a positive, finite number")
    if p.samples is not None and (type(p.samples) is not int or not 0 < p.samples < 2**31):
        bad("samples must be a positive integer below 2^31 (or null: a time budget)")
    if type(p.seed) is not int or not 0 <= p.seed <= INT64_MAX:
        bad("seed must be an integer in 0..2^63-1")
    if p.design is not None and not isinstance(p.design, str):
        bad("design must be a string")
    if p.database is not None and not isinstance(p.database, str):
        bad("database must be a string")
    if not isinstance(p.runs, list) or not all(type(r) is int and 0 < r <= INT64_MAX for r in p.runs):
        bad("runs must be a list of run ids")
