"""The network's designs: compiled once at the envelope, remade at each layer's sizes; and the padding
identity the single-array search relies on (a tile larger than the layer = the layer padded to it)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.network.designs import envelope_sizes, layer_space, loop_defines, network_designs
from engine.network.workload import WorkloadError, parse_json
from engine.resources import KERNELS

CNN = KERNELS / "cnn.c"
NETWORK = parse_json('''{"workloads": [
  {"name": "first", "params": {"i": 3, "o": 16, "r": 12, "c": 12, "p": 3, "q": 3}},
  {"name": "pointwise", "params": {"i": 16, "o": 32, "r": 6, "c": 6, "p": 1, "q": 1}}]}''', "net.json")


@pytest.fixture(scope="module")
def designs():
    return network_designs(CNN, NETWORK)


def test_every_layer_gets_the_envelope_designs_with_their_simd_loop(designs):
    assert designs.envelope == {"I": 16, "O": 32, "H": 12, "W": 12, "P": 3, "Q": 3}
    # Odyssey's 30 CNN designs and the 12 with SIMD on the space loop i, although a 1x1 layer alone has more
    assert len(designs.ids) == 42
    for layer in NETWORK.layers:
        space = layer_space(CNN, designs.space, layer.sizes)
        assert [d.id for d in space.designs] == designs.ids
        for mine, reference in zip(space.designs, designs.space.designs):
            assert mine.simd_loop == reference.simd_loop
            assert dict(zip(mine.band_loops, mine.problem_size)) == {
                "o": layer.sizes["O"], "h": layer.sizes["H"], "w": layer.sizes["W"], "i": layer.sizes["I"],
                "p": layer.sizes["P"], "q": layer.sizes["Q"]}
    assert loop_defines(CNN, envelope_sizes(NETWORK)) == {"o": "O", "h": "H", "w": "W", "i": "I", "p": "P", "q": "Q"}


def test_a_kernel_that_does_not_take_the_sizes_is_refused():
    with pytest.raises(WorkloadError, match="layer first: no size for J, K"):
        network_designs(KERNELS / "mm.c", NETWORK)


@pytest.mark.parametrize("design_index", [0, 12, 20])
def test_tiles_larger_than_the_layer_model_the_layer_padded_to_them(designs, design_index):
    """The first layer (I=3, H=12) at i_t1=4, h_t1=16 is the layer padded to I=4, H=16."""
    small = {"I": 3, "O": 16, "H": 12, "W": 12, "P": 3, "Q": 3}
    padded = {**small, "I": 4, "H": 16}
    device = load_device("u250")
    models = []
    for sizes in (small, padded):
        space = layer_space(CNN, designs.space, sizes)
        models.append(PerformanceModel(space, space.designs[design_index], device))
    design = models[1].design
    rng = np.random.default_rng(design_index)
    n = 64
    config = {}
    for p in design.params:
        if p.role == "array_partition":
            config[p.name] = rng.integers(1, p.upper + 1, n)
    config["i_t1"], config["h_t1"] = np.full(n, 4), np.full(n, 16)
    for p in design.params:
        if p.role in ("latency_hiding", "simd"):
            t1 = config[f"{p.loop}_t1"]
            config[p.name] = np.array([max(d for d in range(1, min(t, p.upper) + 1) if t % d == 0
                                           and (p.role != "simd" or d & (d - 1) == 0)) for t in t1])
    for a, b in zip(models[0].evaluate_fast(config), models[1].evaluate_fast(config)):
        assert np.array_equal(a, b)
