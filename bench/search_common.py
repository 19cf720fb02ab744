"""Shared by the search benchmarks: the MM 1024^3 problem on the U250 and the best-known table."""
from __future__ import annotations

import json
from pathlib import Path

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.best_known import fingerprint  # noqa: F401 (used by the scripts)
from engine.search.run import SearchRun
from engine.search.space import SearchSpace
from engine.search.methods import strategy_class

BEST_KNOWN = Path(__file__).with_name("best_known.json")
PROBLEM = {"kernel": "mm.c", "sizes": {"I": 1024, "J": 1024, "K": 1024}, "device": "u250",
           "usable_ratio": 0.7, "clock_mhz": 300, "dtype": "float"}


def problem():
    space = compile_kernel(KERNELS / PROBLEM["kernel"], defines=[f"{k}={v}" for k, v in PROBLEM["sizes"].items()])
    return space, load_device(PROBLEM["device"])


def search_space(space, device, design_id: str) -> SearchSpace:
    return SearchSpace(PerformanceModel(space, space.design(design_id), device))


def load_best_known() -> dict:
    if not BEST_KNOWN.exists():
        return {"_doc": "", "problem": PROBLEM, "designs": {}}
    return json.loads(BEST_KNOWN.read_text())


def run_method(search: SearchSpace, method: str, *, seconds: float, seed: int):
    return SearchRun(search, strategy_class(method)(search, seed=seed), seconds=seconds).run()
