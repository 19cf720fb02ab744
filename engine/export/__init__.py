"""Export a design as a Vitis HLS project: the kernel's interface, its HLS C++ sources, and the project
around them."""
from engine.export.hls_kernel import kernel_sources
from engine.export.interface import (
    ExportError,
    KernelInterface,
    Port,
    kernel_interface,
)
from engine.export.project import export_project

__all__ = ["ExportError", "KernelInterface", "Port", "export_project", "kernel_interface", "kernel_sources"]
