"""Study `networks`: each CNN dataflow over whole networks, VGG16 and ResNet50 (Odyssey Figs. 13-14).

Every (layer, dataflow) pair of the bundled workloads (resources/networks/) is searched on the
bundled CNN kernel as a network run on Dask (engine/network). As in the paper, the loop ordering is
fixed to the one that keeps the output on chip (<[o,h,w],[i,p,q]> for cnn.c); `designs` overrides that
choice. A dataflow whose space loops include the SIMD loop has two designs in that ordering (SIMD on
the space loop, as Odyssey's, or on a time loop); a dataflow's throughput on a layer is the better of
its designs there (`dataflow_answers`). Per network:
- Fig. 13: each dataflow's throughput on each layer, normalised to the highest throughput on the network;
- Fig. 14: per dataflow, the geometric mean over layers of its throughput / the layer's peak; the best
  dataflow's value is the paper's 77% (VGG16) and 57% (ResNet50);
- the best single array (one configuration for every layer), which the paper approximates by Fig. 14.
Where a share differs from the paper's by more than 10 points, the summary lists the layers that
pull the best dataflow down, with the bottleneck the model reports for them.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from engine.compiler.design_space import DesignSpace
from engine.errors import EngineError
from engine.models.device import DEVICES, Device, load_device
from engine.network.answers import NetworkAnswers, geometric_mean
from engine.network.details import pair_details
from engine.network.report import write_files
from engine.network.designs import network_designs
from engine.network.runner import SingleArrayOptions, job_of, run_network
from engine.network.store import NetworkStore
from engine.network.workload import load_network
from engine.resources import KERNELS
from engine.studies.common import BarPanel, Comparison, Log, StudyReport, bar_chart, finish, percent, prepare_output, write_csv

NAME = "networks"
CNN = KERNELS / "cnn.c"
PAPER_SHARE = {"vgg16": 0.77, "resnet50": 0.57}
PAPER_RANKING = "[o,h] and [o,w] best, then [o,i], [h,i], [w,i]; 2-D dataflows above 1-D"
PAPER_LAYER_BEST = {"vgg16": {"conv1-1": "[h,i] (CONV1, Fig. 11, Table 7)", "conv1-2": "[o,h] / [o,w] (CONV2)"}}


@dataclass(frozen=True)
class DataflowAnswer:
    """One dataflow over a network: per layer its best design's throughput, and their geometric mean share."""
    space_loops: tuple[str, ...]
    designs: tuple[str, ...]
    geomean_share: float  # geometric mean over layers of (its best GOP/s there / the layer's best)
    layer_gops: dict[str, float]  # layer -> its best GOP/s (0: nothing feasible)
    layer_design: dict[str, str | None]  # layer -> the design that gives it

    @property
    def main_design(self) -> str:
        """The design that serves most layers (ties: the first listed)."""
        chosen = [d for d in self.layer_design.values() if d]
        return max(self.designs, key=lambda d: chosen.count(d)) if chosen else self.designs[0]


