"""(kernel text, defines, sizes, device, design id) -> a built PerformanceModel kept on disk, so that a
kernel opened again (in the window, its model pool or its search process) needs no sympy work; and
(compiled kernel, design, device, layout) -> the same model built once per process (`shared_model`,
what an export evaluates and reads its architecture from).

An entry is one file named by the SHA-256 of its key: a header line, the SHA-256 of the payload and
the payload, a cloudpickle of the model (its lambdified functions included, so a loaded model
evaluates at once). The key holds MODEL_VERSION, a digest of the sources that build models
(engine/compiler, engine/models, the operator costs) and of the Python, sympy, numpy and
cloudpickle versions: a changed model builder never reads an old entry. An entry whose digest,
header or contents do not check out is deleted and reported as missing, never trusted. A model
missing from the cache is built once however many processes ask for it at once (`cached_model`
holds the entry's build lock, an empty `<key>.building` file beside it, while it builds).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from functools import lru_cache
from importlib.metadata import version
from typing import TYPE_CHECKING

from engine.models.device import Device
from engine.models.dram import DEFAULT_LAYOUT
from engine.resources import RESOURCES

if TYPE_CHECKING:  # imported where used: the window imports this module before it paints
    from engine.models.evaluate import PerformanceModel

HEADER = b"systolic-studio model cache 1\n"
ENGINE = Path(__file__).resolve().parents[1]


def _model_version() -> str:
    digest = hashlib.sha256()
    sources = sorted((ENGINE / "compiler").rglob("*.py")) + sorted((ENGINE / "models").rglob("*.py"))
    sources += sorted(RESOURCES.glob("*.json"))
    for path in sources:
        if path.name == "cache.py" and path.parent.name == "models":
            continue
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    versions = "|".join(version(name) for name in ("sympy", "numpy", "cloudpickle"))  # without importing them
    digest.update(f"{sys.version}|{versions}".encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def model_version() -> str:
    return _model_version()


def __getattr__(name: str):
    """MODEL_VERSION, computed when first asked for (reading the sources takes a while)."""
    if name == "MODEL_VERSION":
        return model_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_folder() -> Path:
    """$SYSTOLIC_STUDIO_CACHE, else the user cache folder."""
    if os.environ.get("SYSTOLIC_STUDIO_CACHE"):
        return Path(os.environ["SYSTOLIC_STUDIO_CACHE"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("systolic-studio")) / "models"


def model_key(kernel_text: str, defines: dict, sizes: dict, device: Device, design_id: str,
              layout: str = DEFAULT_LAYOUT) -> str:
    """The entry name of a design's model: everything the model depends on, hashed."""
    text = json.dumps({"kernel": kernel_text, "defines": {k: str(v) for k, v in sorted(defines.items())},
                       "sizes": {k: int(v) for k, v in sorted(sizes.items())}, "device": asdict(device),
                       "design": design_id, "layout": layout, "version": model_version()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class ModelCache:
    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else default_folder()
        self.discarded: list[str] = []  # keys of entries found corrupt (and deleted) by this object

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.model"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def load(self, key: str, design_id: str | None = None) -> PerformanceModel | None:
        """The model stored under `key`, or None (absent, or corrupt: then deleted)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        model = self._decode(data, design_id)
        if model is None:
            self.discarded.append(key)
            try:
                path.unlink()
            except OSError:
                pass
        return model

    @staticmethod
    def _decode(data: bytes, design_id: str | None) -> PerformanceModel | None:
        if not data.startswith(HEADER) or len(data) < len(HEADER) + 65:
            return None
        stream = io.BytesIO(data[len(HEADER):])
        digest, payload = stream.read(64).decode("ascii", "replace"), stream.read()[1:]
        if hashlib.sha256(payload).hexdigest() != digest:
            return None
        from engine.models.evaluate import PerformanceModel

        try:
            model = pickle.loads(payload)
        except Exception:  # noqa: BLE001 (whatever a damaged pickle raises, the entry is not used)
            return None
        if not isinstance(model, PerformanceModel) or (design_id is not None and model.design.id != design_id):
            return None
        return model

    def store(self, key: str, model: PerformanceModel) -> None:
        """Write atomically (a reader sees the old entry, none, or the whole new one)."""
        import cloudpickle

        payload = cloudpickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
        data = HEADER + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def prepared_model(space, design, device: Device) -> PerformanceModel:
    """A model built and with every expression compiled (the full evaluation is compiled lazily;
    evaluating once at the lowest bounds compiles it, so a cached copy evaluates at once)."""
    from engine.models.evaluate import PerformanceModel

    model = PerformanceModel(space, design, device)
    try:
        model.evaluate({p.name: p.lower for p in design.params if p.tunable})
    except Exception:  # noqa: BLE001 (a point the model cannot evaluate: it compiles on first use instead)
        pass
    return model


def cached_model(cache: ModelCache, key: str, space, design, device: Device) -> tuple[PerformanceModel, bool]:
    """(model, built): the cached model, or one built now and stored. Built once across processes:
    a caller finding no entry takes the entry's build lock (`building`), so that the others asking
    for the same model at once (the window's search process, selection process and model pool
    after a compile) wait for it and read the entry instead of building it again."""
    model = cache.load(key, design.id)
    if model is not None:
        return model, False
    with building(cache, key):
        model = cache.load(key, design.id)  # stored while this caller waited for the lock
        if model is not None:
            return model, False
        model = prepared_model(space, design, device)
        try:
            cache.store(key, model)
        except OSError:  # a read-only or full disk: the model still works, it is just not kept
            pass
    return model, True


@contextmanager
def building(cache: ModelCache, key: str):
    """Hold the build lock of an entry: an advisory lock (flock) on `<key>.building` beside it,
    released when the block ends or its process dies. Without flock (Windows) or a writable cache
    folder, no lock: concurrent callers may then each build the model, as before."""
    try:
        import fcntl

        path = cache.path(key).with_suffix(".building")
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+b")  # noqa: SIM115 (closed below, after the lock is released)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)  # waits while another process builds this model
        yield
    finally:
        handle.close()  # releases the lock


SHARED_MODELS = 16  # models kept by shared_model (a few MB each); the least recently used goes first
_shared: OrderedDict[str, PerformanceModel] = OrderedDict()
_shared_lock = threading.Lock()


def model_identity(space, design, device: Device, layout: str = DEFAULT_LAYOUT) -> str:
    """Everything a PerformanceModel is built from, hashed: the compiled kernel (its text, sizes,
    arrays and statements; the design space is a function of it), the design (its parameters
    included), every field of the device and the DRAM layout. The dataclasses' reprs print every field."""
    text = repr((space.kernel, design, device, layout))
    return hashlib.sha256(text.encode()).hexdigest()


def shared_model(space, design, device: Device, *, layout: str = DEFAULT_LAYOUT) -> PerformanceModel:
    """The model of `design` on `device` in `layout`, built once per process and kept (at most
    SHARED_MODELS of them): exporting the same design again, at other parameters or into another
    folder, needs no sympy work. Callers only read the model (evaluating it compiles its full
    expressions once, in place, which is what makes the second call quick)."""
    from engine.models.evaluate import PerformanceModel

    key = model_identity(space, design, device, layout)
    with _shared_lock:
        model = _shared.get(key)
        if model is not None:
            _shared.move_to_end(key)
            return model
    model = PerformanceModel(space, design, device, layout=layout)  # outside the lock: it takes seconds
    with _shared_lock:
        model = _shared.setdefault(key, model)
        _shared.move_to_end(key)
        while len(_shared) > SHARED_MODELS:
            _shared.popitem(last=False)
    return model
