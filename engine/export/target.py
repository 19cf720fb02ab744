"""The emitter interface: a target turns a `KernelPlan` into source files. Vitis HLS C++
(`hls_kernel.VitisHLSTarget`) is the first; another HLS dialect or a simulator model would be another."""
from __future__ import annotations

from abc import ABC, abstractmethod

from engine.export.plan import KernelPlan


class Target(ABC):
    @abstractmethod
    def sources(self, plan: KernelPlan, *, report: dict | None = None) -> dict[str, str]:
        """File name -> text."""
