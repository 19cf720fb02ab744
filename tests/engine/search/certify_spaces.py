"""(kernel file, sizes, usable share of the U250) -> the compiled design space and the device, and
(..., design) -> the design's SearchSpace and the certifier's BoxBounds, each built once per test
session: the certifier's test modules (test_certify, test_certify_forms, test_certify_minlp) check
several of the same designs, and a model plus its box bounds take seconds to build (up to 20 s for
MM 48x40x56 i-j__i-k.j's bounds on a busy machine). Neither object changes when it is evaluated; a
test that changes `BoxBounds.forms` puts them back."""
from __future__ import annotations

import functools

from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.certify import BoxBounds
from engine.search.space import SearchSpace

SMALL_BUDGET = 0.05  # 5% of the U250, so that DSP and BRAM18K bind on small problems


@functools.cache
def _compiled(kernel: str, sizes: tuple[tuple[str, int], ...], ratio: float):
    space = compile_kernel(KERNELS / kernel, defines=[f"{k}={v}" for k, v in sizes])
    return space, load_device("u250", usable_ratio=ratio)


def space_and_device(kernel: str, sizes: dict[str, int], ratio: float = SMALL_BUDGET):
    return _compiled(kernel, tuple(sizes.items()), ratio)


@functools.cache
def _search(kernel: str, sizes: tuple[tuple[str, int], ...], design: str, ratio: float) -> SearchSpace:
    space, device = _compiled(kernel, sizes, ratio)
    return SearchSpace(PerformanceModel(space, space.design(design), device))


def search_space(kernel: str, sizes: dict[str, int], design: str, ratio: float = SMALL_BUDGET) -> SearchSpace:
    return _search(kernel, tuple(sizes.items()), design, ratio)


@functools.cache
def _bounds(kernel: str, sizes: tuple[tuple[str, int], ...], design: str, ratio: float) -> BoxBounds:
    return BoxBounds(_search(kernel, sizes, design, ratio))


def box_bounds(kernel: str, sizes: dict[str, int], design: str, ratio: float = SMALL_BUDGET) -> BoxBounds:
    return _bounds(kernel, tuple(sizes.items()), design, ratio)
