"""Study (d): pruning to the lowest off-chip traffic vs the full tuner (Odyssey Limitation 3, Fig. 1
Design 3, Lesson 2; Marvel's heuristic).

Per design, each scored by the full model:
- `hybrid`: the hybrid tuner minimising the full latency model;
- `min-traffic`: the hybrid tuner minimising off-chip bytes (SearchSpace objective "offchip"): the
  first configuration it finds at the lowest traffic it reaches, whatever its latency;
- `traffic-pruned`: Marvel's flow, the most favourable reading of it: keep only configurations
  moving no more than that lowest traffic, then search them for the lowest full latency
  (evolutionary search seeded with the `min-traffic` pick, in a space where more traffic is
  infeasible). This is "the best design found which minimizes the off-chip data communication".
The headline loss is `traffic-pruned` against `hybrid` (best design vs best design, as Fig. 1).
"""
from __future__ import annotations

import time
from pathlib import Path

from engine.compiler.design_space import DesignSpace
from engine.models.device import Device
from engine.search.evolution import EvolutionarySearch, HybridSearch
from engine.studies.common import (
    COMMON_COLUMNS,
    TAIL_COLUMNS,
    BarPanel,
    Comparison,
    Log,
    StudyReport,
    TrafficCapSpace,
    bar_chart,
    finish,
    gops,
    loss_comparisons,
    percent,
    relate_to_hybrid,
    run_row,
    setup,
    summarise_loss,
    times,
    write_csv,
)

NAME = "traffic_pruning"
METHODS = ("hybrid", "min-traffic", "traffic-pruned")
COLUMNS = [*COMMON_COLUMNS, "offchip_bytes", "traffic_vs_min", "relative_to_hybrid", "loss", *TAIL_COLUMNS]


def run_traffic_pruning(space: DesignSpace, device: Device, *, designs: list[str] | None = None,
                        seconds: float | None = 2.0, samples: int | None = None, seeds: int = 1,
                        out_dir: str | Path = "study-traffic-pruning", force: bool = False,
                        log: Log | None = None) -> StudyReport:
    started = time.perf_counter()
    s = setup(space, device, designs=designs, seconds=seconds, samples=samples, seeds=seeds, out_dir=out_dir,
              force=force, log=log)
    rows, by = [], {}
    for design, models in s.each_design():
        latency, offchip = models.space("latency"), models.space("offchip")
        by[design.id, "hybrid"] = s.run(lambda seed: HybridSearch(latency, seed=seed), "hybrid", design.id)
        minimum = s.run(lambda seed: HybridSearch(offchip, seed=seed), "min-traffic", design.id)
        by[design.id, "min-traffic"] = minimum
        picks = {seed: r.best.params for seed, r in enumerate(minimum.results) if r.best is not None}

        def pruned(seed: int):
            if seed not in picks:
                return None
            cap = models.score(picks[seed])["offchip_bytes"]
            return EvolutionarySearch(TrafficCapSpace(models.model, cap), seed=seed, seeds=[picks[seed]])

        by[design.id, "traffic-pruned"] = s.run(pruned, "traffic-pruned", design.id)
        least = min((models.score(p)["offchip_bytes"] for p in picks.values()), default=None)
        for method in METHODS:
            row = run_row(by[design.id, method], s)
            best = by[design.id, method].best
            if best is not None:
                row["offchip_bytes"] = models.score(best.params)["offchip_bytes"]
                row["traffic_vs_min"] = row["offchip_bytes"] / least if least else None
            rows.append(row)
    relate_to_hybrid(rows, by)
    ids = [d.id for d in s.designs]
    summary = summarise_loss({d: (by[d, "traffic-pruned"].throughput, by[d, "hybrid"].throughput) for d in ids})
    raw = summarise_loss({d: (by[d, "min-traffic"].throughput, by[d, "hybrid"].throughput) for d in ids})
    row_of = {(r["design"], r["method"]): r for r in rows}

    report = StudyReport(NAME, "Pruning to the lowest off-chip traffic vs the full tuner",
                         "Limitation 3, Fig. 1 Design 3, Lesson 2", s.describe(len(METHODS)), rows)
    report.comparisons += loss_comparisons("loss of traffic pruning (best latency at min traffic)", summary,
                                           "45% (Fig. 1, Design 3)")
    report.comparisons.append(Comparison("loss of the first min-traffic configuration found, best vs best",
                                         percent(raw.best_design, 1), "45% (Fig. 1, Design 3)"))
    if summary.full_best is not None:
        r = row_of[summary.full_best, "hybrid"]
        report.comparisons.append(Comparison(f"off-chip traffic of the hybrid's best design ({summary.full_best}) "
                                             "/ that design's minimum", times(r.get("traffic_vs_min"), 1),
                                             "4.9x (Table 4)"))
    header = ("design", "hybrid GOP/s", "min-traffic", "traffic-pruned", "loss", "hybrid traffic/min")
    report.table = (header, [(d, gops(by[d, "hybrid"].throughput), gops(by[d, "min-traffic"].throughput),
                              gops(by[d, "traffic-pruned"].throughput), percent(row_of[d, "traffic-pruned"]["loss"], 1),
                              times(row_of[d, "hybrid"].get("traffic_vs_min"), 1)) for d in ids])
    report.notes.append("min traffic = the lowest off-chip bytes the hybrid tuner reached minimising traffic; "
                        "traffic-pruned = the lowest full-model latency among configurations at that traffic")
    report.notes.append("loss = 1 - throughput / hybrid's throughput (full model); 'best design vs best design' "
                        "compares each side's best over all designs, as the paper's Fig. 1 does")
    report.values.update(loss_best=summary.best_design, loss_geomean=summary.geomean,
                         loss_first_min_traffic=raw.best_design)

    write_csv(s.out / f"{NAME}.csv", COLUMNS, rows)
    top = max((by[d, "hybrid"].throughput for d in ids), default=0.0) or 1.0
    panels = [BarPanel("throughput / best hybrid", ids, {m: [by[d, m].throughput / top for d in ids] for m in METHODS},
                       hline=1.0, title="throughput normalised to the hybrid's best design"),
              BarPanel("off-chip bytes / design's minimum", ids,
                       {m: [row_of[d, m].get("traffic_vs_min") for d in ids] for m in METHODS}, log=True,
                       hline=1.0, title="off-chip traffic of each pick")]
    bar_chart(s.out / f"{NAME}.png", "Pruning by off-chip traffic", panels)
    report.files += [f"{NAME}.csv", f"{NAME}.png"]
    return finish(report, s.out, started)
