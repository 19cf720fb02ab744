"""Study `mm-architectures`: which of the MM designs wins and why (Odyssey Fig. 10, Table 6).

Every design of the kernel (by default the 27 of mm.c at 1024^3) is tuned (a one-layer network run
on Dask, engine/network). Fig. 10: each design's best throughput normalised to the best design, and
its DSP use. Table 6: per dataflow, the three loop orderings side by side: latency and PE count
relative to the ordering that keeps the output on chip (<[i,j],k> for MM), total BRAM and each
array's share of it. The cause of an ordering's loss is read from the model: the array whose I/O
modules' BRAM share grows most against the output-on-chip ordering, and the PEs it leaves.
"""
from __future__ import annotations

import time
from pathlib import Path

from engine.compiler.design_space import DesignSpace
from engine.models.device import Device
from engine.network.details import pair_details
from engine.network.runner import SingleArrayOptions, job_of, run_network
from engine.network.store import NetworkStore
from engine.network.workload import Layer, Network, kernel_size_names
from engine.studies.common import BarPanel, Comparison, Log, StudyReport, bar_chart, finish, percent, prepare_output, times, write_csv
from engine.studies.networks import device_key

NAME = "mm-architectures"
PAPER_TABLE6 = {"<[i,j],k>": "latency 1.00x, #PE 1.66x, BRAM 3,621: A 76% B 1% C 19%",
                "<[j,k],i>": "latency 1.65x, #PE 1.00x, BRAM 3,519: A 47% B 3% C 47%",
                "<[i,k],j>": "latency 1.64x, #PE 1.05x, BRAM 3,594: A 48% B 1% C 48%"}
COLUMNS = ["design", "dataflow", "ordering", "throughput_gops", "normalised", "latency_cycles", "latency_vs_output_on_chip",
           "pes", "pes_vs_fewest", "dsp", "dsp_pct", "bram18k", "bottleneck", "bram_share", "params"]


def run_mm_architectures(space: DesignSpace, device: Device, *, designs: list[str] | None = None,
                         seconds: float | None = 2.0, samples: int | None = None, seeds: int = 1,
                         out_dir: str | Path = "study-mm-architectures", force: bool = False,
                         log: Log | None = None, workers: int | None = None,
                         scheduler: str | None = None) -> StudyReport:
    started = time.perf_counter()
    out = prepare_output(out_dir, force=force)
    kernel = space.kernel
    sizes = {n: kernel.sizes[n] for n in sorted(kernel_size_names(kernel))}
    network = Network(f"{kernel.name}-" + "x".join(str(v) for v in sizes.values()), (Layer(kernel.name, sizes),))
    budget = f"{seconds:g} s" if seconds is not None else f"{samples} samples"
    report = StudyReport(NAME, "Architectures of the MM designs", "Fig. 10, Table 6, sec. 5.3",
                         f"{kernel.name} {' '.join(f'{k}={v}' for k, v in sizes.items())}, {device.name}; "
                         f"{budget} of hybrid search per design (a one-layer network run on Dask)")
    if log:
        log(f"{NAME}: {len(designs or space.designs)} designs x {budget}")
    run, answers, status = run_network(kernel.path, network, db=out / "runs.sqlite", designs=designs or (),
                                       seconds=seconds, samples=samples, device=device_key(device),
                                       scheduler=scheduler, workers=workers, single=SingleArrayOptions(designs=0))
    with NetworkStore(out / "runs.sqlite") as store:
        pairs = {p.design: p for p in store.pairs(run.id)}
    job = job_of(run)
    by_id = {d.id: d for d in space.designs}
    layer = answers.layers[0]
    rows = []
    for design_id, gops in layer.designs.items():
        design, pair = by_id[design_id], pairs.get(design_id)
        # a dataflow's SIMD-on-space-loop designs are a group of three orderings of their own
        row = {"design": design_id, "dataflow": _df(design.space_loops)
               + (f" simd({design.simd_loop})" if design.simd_on_space else ""), "ordering": str(design.permutation),
               "throughput_gops": gops, "normalised": layer.share(design_id)}
        if pair is not None and pair.best is not None:
            d = pair_details(job, sizes, design_id, pair.best.params)
            total = sum(d["bram18k_by_array"].values()) or 1.0
            row |= {"latency_cycles": d["latency_cycles"], "pes": d["pes"], "dsp": d["dsp"],
                    "dsp_pct": 100 * d["dsp"] / device.budget("DSP"), "bram18k": d["bram18k"],
                    "bottleneck": d["bottleneck"], "params": pair.best.params,
                    "bram_share": {a: v / total for a, v in d["bram18k_by_array"].items()}}
        rows.append(row)
    written = {s.target.array for s in kernel.statements}
    for dataflow in dict.fromkeys(r["dataflow"] for r in rows):
        group = [r for r in rows if r["dataflow"] == dataflow and r.get("latency_cycles")]
        anchor = next((r for r in group if written & set(by_id[r["design"]].permutation.arrays)), None)
        fewest = min((r["pes"] for r in group), default=None)
        for r in group:
            r["latency_vs_output_on_chip"] = r["latency_cycles"] / anchor["latency_cycles"] if anchor else None
            r["pes_vs_fewest"] = r["pes"] / fewest if fewest else None
    write_csv(out / f"{NAME}.csv", COLUMNS, [r | {"bram_share": _shares(r.get("bram_share"))} for r in rows])
    ids = [r["design"] for r in rows]
    bar_chart(out / f"{NAME}.png", f"MM designs: throughput and DSP use (Odyssey Fig. 10)", [
        BarPanel("throughput / best design", ids, {"normalised throughput": [r["normalised"] for r in rows]},
                 hline=1.0),
        BarPanel("DSP % of budget", ids, {"DSP": [r.get("dsp_pct") for r in rows]})])
    report.files += [f"{NAME}.csv", f"{NAME}.png"]
    report.rows = rows
    _compare(report, rows, by_id, written)
    report.table = (("design", "ordering", "GOP/s", "latency", "#PE", "BRAM", "BRAM by array", "bottleneck"),
                    [(r["design"], r["ordering"], f"{r['throughput_gops'] or 0:.0f}",
                      times(r.get("latency_vs_output_on_chip")), times(r.get("pes_vs_fewest")),
                      f"{r.get('bram18k') or 0:.0f}", _shares(r.get("bram_share")), r.get("bottleneck") or "-")
                     for r in rows])
    if status != "finished":
        report.notes.append(f"the run was {status}")
    return finish(report, out, started)


