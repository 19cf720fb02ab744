"""The single array: one configuration for every layer, the network's latency the sum of the layers'."""
from __future__ import annotations

import numpy as np

from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.network.designs import envelope_sizes
from engine.network.single_array import NetworkSearchSpace, SingleTask, optimise_single_array
from engine.network.task import Job, PairTask, reference_space, run_pair, sized_space
from engine.network.workload import parse_json
from engine.resources import KERNELS

NETWORK = parse_json('''{"workloads": [
  {"name": "a", "params": {"i": 3, "o": 8, "r": 8, "c": 8, "p": 3, "q": 3}},
  {"name": "b", "params": {"i": 8, "o": 16, "r": 4, "c": 4, "p": 3, "q": 3}}]}''', "net.json")
DESIGN = "o-h__o-h-w.i-p-q"


def job(samples=300) -> Job:
    return Job(str(KERNELS / "cnn.c"), (KERNELS / "cnn.c").read_text(), (), tuple(envelope_sizes(NETWORK).items()),
               "u250", "evolution", None, samples)


def layers():
    return tuple((l.name, tuple(l.sizes.items())) for l in NETWORK.layers)


def test_the_network_space_sums_the_layers_and_keeps_the_largest_resources():
    j = job()
    device = load_device("u250")
    reference = reference_space(j)
    models = [PerformanceModel(s, s.design(DESIGN), device) for s in (sized_space(j, l.sizes) for l in NETWORK.layers)]
    space = NetworkSearchSpace(PerformanceModel(reference, reference.design(DESIGN), device), models)
    config = {p.name: np.array([p.lower, p.lower]) for p in reference.design(DESIGN).params if p.tunable}
    config["o_t1"] = np.array([4, 16])
    config["i_t1"] = np.array([2, 8])
    batch = space.evaluate(config)
    per_layer = [m.evaluate_fast(config) for m in models]
    assert np.array_equal(batch.latency, per_layer[0][0] + per_layer[1][0])
    assert np.array_equal(batch.dsp, np.maximum(per_layer[0][1], per_layer[1][1]))
    assert batch.feasible.all()
    assert space.operations == sum(m.symbolic.operations for m in models)


def test_the_single_array_is_searched_seeded_and_checked_exactly():
    j = job()
    seeds = []
    for layer in NETWORK.layers:
        pair = run_pair(PairTask(j, layer.name, tuple(layer.sizes.items()), DESIGN, 0))
        assert pair.best is not None and pair.error is None
        seeds.append(tuple(sorted(pair.best.params.items())))
    result = optimise_single_array(SingleTask(j, DESIGN, layers(), None, 300, 0, tuple(seeds)))
    assert result.params is not None
    assert result.network_latency_cycles == sum(result.layer_latency_cycles.values())
    assert set(result.layer_latency_cycles) == {"a", "b"}
    assert result.exact_check is not None and result.exact_check < 1e-9
    assert result.samples == 300 + len(seeds)
    # the same task twice gives the same array (a sample budget is deterministic)
    again = optimise_single_array(SingleTask(j, DESIGN, layers(), None, 300, 0, tuple(seeds)))
    assert again.params == result.params and again.network_latency_cycles == result.network_latency_cycles
