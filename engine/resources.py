"""Where bundled resources live (kernels, presets, devices) and how to read them."""
from __future__ import annotations

import json
from pathlib import Path

from engine.errors import KernelError

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
KERNELS = RESOURCES / "kernels"
DEFAULT_KERNEL = KERNELS / "mm.c"


def bundled_kernels() -> dict[str, Path]:
    return {path.stem: path for path in sorted(KERNELS.glob("*.c"))}


def kernel_presets(kernel: str | Path) -> dict[str, dict[str, int]]:
    """Named size presets of a bundled kernel (`small`, `paper`, ...), keyed by the file's stem."""
    presets = json.loads((KERNELS / "presets.json").read_text())
    return presets.get(Path(kernel).stem, {})


def preset_defines(kernel: str | Path, preset: str) -> list[str]:
    presets = kernel_presets(kernel)
    if preset not in presets:
        known = ", ".join(presets) or "none"
        raise KernelError(f"no size preset '{preset}' for {Path(kernel).stem} (known: {known})")
    return [f"{name}={value}" for name, value in presets[preset].items()]
