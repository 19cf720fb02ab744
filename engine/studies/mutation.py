"""Study (b): divisor-only tiling vs the hybrid mutation (Odyssey Table 3, Fig. 15; Limitation 1).

Per design three tuners, each scored by the full model:
- `hybrid`: the Odyssey tuner (MP seed + evolutionary search with the hybrid mutation);
- `evolution`: the same evolutionary search without the MP seed (isolates the mutation's effect);
- `divisor-only`: the evolutionary search restricted to divisor array-partitioning factors
  (factorization-only mutation, divisor newcomers, unseeded: an MP seed could be a non-divisor).
The loss is divisor-only against hybrid (common.py explains the two summaries); the paper's 39% is
Design 1 vs Design 4 of its Fig. 1, the best divisor-only design against the best overall.
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
    bar_chart,
    finish,
    gops,
    loss,
    loss_comparisons,
    percent,
    relate_to_hybrid,
    run_row,
    setup,
    summarise_loss,
    times,
    write_csv,
)

NAME = "mutation"
METHODS = ("hybrid", "evolution", "divisor-only")
COLUMNS = [*COMMON_COLUMNS, "relative_to_hybrid", "loss", "divisors_only", *TAIL_COLUMNS]
PAPER_TABLE3 = {"divisor-only": "0.61x, BRAM 48%, DSP 60%: T1 = 64,128,128, T2 = 16,4,8",
                "hybrid": "1.00x, BRAM 99%, DSP 100%: T1 = 129,130,64, T2 = 3,13,4"}


def _divisors(params: dict | None, space) -> bool | None:
    if not params:
        return None
    return all(n % params[f"{loop}_t1"] == 0 for loop, n in zip(space.band.loops, space.band.extents))


def _tiling(params: dict | None, loops) -> str:
    if not params:
        return "-"
    t1 = ",".join(str(params.get(f"{l}_t1", "-")) for l in loops)
    t2 = ",".join(str(params.get(f"{l}_t2", 1)) for l in loops)
    return f"T1 = {t1}, T2 = {t2}"


def run_mutation(space: DesignSpace, device: Device, *, designs: list[str] | None = None, seconds: float | None = 2.0,
                 samples: int | None = None, seeds: int = 1, out_dir: str | Path = "study-mutation",
                 force: bool = False, log: Log | None = None) -> StudyReport:
    started = time.perf_counter()
    s = setup(space, device, designs=designs, seconds=seconds, samples=samples, seeds=seeds, out_dir=out_dir,
              force=force, log=log)
    makers = {"hybrid": lambda ss: (lambda seed: HybridSearch(ss, seed=seed)),
              "evolution": lambda ss: (lambda seed: EvolutionarySearch(ss, seed=seed)),
              "divisor-only": lambda ss: (lambda seed: EvolutionarySearch(ss, seed=seed, divisors_only=True))}
    rows, by = [], {}
    for design, models in s.each_design():
        search = models.space("latency")
        for method in METHODS:
            runs = s.run(makers[method](search), method, design.id)
            by[design.id, method] = runs
            rows.append(run_row(runs, s) | {"divisors_only": _divisors(runs.best and runs.best.params, space)})
    relate_to_hybrid(rows, by)
    ids = [d.id for d in s.designs]
    summary = summarise_loss({d: (by[d, "divisor-only"].throughput, by[d, "hybrid"].throughput) for d in ids})
    mutation_only = summarise_loss({d: (by[d, "divisor-only"].throughput, by[d, "evolution"].throughput) for d in ids})

    report = StudyReport(NAME, "Divisor-only vs hybrid mutation", "Table 3, Fig. 15, Fig. 1 Design 1, Limitation 1",
                         s.describe(len(METHODS)), rows)
    report.comparisons += loss_comparisons("loss of divisor-only tiling vs hybrid", summary,
                                           "39% (Fig. 1; Table 3: 0.61x)")
    report.comparisons.append(Comparison("loss of divisor-only vs evolution without MP seed, best vs best",
                                         percent(mutation_only.best_design, 1), "-"))
    loops = space.band.loops
    for method, design in (("divisor-only", summary.restricted_best), ("hybrid", summary.full_best)):
        if design is None or by[design, method].best is None:
            continue
        c = by[design, method].best
        dsp, bram = c.dsp / device.budget("DSP"), c.bram18k / device.budget("BRAM18K")
        rel = by[design, method].throughput / by[summary.full_best, "hybrid"].throughput
        report.comparisons.append(Comparison(
            f"best {method} design ({design})",
            f"{times(rel)}, BRAM {percent(bram)}, DSP {percent(dsp)}: {_tiling(c.params, loops)}",
            PAPER_TABLE3[method]))
    header = ("design", "hybrid GOP/s", "evolution", "divisor-only", "loss", "div. DSP")
    table = []
    for d in ids:
        div = by[d, "divisor-only"]
        table.append((d, gops(by[d, "hybrid"].throughput), gops(by[d, "evolution"].throughput), gops(div.throughput),
                      percent(loss(div.throughput, by[d, "hybrid"].throughput), 1),
                      percent(div.best.dsp / device.budget("DSP")) if div.best else "-"))
    report.table = (header, table)
    bad = [r["design"] for r in rows if r["method"] == "divisor-only" and r["divisors_only"] is False]
    if bad:
        report.notes.append(f"divisor-only runs returned non-divisor factors on {', '.join(bad)} (a tuner bug)")
    report.notes.append("loss = 1 - divisor-only throughput / hybrid throughput (full model); 'best design vs "
                        "best design' compares each method's best over all designs, as the paper's Fig. 1 does")
    report.values.update(loss_best=summary.best_design, loss_geomean=summary.geomean)

    write_csv(s.out / f"{NAME}.csv", COLUMNS, rows)
    top = max((by[d, "hybrid"].throughput for d in ids), default=0.0) or 1.0
    panels = [BarPanel("throughput / best hybrid", ids, {m: [by[d, m].throughput / top for d in ids] for m in METHODS},
                       hline=1.0, title="throughput normalised to the hybrid's best design (Fig. 15)"),
              BarPanel("DSP (% of budget)", ids,
                       {m: [100 * by[d, m].best.dsp / device.budget("DSP") if by[d, m].best else None for d in ids]
                        for m in METHODS}, hline=100.0, title="DSP usage")]
    bar_chart(s.out / f"{NAME}.png", "Divisor-only vs hybrid mutation", panels)
    report.files += [f"{NAME}.csv", f"{NAME}.png"]
    return finish(report, s.out, started)
