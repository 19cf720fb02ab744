"""The vectorised Odyssey operators: children are always legal, non-divisor factors appear, and the
divisor-only mode keeps every array-partitioning factor a divisor of its problem size."""
from __future__ import annotations

import numpy as np
import pytest

from engine.compiler.design_space import compile_kernel
from engine.models.constraints import feasible_mask
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.space import SearchSpace
from engine.search.vector_genome import VectorGenome


@pytest.fixture(scope="module")
def space():
    kernel = compile_kernel(KERNELS / "mm.c", defines=["I=1000", "J=70", "K=96"])  # not powers of two
    return SearchSpace(PerformanceModel(kernel, kernel.design("i-j__i-j.k"), load_device()))


def test_mutation_and_crossover_keep_every_constraint(space):
    genome, rng = VectorGenome(space), np.random.default_rng(1)
    pop = genome.random(4000, rng)
    for _ in range(25):
        pop = genome.crossover(genome.mutate(pop, rng), genome.random(4000, rng), rng)
        assert feasible_mask(space.design, genome.to_columns(pop)).all()
    assert np.mean(space.loops[0].extent % pop[:, genome.t1[0]] != 0) > 0.3  # non-divisors are explored


def test_divisor_only_mode_stays_on_divisors(space):
    genome, rng = VectorGenome(space, divisors_only=True), np.random.default_rng(2)
    pop = genome.random(4000, rng)
    for _ in range(30):
        pop = genome.mutate(pop, rng)
        assert np.all(genome.extent[None, :] % pop[:, genome.t1] == 0)
        assert feasible_mask(space.design, genome.to_columns(pop)).all()


@pytest.mark.parametrize("packed", [True, False], ids=["int64 keys", "row-wise"])
def test_first_occurrences_finds_the_first_row_of_each_distinct_configuration(space, packed):
    genome = VectorGenome(space)
    if not packed:
        genome._place = None  # what a space too large for int64 keys gets
    rng = np.random.default_rng(4)
    pop = genome.random(300, rng)
    pop = np.vstack([pop, pop[rng.integers(0, 300, 200)]])[rng.permutation(500)]
    first = genome.first_occurrences(pop)
    assert list(first) == sorted(first)
    seen = set()
    expected = [i for i, row in enumerate(map(tuple, pop)) if not (row in seen or seen.add(row))]
    assert list(first) == expected


def test_divisors_match_brute_force_on_both_sides_of_the_table():
    from engine.search.vector_genome import TABLE_LIMIT, Divisors
    divisors = Divisors(10**9)
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.integers(1, TABLE_LIMIT, 300), rng.integers(TABLE_LIMIT, 10**6, 300),
                             [TABLE_LIMIT - 1, TABLE_LIMIT, 720720, 999_999_937, 10**9]])
    for v in values[:40].tolist() + values[-5:].tolist():
        assert divisors.of(v).tolist() == [d for d in range(1, v + 1) if v % d == 0] if v < 10**6 else \
            divisors.of(v).tolist() == sorted({d for k in range(1, int(v**0.5) + 1) if v % k == 0 for d in (k, v // k)})
    counts = divisors.count(values)
    assert counts.tolist() == [len(divisors.of(v)) for v in values.tolist()]
    index = rng.integers(0, 50, len(values))
    assert divisors.pick(values, index).tolist() == [
        divisors.of(v)[min(i, len(divisors.of(v)) - 1)] for v, i in zip(values.tolist(), index.tolist())]
    assert divisors.of(999_999_937).tolist() == [1, 999_999_937]  # a prime


def test_a_loop_of_a_billion_iterations_needs_no_billion_row_table():
    kernel = compile_kernel(KERNELS / "mm.c", defines=["I=1000000000", "J=16", "K=16"])
    space = SearchSpace(PerformanceModel(kernel, kernel.design("i-j__i-j.k"), load_device()))
    genome, rng = VectorGenome(space), np.random.default_rng(3)
    assert genome.divisors._table.nbytes < 16 * 10**6  # 2^14 rows, not 10^9
    pop = genome.random(500, rng)
    for _ in range(5):
        pop = genome.mutate(pop, rng)
        assert feasible_mask(space.design, genome.to_columns(pop)).all()
    divisors_only = VectorGenome(space, divisors_only=True)
    pop = divisors_only.mutate(divisors_only.random(200, rng), rng)
    assert np.all(10**9 % pop[:, divisors_only.t1[0]] == 0)
