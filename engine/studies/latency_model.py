"""Study (c): a max(compute, communication) latency model vs the full model (Odyssey Limitation 2,
Fig. 1 Design 2: TENET's model, no prologue or epilogue).

Per design the hybrid tuner runs twice: once minimising the full latency model (`hybrid`), once
minimising max(PE compute term, DRAM-facing I/O module terms) (`max-model`, SearchSpace objective
"max_compute_comm"). The configuration the max model ranks best is then scored by the full model
(SearchRun's Candidate already carries the full latency of the configuration that was best under
the search's objective). The loss is the max-model design's full-model throughput against the
hybrid's; the paper's 9% is the best such design against the best overall (Fig. 1).
"""
from __future__ import annotations

import time
from pathlib import Path

from engine.compiler.design_space import DesignSpace
from engine.models.device import Device
from engine.search.evolution import HybridSearch
from engine.studies.common import (
    COMMON_COLUMNS,
    TAIL_COLUMNS,
    BarPanel,
    Comparison,
    Log,
    StudyReport,
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

NAME = "latency_model"
METHODS = {"hybrid": "latency", "max-model": "max_compute_comm"}
COLUMNS = [*COMMON_COLUMNS, "max_model_cycles", "full_over_max", "relative_to_hybrid", "loss", *TAIL_COLUMNS]


def run_latency_model(space: DesignSpace, device: Device, *, designs: list[str] | None = None,
                      seconds: float | None = 2.0, samples: int | None = None, seeds: int = 1,
                      out_dir: str | Path = "study-latency-model", force: bool = False,
                      log: Log | None = None) -> StudyReport:
    started = time.perf_counter()
    s = setup(space, device, designs=designs, seconds=seconds, samples=samples, seeds=seeds, out_dir=out_dir,
              force=force, log=log)
    rows, by = [], {}
    for design, models in s.each_design():
        for method, objective in METHODS.items():
            search = models.space(objective)
            runs = s.run(lambda seed, ss=search: HybridSearch(ss, seed=seed), method, design.id)
            by[design.id, method] = runs
            row = run_row(runs, s)
            if runs.best is not None:
                score = models.score(runs.best.params)
                row["max_model_cycles"] = score["max_model_cycles"]
                row["full_over_max"] = score["latency_cycles"] / score["max_model_cycles"]
            rows.append(row)
    relate_to_hybrid(rows, by)
    ids = [d.id for d in s.designs]
    summary = summarise_loss({d: (by[d, "max-model"].throughput, by[d, "hybrid"].throughput) for d in ids})

    report = StudyReport(NAME, "max(compute, communication) latency model vs the full model",
                         "Limitation 2, Fig. 1 Design 2", s.describe(len(METHODS)), rows)
    report.comparisons += loss_comparisons("loss of optimising the max model", summary, "9% (Fig. 1, Design 2)")
    row_of = {(r["design"], r["method"]): r for r in rows}
    if summary.restricted_best is not None and row_of[summary.restricted_best, "max-model"].get("full_over_max"):
        r = row_of[summary.restricted_best, "max-model"]
        report.comparisons.append(Comparison(
            f"full latency / max-model estimate of the best max-model design ({summary.restricted_best})",
            times(r["full_over_max"], 3), "-"))
    header = ("design", "hybrid GOP/s", "max-model GOP/s", "loss", "full/max (max-model pick)")
    table = []
    for d in ids:
        r = row_of[d, "max-model"]
        table.append((d, gops(by[d, "hybrid"].throughput), gops(by[d, "max-model"].throughput),
                      percent(r["loss"], 1), times(r.get("full_over_max"), 3)))
    report.table = (header, table)
    report.notes.append("max model = max(PE compute term, DRAM-facing I/O module terms): no prologue, epilogue or "
                        "on-chip I/O; each pick is scored by the full model")
    report.notes.append("loss = 1 - max-model pick's throughput / hybrid's throughput; 'best design vs best design' "
                        "compares each side's best over all designs, as the paper's Fig. 1 does")
    report.values.update(loss_best=summary.best_design, loss_geomean=summary.geomean)

    write_csv(s.out / f"{NAME}.csv", COLUMNS, rows)
    top = max((by[d, "hybrid"].throughput for d in ids), default=0.0) or 1.0
    panels = [BarPanel("throughput / best hybrid", ids, {m: [by[d, m].throughput / top for d in ids] for m in METHODS},
                       hline=1.0, title="full-model throughput of each model's pick, normalised to the hybrid's best"),
              BarPanel("full latency / max-model estimate", ids,
                       {m: [row_of[d, m].get("full_over_max") for d in ids] for m in METHODS}, hline=1.0,
                       title="what the max model leaves out, at each pick")]
    bar_chart(s.out / f"{NAME}.png", "max(compute, communication) model vs full model", panels)
    report.files += [f"{NAME}.csv", f"{NAME}.png"]
    return finish(report, s.out, started)
