"""Slow: more random configurations per design (partitioning factors up to the loop sizes), for
`pytest -m slow`. The default suite runs one configuration per design (test_csim_designs.py)."""
import dataclasses

import pytest
from csim_cases import cnn_cases, mm_cases, simulate_all, tensor_cases

SEEDS = (101, 202)
CASES = [dataclasses.replace(c, seed=c.seed + s, max_t1=64) for s in SEEDS
         for c in (*mm_cases(), *cnn_cases(), *tensor_cases())]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return simulate_all(CASES, tmp_path_factory.mktemp("csim_sweep"))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_design_passes_c_simulation_at_more_configurations(results, case):
    result = results[case.id]
    if isinstance(result, Exception):
        raise result
    assert result.passed, f"{result.summary}\n{result.command}"
