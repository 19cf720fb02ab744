import math

import numpy as np
import pytest

from engine.pods.tiling import tile_workloads
from engine.pods.workload import Gemm, PodWorkload

from pod_workloads import random_workload


@pytest.mark.parametrize("seed", range(5))
def test_tile_operations_cover_every_mac_once(seed):
    w = random_workload(seed)
    for rows, cols, kwargs in ((8, 8, {}), (5, 12, {}), (8, 4, {"conventional": True}), (8, 8, {"partition": 3})):
        tiling = tile_workloads(w, rows, cols, **kwargs)
        assert tiling.macs == w.macs
        assert np.all(tiling.op_depth <= rows) and np.all(tiling.op_cols <= cols)


def test_sosa_tiling_makes_the_most_tile_operations_that_fill_a_pod():
    w = PodWorkload("g", (Gemm("g", 1000, 300, 70),))
    sosa = tile_workloads(w, 32, 32)
    assert sosa.ops == math.ceil(1000 / 32) * math.ceil(300 / 32) * math.ceil(70 / 32)
    assert sosa.op_rows.max() == 32
    conventional = tile_workloads(w, 32, 32, conventional=True)
    assert conventional.ops == math.ceil(300 / 32) * math.ceil(70 / 32)
    assert conventional.op_rows.max() == 1000


def test_row_aligned_dependences_and_layer_barrier():
    w = PodWorkload("chain", (Gemm("a", 64, 8, 8), Gemm("b", 64, 8, 8, inputs=("a",)),
                              Gemm("c", 64, 8, 8, inputs=("b",), halo_rows=9),
                              Gemm("d", 16, 8, 8, weights_from=("c",), inputs=("c",))))
    t = tile_workloads(w, 8, 8)
    a, b, c, d = (list(np.flatnonzero(t.block_gemm == g)) for g in range(4))
    assert t.block_deps[b[3]] == (a[3],)                       # row block 3 reads rows 24..31 only
    assert t.block_deps[c[3]] == tuple(b[1:6])                # widened by the 9-row halo
    assert t.block_deps[d[0]] == tuple(c)                     # W from c: all of it
    barrier = tile_workloads(w, 8, 8, row_aligned=False)
    assert barrier.block_deps[b[3]] == tuple(a)


def test_chained_aggregation_links_partial_sums_over_the_reduction():
    t = tile_workloads(PodWorkload("g", (Gemm("g", 8, 24, 16),)), 8, 8, aggregation="chain")
    # one row block, l-major then j: ops (l, j) = (0,0) (0,1) (0,2) (1,0) (1,1) (1,2)
    assert list(t.op_pred) == [-1, 0, 1, -1, 3, 4]
