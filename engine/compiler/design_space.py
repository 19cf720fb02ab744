"""Kernel file -> DesignSpace: every legal systolic array (dataflow x permutation class) with its
tuning parameters. This is the front end's pipeline, one pass per module:

  parse_kernel -> build_model -> analyze_dependences -> find_band -> check_uniform /
  check_space_loops -> enumerate_dataflows x permutation_classes -> PE choices and parameters.
Where the band as written is not permutable because scop-local arrays are reused, the kernel with
them expanded (expand_local_arrays) goes through the same passes instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.compiler.band import Band, find_band, runs_several_statements
from engine.compiler.dependences import Dependences, analyze_dependences
from engine.compiler.design import Design
from engine.compiler.expansion import expand_local_arrays
from engine.compiler.frontend import parse_kernel
from engine.compiler.ir import Kernel
from engine.compiler.legality import check_space_loops, check_uniform
from engine.compiler.permutation import permutation_classes
from engine.compiler.polyhedral import PolyhedralModel, build_model
from engine.compiler.space_time import enumerate_dataflows
from engine.compiler.tuning import (choose_simd, parallel_loops, simd_candidates, space_simd_choices,
                                   tuning_parameters)
from engine.errors import DesignError, LegalityError


@dataclass(frozen=True)
class DesignSpace:
    kernel: Kernel
    model: PolyhedralModel
    dependences: Dependences
    band: Band
    designs: tuple[Design, ...]
    simd_touch_space: bool = False  # compiled with AutoSA's --simd-touch-space (explore_designs)

    def design(self, key: str) -> Design:
        """A design by id or by name."""
        for design in self.designs:
            if key in (design.id, design.name):
                return design
        known = ", ".join(d.id for d in self.designs)
        raise DesignError(f"no design '{key}' for {self.kernel.name}; known ids: {known}")


def _analysed(kernel: Kernel):
    model = build_model(kernel)
    deps = analyze_dependences(model)
    return kernel, model, deps, find_band(model, deps)


def _band_as_written(kernel: Kernel):
    """The kernel, its model, dependences and band; where the band as written is not permutable
    and reused scop-local arrays are why (AutoSA's LU), the kernel with them expanded
    (expansion.py) if that makes it permutable. A kernel whose written band is permutable keeps
    its arrays as written, so its designs do not change."""
    try:
        found = _analysed(kernel)
    except LegalityError as exc:
        found, error = None, exc
    if found is not None and found[3].origin == "written":
        return found
    expanded = expand_local_arrays(kernel)
    if expanded is not kernel:
        try:
            retried = _analysed(expanded)
        except LegalityError:
            retried = None
        if retried is not None and retried[3].origin == "written":
            return retried
    if found is None:
        raise error
    return found


def explore_designs(kernel: Kernel, *, simd_touch_space: bool = False) -> DesignSpace:
    """`simd_touch_space` (AutoSA's --simd-touch-space, off by default): also the designs with SIMD
    on a parallel space loop, each lane its own output (tuning.space_simd_choices)."""
    kernel, model, deps, band = _band_as_written(kernel)
    check_uniform(kernel, band, deps)
    check_space_loops(kernel, band, deps)
    classes = permutation_classes(model, band)
    parallel = parallel_loops(band, deps)
    designs = []
    whole_tiles = runs_several_statements(kernel, band)  # one tile per loop: no latency hiding, no SIMD either
    for dataflow in enumerate_dataflows(model, band, deps):
        simd = choose_simd(simd_candidates(kernel, band, deps, dataflow.space_loops), kernel, band)
        # the SIMD-on-a-space-loop variant (AutoSA --simd-touch-space) follows its twin in each class
        on_space = space_simd_choices(kernel, band, deps, dataflow.space_loops, touch_space=simd_touch_space)
        variants = []
        for choice in [None] if whole_tiles else [simd, *on_space]:
            hiding = () if whole_tiles else tuple(l for l in parallel if l != (choice.loop if choice else None)
                                                  and band.extents[band.index(l)] > 1)
            variants.append((hiding, choice, tuning_parameters(kernel, band, list(hiding), choice)))
        for perm in classes:
            for hiding, choice, params in variants:
                designs.append(Design(kernel.name, band.loops, band.extents, dataflow, perm, hiding, choice, params))
    return DesignSpace(kernel, model, deps, band, tuple(designs), simd_touch_space)


def compile_kernel(path: str | Path, *, defines=None, simd_info=None, scop: int | None = None,
                   simd_touch_space: bool = False) -> DesignSpace:
    """`scop`: which #pragma scop region of a file with several (1 = the first; frontend.parse_kernel);
    `simd_touch_space`: see explore_designs."""
    return explore_designs(parse_kernel(path, defines=defines, simd_info=simd_info, scop=scop),
                           simd_touch_space=simd_touch_space)
