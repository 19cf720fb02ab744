"""Self-consistency: every module's symbolic loop counts equal what isl's AST executes, for random legal
configurations (non-divisor tiling included) of the designs of mm, cnn and mttkrp: by default a design
of every space loop set, array shape x permutation class and SIMD variant (design_strata.py), every
design under `pytest -m slow`."""
from __future__ import annotations

import numpy as np
import pytest
from design_strata import cover, design_strata

from engine.compiler.architecture.ast_check import check_counts
from engine.compiler.architecture.build import build_architecture
from engine.compiler.design_space import compile_kernel
from engine.models.packing_inference import PackingInference
from engine.models.sampling import random_configuration
from engine.resources import KERNELS

# sizes with no common divisors, so random tilings rarely divide them
KERNEL_SIZES = {
    "mm": ["I=20", "J=18", "K=22"],
    "cnn": ["O=6", "I=5", "H=7", "W=6", "P=3", "Q=3"],
    "mttkrp": ["I=6", "J=5", "K=7", "L=6"],
}


@pytest.mark.parametrize("kernel", sorted(KERNEL_SIZES))
def test_symbolic_counts_equal_isl_ast_counts(kernel):
    _check(kernel, every_design=False)


@pytest.mark.slow  # every design: test_symbolic_counts_equal_isl_ast_counts checks one of every stratum
@pytest.mark.parametrize("kernel", sorted(KERNEL_SIZES))
def test_symbolic_counts_equal_isl_ast_counts_for_every_design(kernel):
    _check(kernel, every_design=True)


def _check(kernel: str, every_design: bool) -> None:
    space = compile_kernel(KERNELS / f"{kernel}.c", defines=KERNEL_SIZES[kernel])
    designs = space.designs if every_design else cover(space.designs, lambda d: design_strata(kernel, d.id))
    rng = np.random.default_rng(2026)
    checked, mismatches = 0, []
    for design in designs:
        # the hardware and its packing factors as the model infers them (the latency model is not needed)
        architecture = build_architecture(space, design)
        packing = PackingInference(design, architecture)
        for _ in range(2):
            params = random_configuration(design, rng)
            values = {**params, **{k: int(v) for k, v in packing.inferred(params).items()}}
            for quantity, symbolic, ast in check_counts(space, design, architecture, values):
                checked += 1
                if symbolic != ast:
                    mismatches.append((design.id, params, quantity, symbolic, ast))
    assert mismatches == []
    assert checked >= 8 * len(designs)  # PE, transfers and buffers of every design were compared
