"""Design descriptor + concrete parameter values -> Vitis HLS C++ sources of the kernel."""
from __future__ import annotations

from engine.compiler.export.interface import ExportError


def kernel_sources(descriptor: dict, values: dict[str, int]) -> dict[str, str]:
    """{"kernel_kernel.cpp": ..., "kernel_kernel.h": ...}."""
    raise ExportError("the HLS kernel generator is not written yet")
