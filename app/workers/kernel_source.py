"""A kernel as the window's child processes receive it (KernelSource: text, file name, headers,
defines, sizes, device, AutoSA's --simd-touch-space) -> its compiled design space (compile_source,
once per process) and a design's model in the model cache (build_model). No Qt here: the search, selection and model-pool
processes import this module, and importing Qt would cost each of them ~0.3 s of CPU at start."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.models.cache import ModelCache, cached_model, model_key
from engine.models.device import load_device


@dataclass(frozen=True)
class KernelSource:
    """What compiles a kernel anywhere: its text, the file name it goes by, the folder holding the
    headers it includes, the -D defines and the sizes the window's compilation found, and the device
    at the kernel clock the window's device bar chose (None: the device file's clock), and whether it is
    compiled with AutoSA's --simd-touch-space (the designs with SIMD on a parallel space loop too)."""

    text: str
    file_name: str
    headers: str  # a folder whose *.h are copied next to the kernel
    defines: dict
    sizes: dict
    device: str
    clock_mhz: float | None = None
    simd_touch_space: bool = False

    def key(self, design_id: str) -> str:
        return model_key(self.text, self.defines, self.sizes, self.load_device(), design_id)

    def load_device(self):
        """The device every model, search and plot of this source uses: its clock included."""
        return _device(self.device, self.clock_mhz)


@lru_cache(maxsize=8)
def _device(name: str, clock_mhz: float | None = None):
    """The device read once (keys are computed for every design of every compile, on the GUI thread)."""
    return load_device(name, clock_mhz=clock_mhz)


_SPACES: dict[tuple, object] = {}  # per pool process: the kernel compiled once for all its designs


def compile_source(source: KernelSource):
    """The design space of `source`, compiled in a private folder (the window's work copy may change
    under a running build). Raises EngineError if it does not compile."""
    key = (source.text, source.file_name, tuple(sorted(source.defines.items())), source.simd_touch_space)
    if key not in _SPACES:
        from engine.compiler.design_space import compile_kernel  # islpy, sympy: in the child, when needed

        with tempfile.TemporaryDirectory(prefix="systolic-model-") as folder:
            for header in Path(source.headers).glob("*.h") if source.headers else ():
                shutil.copy(header, folder)
            path = Path(folder) / source.file_name
            path.write_text(source.text)
            _SPACES.clear()
            _SPACES[key] = compile_kernel(path, defines=source.defines, simd_touch_space=source.simd_touch_space)
    return _SPACES[key]


def build_model(source: KernelSource, design_id: str, cache_folder: str) -> tuple[str, bool]:
    """In a pool process: (design id, whether it was built) once the model is in the cache."""
    space = compile_source(source)
    device = source.load_device()
    _, built = cached_model(ModelCache(cache_folder), source.key(design_id), space, space.design(design_id), device)
    return design_id, built