def dataflow_answers(answers: NetworkAnswers) -> list[DataflowAnswer]:
    """Group the designs of a network run by dataflow (space loops), best geometric mean first."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for d in answers.designs:
        groups.setdefault(tuple(d.space_loops), []).append(d.id)
    out = []
    for loops, ids in groups.items():
        gops, chosen, shares = {}, {}, []
        for layer in answers.layers:
            g, best = max(((layer.designs.get(i) or 0.0, i) for i in ids), key=lambda t: t[0])
            gops[layer.name], chosen[layer.name] = g, best if g > 0 else None
            shares.append(g / layer.best_gops if g and layer.best_gops else 0.0)
        out.append(DataflowAnswer(loops, tuple(ids), geometric_mean(shares), gops, chosen))
    return sorted(out, key=lambda a: -a.geomean_share)


def output_ordering_designs(space: DesignSpace) -> list[str]:
    """The designs whose loop ordering keeps the written (output) array on chip."""
    written = {s.target.array for s in space.kernel.statements}
    return [d.id for d in space.designs if written & set(d.permutation.arrays)]


def run_networks(space: DesignSpace, device: Device, *, designs: list[str] | None = None, seconds: float | None = 1.0,
                 samples: int | None = None, seeds: int = 1, out_dir: str | Path = "study-networks",
                 force: bool = False, log: Log | None = None, networks: tuple[str, ...] = ("vgg16", "resnet50"),
                 workers: int | None = None, scheduler: str | None = None) -> StudyReport:
    started = time.perf_counter()
    out = prepare_output(out_dir, force=force)
    report = StudyReport(NAME, "Dataflows over whole networks", "Figs. 13-14, sec. 5.4",
                         f"bundled cnn.c on {', '.join(networks)} (resources/networks), {device.name}; "
                         + (f"{seconds:g} s" if seconds is not None else f"{samples} samples")
                         + " of hybrid search per (layer, design), the designs that keep the output on chip")
    figure14: dict[str, dict[str, float]] = {}
    names = []
    for workload in networks:
        network = load_network(workload)
        name = network.name
        names.append(name)
        if log:
            log(f"{NAME}: {name}, {len(network.layers)} layers")
        chosen = designs or None
        run, answers, status = run_network(
            CNN, network, db=out / "runs.sqlite", designs=chosen or _default_designs(network), seconds=seconds,
            samples=samples, device=device_key(device), scheduler=scheduler,
            workers=workers, single=SingleArrayOptions(designs=3), on_event=_progress(log))
        files = write_files(answers, out / name)
        report.files += [str(Path(name) / f.name) for f in files]
        rows = _figure13_rows(answers)
        write_csv(out / f"{NAME}-{name}-fig13.csv", ["layer", "design", "dataflow", "gops", "normalised"], rows)
        report.files.append(f"{NAME}-{name}-fig13.csv")
        dataflows = dataflow_answers(answers)
        figure14[name] = {_dataflow(d.space_loops): d.geomean_share for d in dataflows}
        report.rows += [{"network": name, "dataflow": _dataflow(d.space_loops), "design": d.main_design,
                         "geomean_share": d.geomean_share} for d in dataflows]
        with NetworkStore(out / "runs.sqlite") as store:
            pairs = {(p.layer, p.design): p for p in store.pairs(run.id)}
        _compare(report, name, answers, dataflows, run, pairs)
        if status != "finished":
            report.notes.append(f"{name}: the run was {status}; its numbers cover the pairs that finished")
    write_csv(out / f"{NAME}.csv", ["network", "dataflow", "design", "geomean_share"], report.rows)
    dataflows = list(dict.fromkeys(df for shares in figure14.values() for df in shares))
    bar_chart(out / f"{NAME}.png", "Geo. mean of throughput / per-layer peak, per dataflow (Odyssey Fig. 14)",
              [BarPanel("share of per-layer peak", dataflows,
                        {n: [figure14[n].get(df) for df in dataflows] for n in names}, hline=None)])
    report.files += [f"{NAME}.csv", f"{NAME}.png"]
    return finish(report, out, started)


def device_key(device: Device) -> str:
    """The device file a Device was read from (network runs store the name, workers reload it)."""
    for path in sorted(DEVICES.glob("*.json")):
        if load_device(path.stem) == device:
            return path.stem
    raise EngineError(f"device {device.name} is not one of the bundled devices ({DEVICES}): network runs need one")


def _default_designs(network) -> list[str]:
    return output_ordering_designs(network_designs(CNN, network).space)


def _dataflow(loops) -> str:
    return "[" + ",".join(loops) + "]"


def _progress(log: Log | None):
    if log is None:
        return None
    last = {"step": -1}

    def show(e) -> None:
        step = 10 * e.done // max(1, e.total)
        if step != last["step"]:
            last["step"] = step
            print(f"  pairs {e.done}/{e.total}" + (f", ETA {e.eta:.0f} s" if e.eta else ""), file=sys.stderr,
                  flush=True)
    return show


def _figure13_rows(answers: NetworkAnswers) -> list[dict]:
    top = max((l.best_gops or 0.0) for l in answers.layers) or 1.0
    loops = {d.id: d.space_loops for d in answers.designs}
    return [{"layer": l.name, "design": d, "dataflow": _dataflow(loops[d]), "gops": g,
             "normalised": (g or 0.0) / top} for l in answers.layers for d, g in l.designs.items()]


def _compare(report: StudyReport, name: str, answers: NetworkAnswers, ranked: list[DataflowAnswer], run,
             pairs: dict) -> None:
    best = ranked[0]
    one_d = [d.geomean_share for d in ranked if len(d.space_loops) == 1]
    two_d = [d.geomean_share for d in ranked if len(d.space_loops) == 2]
    order = ", ".join(f"{_dataflow(d.space_loops)} {percent(d.geomean_share)}" for d in ranked[:5])
    report.comparisons.append(Comparison(f"{name}: dataflows by geo. mean", order, PAPER_RANKING))
    if one_d and two_d:
        report.comparisons.append(Comparison(
            f"{name}: 2-D above 1-D", f"2-D mean {percent(sum(two_d) / len(two_d))}, best 1-D {percent(max(one_d))}, "
            f"worst 2-D {percent(min(two_d))}", "2-D above 1-D"))
    paper = PAPER_SHARE.get(name)
    report.comparisons.append(Comparison(f"{name}: best single dataflow ({_dataflow(best.space_loops)}), "
                                         "share of per-layer peak", percent(best.geomean_share),
                                         percent(paper) if paper else "-"))
    s = answers.single_array
    if s is not None:
        report.comparisons.append(Comparison(
            f"{name}: best single array ({s.design}, one configuration)",
            f"{percent(s.share_of_peak)} of the per-layer peak (network latency); geo. mean of layer shares "
            f"{percent(s.geomean_layer_share)}; {s.network_gops:.0f} GOP/s", "- (the paper reports Fig. 14 only)"))
    report.values[f"{name}_best_share"] = best.geomean_share
    network_peak = _network_peak_share(answers, best)
    report.values[f"{name}_best_share_of_network_peak"] = network_peak
    report.comparisons.append(Comparison(
        f"{name}: best single dataflow, geo. mean of throughput / the network's highest layer throughput "
        "(Fig. 13's normalisation, the other reading of 'peak layer-wise')", percent(network_peak),
        percent(paper) if paper else "-"))
    for layer, paper_best in PAPER_LAYER_BEST.get(name, {}).items():
        found = next((l for l in answers.layers if l.name == layer), None)
        if found is not None and found.best_design:
            loops = {d.id: d.space_loops for d in answers.designs}
            ranked = sorted(((g or 0.0, d) for d, g in found.designs.items()), reverse=True)[:3]
            ours = ", ".join(f"{_dataflow(loops[d])} {g:.0f}" for g, d in ranked)
            report.comparisons.append(Comparison(f"{name} {layer}: best dataflows (GOP/s)", ours, paper_best))
    if paper is not None and abs(best.geomean_share - paper) > 0.10:
        report.notes.append(_why(name, answers, best, run, pairs, paper))


def _network_peak_share(answers: NetworkAnswers, dataflow: DataflowAnswer) -> float:
    """Geometric mean over layers of the dataflow's throughput / the highest throughput of any layer."""
    top = max((l.best_gops or 0.0) for l in answers.layers)
    values = [dataflow.layer_gops[l.name] / top for l in answers.layers] if top else [0.0]
    if min(values) <= 0:
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _why(name: str, answers: NetworkAnswers, best: DataflowAnswer, run, pairs: dict, paper: float) -> str:
    """The layers where the best dataflow keeps least of the layer's peak, with their bottlenecks."""
    job = job_of(run)

    def share(layer) -> float:
        return best.layer_gops[layer.name] / layer.best_gops if layer.best_gops else 0.0
    worst = sorted(answers.layers, key=share)[:3]
    parts = []
    for layer in worst:
        design = best.layer_design[layer.name]
        p = pairs.get((layer.name, design))
        detail = ""
        if p is not None and p.best is not None:
            d = pair_details(job, layer.sizes, design, p.best.params)
            detail = (f", bottleneck {d['bottleneck']}, {d['dsp']:.0f} DSP, DSP efficiency "
                      f"{percent(d['dsp_efficiency'])}")
        parts.append(f"{layer.name} {percent(share(layer))} of its peak ({layer.best_design} there){detail}")
    above = best.geomean_share > paper
    near = sum(1 for l in answers.layers if share(l) >= 0.95)
    text = (f"{name}: the best single dataflow keeps {percent(best.geomean_share)} of the per-layer "
            f"peak, {'above' if above else 'below'} the paper's {percent(paper)} by more than 10 points. ")
    if above:
        text += (f"It is within 5% of the layer's best design on {near} of {len(answers.layers)} layers: the model "
                 "lets it reach the same throughput as the layer's best dataflow (both at the compute roof where "
                 "the layer is large enough), where the paper finds dataflows diverging per layer. Read against "
                 f"the network's highest layer throughput it keeps {percent(_network_peak_share(answers, best))}. "
                 "Its weakest layers: ")
    else:
        text += "Layers that pull it down: "
    return text + "; ".join(parts) + ". See docs/network.md for the model and architecture differences behind this."