def _df(loops) -> str:
    return "[" + ",".join(loops) + "]"


def _shares(shares: dict | None) -> str:
    return " ".join(f"{a} {100 * v:.0f}%" for a, v in shares.items()) if shares else "-"


def _compare(report: StudyReport, rows: list[dict], by_id: dict, written: set[str]) -> None:
    found = [r for r in rows if r.get("latency_cycles")]
    if not found:
        report.notes.append("no design found a feasible configuration")
        return
    best = max(found, key=lambda r: r["throughput_gops"])
    report.comparisons.append(Comparison("best design", f"{best['design']} {best['dataflow']} {best['ordering']}, "
                                         f"{best['throughput_gops']:.0f} GOP/s", "[i,j] with <[i,j],k>"))
    dominated = []
    for dataflow in dict.fromkeys(r["dataflow"] for r in found):
        group = [r for r in found if r["dataflow"] == dataflow]
        winner = max(group, key=lambda r: r["throughput_gops"])
        dominated.append(written & set(by_id[winner["design"]].permutation.arrays) != set())
    report.comparisons.append(Comparison(
        "the output-on-chip ordering wins in its dataflow", f"{sum(dominated)} of {len(dominated)} dataflows",
        "every dataflow (<[i,j],k> dominates)"))
    for r in found:
        if not r["dataflow"].count(",") and r.get("latency_vs_output_on_chip") is not None:
            paper = PAPER_TABLE6.get(r["ordering"].replace(" ", ""), "-") if r["dataflow"] == "[i]" else "-"
            report.comparisons.append(Comparison(
                f"{r['dataflow']} {r['ordering']}",
                f"latency {times(r['latency_vs_output_on_chip'])}, #PE {times(r['pes_vs_fewest'])}, BRAM "
                f"{r['bram18k']:.0f}: {_shares(r['bram_share'])}", paper))
    for r in found:
        anchor = next((a for a in found if a["dataflow"] == r["dataflow"]
                       and written & set(by_id[a["design"]].permutation.arrays)), None)
        ratio = r.get("latency_vs_output_on_chip")
        if anchor is None or anchor is r or ratio is None or ratio <= 1.1:
            continue
        grown = max(r["bram_share"], key=lambda a: r["bram_share"][a] - anchor["bram_share"].get(a, 0.0))
        report.notes.append(
            f"{r['design']}: {times(ratio)} the latency of {anchor['design']}; the {grown} I/O modules take "
            f"{percent(r['bram_share'][grown])} of its {r['bram18k']:.0f} BRAM18K (vs {percent(anchor['bram_share'].get(grown, 0.0))}), "
            f"leaving {r['pes']:.0f} PEs against {anchor['pes']:.0f}")
