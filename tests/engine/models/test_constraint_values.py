"""constraints.violations and feasible_mask for callers outside the CLI: a 0, a negative, a float, a
bool or a string value of a parameter is reported as a violation by name, never a ZeroDivisionError
or TypeError; a population holding 0s is masked out without a numpy warning."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.constraints import feasible_mask, violations
from engine.resources import KERNELS

GOOD = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4, "j_t2": 4, "k_t2": 4}


@pytest.fixture(scope="module")
def design():
    return compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"]).design("i-j__i-j.k")


def test_a_good_configuration_has_no_violations(design):
    assert violations(design, GOOD) == []
    assert violations(design, {k: np.int64(v) for k, v in GOOD.items()}) == []


@pytest.mark.parametrize("name, value, phrase", [
    ("i_t2", 0, "i_t2=0 must divide i_t1=16 (a positive factor)"),
    ("i_t2", -4, "i_t2=-4 is outside its bounds"),
    ("k_t2", 0, "k_t2=0 must be a power of two"),
    ("i_t1", 0, "i_t1=0 is outside its bounds"),
    ("i_t2", 4.0, "i_t2=4.0 is not an integer"),
    ("i_t2", "4", "i_t2='4' is not an integer"),
    ("i_t2", True, "i_t2=True is not an integer"),
    ("i_t1", None, "i_t1=None is not an integer"),
])
def test_odd_values_are_violations_not_exceptions(design, name, value, phrase):
    problems = violations(design, {**GOOD, name: value})
    assert any(phrase in p for p in problems), problems


def test_a_population_with_zeros_is_masked_without_warnings(design):
    population = {k: np.array([v, v, v], dtype=np.int64) for k, v in GOOD.items()}
    population["i_t2"][1] = 0
    population["k_t2"][2] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mask = feasible_mask(design, population)
    assert mask.tolist() == [True, False, False]
