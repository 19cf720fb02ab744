"""Pair results + single-array results -> the three answers of a network run (plain records).

(a) per layer: each design's best throughput and the layer's best design (Odyssey Fig. 11);
(b) per design: the geometric mean over layers of its throughput relative to each layer's best
    (Figs. 13-14): the best single dataflow for the network, as the paper approximates it;
(c) the best single array: one design and one configuration for every layer, with the network's
    latency and its share of the per-layer peak = sum of each layer's best latency / the array's
    network latency (the network's throughput against running every layer on its own best array).
A design that found nothing feasible on a layer counts 0 there, so its geometric mean is 0.
Throughputs are the model's (Candidate.throughput_gops); a layer's operations are read back from its
best pair (throughput x time), never recomputed from the sizes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.compiler.design import Design
from engine.network.single_array import SingleArrayResult
from engine.network.task import PairResult
from engine.network.workload import Layer


@dataclass(frozen=True)
class LayerAnswer:
    name: str
    sizes: dict[str, int]
    best_design: str | None
    best_gops: float | None
    best_latency_cycles: float | None
    designs: dict[str, float | None]  # design id -> best GOP/s (None: nothing feasible)

    def share(self, design: str) -> float:
        g = self.designs.get(design)
        return g / self.best_gops if g and self.best_gops else 0.0


@dataclass(frozen=True)
class DesignAnswer:
    id: str
    space_loops: tuple[str, ...]
    permutation: str
    geomean_share: float
    layers_feasible: int


@dataclass(frozen=True)
class SingleArrayAnswer:
    design: str
    params: dict[str, int]
    network_latency_cycles: float
    share_of_peak: float
    network_gops: float
    layer_share: dict[str, float]  # the layer's peak (lowest known) latency / its latency on this array
    geomean_layer_share: float
    dsp: float
    bram18k: float
    exact_check: float | None


@dataclass(frozen=True)
class NetworkAnswers:
    network: str
    layers: tuple[LayerAnswer, ...]
    designs: tuple[DesignAnswer, ...]  # best geometric mean first
    single_array: SingleArrayAnswer | None
    single_candidates: tuple[SingleArrayAnswer, ...]  # every design optimised as a single array, best first
    complete: bool  # every (layer, design) pair has a result

    def to_json(self) -> dict:
        s = self.single_array
        return {
            "network": self.network,
            "complete": self.complete,
            "layers": [{"name": l.name, "sizes": l.sizes, "best_design": l.best_design, "best_gops": l.best_gops,
                        "designs": l.designs} for l in self.layers],
            "designs": [{"id": d.id, "space_loops": list(d.space_loops), "permutation": d.permutation,
                         "geomean_share": d.geomean_share} for d in self.designs],
            "single_array": None if s is None else {
                "design": s.design, "params": s.params, "network_latency_cycles": s.network_latency_cycles,
                "share_of_peak": s.share_of_peak, "network_gops": s.network_gops,
                "geomean_layer_share": s.geomean_layer_share, "layer_share": s.layer_share,
                "dsp": s.dsp, "bram18k": s.bram18k},
        }


def geometric_mean(values: list[float]) -> float:
    if not values or any(v <= 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


def network_answers(network: str, layers: tuple[Layer, ...], designs: tuple[Design, ...], pairs: list[PairResult],
                    singles: list[SingleArrayResult], clock_mhz: float) -> NetworkAnswers:
    found = {(p.layer, p.design): p for p in pairs}
    layer_answers = []
    operations: dict[str, float] = {}  # per layer, read back from its best pair
    for layer in layers:
        per_design: dict[str, float | None] = {}
        best: PairResult | None = None
        for d in designs:
            p = found.get((layer.name, d.id))
            per_design[d.id] = float(p.best.throughput_gops) if p and p.best else None
            if p and p.best and (best is None or p.best.latency_cycles < best.best.latency_cycles):
                best = p
        if best is not None:
            operations[layer.name] = best.best.throughput_gops * 1e9 * best.best.latency_cycles / (clock_mhz * 1e6)
        layer_answers.append(LayerAnswer(
            layer.name, dict(layer.sizes), best.design if best else None,
            float(best.best.throughput_gops) if best else None,
            float(best.best.latency_cycles) if best else None, per_design))
    design_answers = sorted(
        (DesignAnswer(d.id, d.space_loops, str(d.permutation),
                      geometric_mean([l.share(d.id) for l in layer_answers]),
                      sum(1 for l in layer_answers if l.designs.get(d.id))) for d in designs),
        key=lambda a: -a.geomean_share)
    candidates = []
    usable = [s for s in singles if s.params is not None and s.network_latency_cycles is not None]
    # a layer's peak: the lowest latency known for it, its own searches' or a single array's (which
    # may pad it to tiles its own search could not choose)
    peak = {l.name: min([l.best_latency_cycles] + [s.layer_latency_cycles[l.name] for s in usable])
            for l in layer_answers if l.best_latency_cycles is not None}
    for s in usable if len(peak) == len(layer_answers) else ():
        shares = {l.name: peak[l.name] / s.layer_latency_cycles[l.name] for l in layer_answers}
        seconds = s.network_latency_cycles / (clock_mhz * 1e6)
        candidates.append(SingleArrayAnswer(
            s.design, dict(s.params), float(s.network_latency_cycles), sum(peak.values()) / s.network_latency_cycles,
            sum(operations.values()) / seconds / 1e9, shares, geometric_mean(list(shares.values())),
            float(s.dsp), float(s.bram18k), s.exact_check))
    candidates.sort(key=lambda c: c.network_latency_cycles)
    complete = all((l.name, d.id) in found for l in layers for d in designs)
    return NetworkAnswers(network, tuple(layer_answers), tuple(design_answers),
                          candidates[0] if candidates else None, tuple(candidates), complete)
