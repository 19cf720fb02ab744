"""Study (a): the tuning methods compared on every design (Odyssey sec. 5.2, Figs. 7-9).

Every method of engine.search.methods (or a chosen few) tunes every design with the same budget per
run. A method's result on a design is its best throughput (mean over seeds), normalised to the best
known for that design: the larger of bench/best_known.json's entry (used only when it was found
with this very model: the fingerprint matches) and the best any run of this study found.

Files: methods.csv (one row per design and method), methods.png (Fig. 7: normalised throughput per
design and method), convergence.csv (every improvement of every run: design, method, seed, samples,
seconds, normalised throughput) and convergence.png (Fig. 8: the convergence on the design with the
highest best-known throughput, against samples and against seconds).

The paper ran each method 5 minutes per design, 3 times, with the exhaustive search run to the end
as the optimum; the measured numbers here come from the study's (much smaller) budget.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from engine.compiler.design_space import DesignSpace
from engine.models.device import Device
from engine.search.methods import strategy_class
from engine.search.progress import DesignResult
from engine.studies.common import (
    BEST_KNOWN,
    COMMON_COLUMNS,
    TAIL_COLUMNS,
    BarPanel,
    Comparison,
    LinePanel,
    Log,
    StudyReport,
    bar_chart,
    best_known_latency,
    finish,
    line_chart,
    load_best_known,
    percent,
    run_row,
    setup,
    write_csv,
)

NAME = "methods"
DEFAULT_METHODS = ("hybrid", "evolution", "annealing", "random", "exhaustive", "bayes", "mp")
DETERMINISTIC = ("mp", "exhaustive")  # the same answer whatever the seed: run once
COLUMNS = [*COMMON_COLUMNS, "normalised", "reference_gops", "reference", "best_seed_gops", *TAIL_COLUMNS]
TRACE_COLUMNS = ["design", "method", "seed", "samples", "seconds", "best_latency_cycles", "throughput_gops",
                 "normalised"]
AT_SAMPLES = 3000  # Fig. 8's point of comparison
AT_SECONDS = 5.0  # Fig. 9's


def _at(result: DesignResult, *, samples: float = math.inf, seconds: float = math.inf) -> float | None:
    """The best latency a run had reached by then (None: nothing feasible yet)."""
    found = [p.best_latency for p in result.trace
             if p.samples <= samples and p.elapsed <= seconds and p.best_latency is not None]
    return min(found) if found else None


def run_methods(space: DesignSpace, device: Device, *, designs: list[str] | None = None, seconds: float | None = 1.0,
                samples: int | None = None, seeds: int = 1, out_dir: str | Path = "study-methods",
                force: bool = False, log: Log | None = None, methods: list[str] | None = None,
                best_known: str | Path | None = BEST_KNOWN) -> StudyReport:
    started = time.perf_counter()
    methods = list(methods or DEFAULT_METHODS)
    for m in methods:
        strategy_class(m)  # unknown names fail before any work
    s = setup(space, device, designs=designs, seconds=seconds, samples=samples, seeds=seeds, out_dir=out_dir,
              force=force, log=log)
    table = load_best_known(Path(best_known) if best_known else None, device)
    by, searches, reference, source = {}, {}, {}, {}
    for design, models in s.each_design():
        search = searches[design.id] = models.space("latency")
        for m in methods:
            cls = strategy_class(m)
            by[design.id, m] = s.run(lambda seed, c=cls: c(search, seed=seed), m, design.id,
                                     seeds=1 if m in DETERMINISTIC else None)
        found = max((r.best.throughput_gops for m in methods for r in by[design.id, m].results if r.best), default=0.0)
        known = best_known_latency(table, search)
        known_gops = search.throughput(known) if known else 0.0
        reference[design.id] = max(found, known_gops)
        source[design.id] = "best known" if known_gops >= found and known_gops > 0 else "study"
    ids = [d.id for d in s.designs]

    def norm(d: str, gops_value: float | None) -> float | None:
        return gops_value / reference[d] if gops_value is not None and reference[d] > 0 else None

    rows, traces = [], []
    for d in ids:
        for m in methods:
            runs = by[d, m]
            row = run_row(runs, s)
            row.update(normalised=norm(d, runs.throughput), reference_gops=reference[d], reference=source[d],
                       best_seed_gops=runs.best.throughput_gops if runs.best else None)
            rows.append(row)
            for seed, result in enumerate(runs.results):
                for p in result.trace:
                    g = searches[d].throughput(p.best_latency) if p.best_latency else None
                    traces.append({"design": d, "method": m, "seed": seed, "samples": p.samples, "seconds": p.elapsed,
                                   "best_latency_cycles": p.best_latency, "throughput_gops": g,
                                   "normalised": norm(d, g)})

    def norm_at(d: str, results: list[DesignResult], **when) -> float | None:
        """Mean over runs of the normalised throughput reached by then (0 for a run with nothing yet)."""
        values = [norm(d, searches[d].throughput(lat)) if (lat := _at(r, **when)) else 0.0 for r in results]
        return float(np.mean(values)) if values else None

    def normalised(d: str, m: str) -> float:
        return norm(d, by[d, m].throughput) or 0.0

    report = StudyReport(NAME, "Tuning methods compared", "sec. 5.2, Figs. 7-9", s.describe(len(methods)), rows)
    known = sum(source[d] == "best known" for d in ids)
    report.notes.append(f"normalised to the best known per design: the best-known table on {known} of {len(ids)} "
                        "designs (entries found with this very model and at least as good as the study's best run)"
                        + (", the study's best run on the others" if known < len(ids) else ""))
    if "hybrid" in methods:
        hyb = [normalised(d, "hybrid") for d in ids]
        others = [m for m in methods if m != "hybrid"]
        wins = sum(all(normalised(d, "hybrid") >= normalised(d, m) - 1e-9 for m in others) for d in ids)
        close = sum(all(normalised(d, "hybrid") >= 0.99 * normalised(d, m) for m in others) for d in ids)
        report.comparisons += [
            Comparison("hybrid, geometric mean / worst design of best-known throughput",
                       f"{percent(_geomean(hyb))} / {percent(min(hyb, default=None))}",
                       ">= 95% of optimum on every design (5-min runs, Fig. 7)"),
            Comparison(f"hybrid best (ties included) / within 1% of the best method, designs of {len(ids)}",
                       f"{wins} / {close}", "best on 13 of 18, within 1% on the other 5 (Fig. 7)")]
        limit = AT_SECONDS if seconds is None or seconds >= AT_SECONDS else seconds
        early = [norm_at(d, by[d, "hybrid"].results, seconds=limit) for d in ids]
        report.comparisons.append(Comparison(f"hybrid within {limit:g} s, worst design",
                                             percent(min(early, default=None)),
                                             ">= 90% of optimum within 5 s on every design (Fig. 9)"))
    top = max(ids, key=lambda d: reference[d], default=None)
    if top is not None:
        paper = {"hybrid": "93% (Fig. 8)", "annealing": "66% (Fig. 8)"}
        for m in methods:
            results = by[top, m].results
            reached = min((r.samples for r in results), default=0)
            short = f" (ran {reached:,} sample{'s' if reached != 1 else ''} only)" if reached < AT_SAMPLES else ""
            report.comparisons.append(Comparison(f"{m} after {AT_SAMPLES:,} samples on the best design ({top}){short}",
                                                 percent(norm_at(top, results, samples=AT_SAMPLES)), paper.get(m, "-")))
    header = ("method", "geomean", "worst", "best on")
    lines = []
    for m in methods:
        values = [normalised(d, m) for d in ids]
        wins = sum(normalised(d, m) >= max(normalised(d, o) for o in methods) - 1e-9 for d in ids)
        lines.append((m, percent(_geomean(values), 1), percent(min(values, default=None), 1), str(wins)))
    report.table = (header, lines)
    report.values.update({f"geomean_{m}": _geomean([normalised(d, m) for d in ids]) for m in methods})

    write_csv(s.out / f"{NAME}.csv", COLUMNS, rows)
    write_csv(s.out / "convergence.csv", TRACE_COLUMNS, traces)
    bar_chart(s.out / f"{NAME}.png", "Best throughput per method, normalised to the best known (Fig. 7)",
              [BarPanel("throughput / best known", ids, {m: [normalised(d, m) for d in ids] for m in methods},
                        hline=1.0)])
    panels = []
    if top is not None:
        for axis, xlabel in (("samples", "samples evaluated"), ("seconds", "seconds")):
            series = {}
            for m in methods:
                result = by[top, m].results[0] if by[top, m].results else None
                if result is None or not result.trace:
                    continue
                xs = [max(getattr(p, "samples" if axis == "samples" else "elapsed"), 1e-3) for p in result.trace]
                ys = [norm(top, searches[top].throughput(p.best_latency)) for p in result.trace]
                end = result.samples if axis == "samples" else result.elapsed
                series[m] = (xs + [max(end, xs[-1])], ys + [ys[-1]])
            panels.append(LinePanel(xlabel, "throughput / best known", series, hline=1.0, title=f"{top}, seed 0"))
    line_chart(s.out / "convergence.png", "Convergence on the best design (Fig. 8)", panels or
               [LinePanel("samples evaluated", "throughput / best known", {})])
    report.files += [f"{NAME}.csv", f"{NAME}.png", "convergence.csv", "convergence.png"]
    return finish(report, s.out, started)


def _geomean(values: list[float]) -> float | None:
    if not values:
        return None
    if min(values) <= 0:
        return 0.0
    return float(np.exp(np.mean(np.log(values))))

