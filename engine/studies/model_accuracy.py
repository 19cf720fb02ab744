"""Study: model validation (Odyssey sec. 5.1, Table 5, Fig. 6): the latency model against the
cycle-level simulator (engine/sim) instead of RTL simulation.

For every design of each workload, random legal configurations (non-divisor array-partitioning
factors included: the first draw of each design is redrawn until one factor does not divide its
loop) are evaluated by the model (`evaluate_configuration`) and simulated; error = (model -
simulated) / simulated. Without `--kernel` the workloads are the paper's: MM [I,J,K] = [64,64,64]
(27 designs) and CNN [I,O,H,W,P,Q] = [16,16,16,16,3,3] (42 designs); with `--kernel` the given
kernel at its sizes. DSP and BRAM18K are the model's (the paper compares them with HLS synthesis
reports, which we do not have; the simulator does not count resources). Writes model_accuracy.csv,
model_accuracy.png (predicted vs simulated, like Fig. 6) and summary.txt.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import DesignSpace, compile_kernel
from engine.errors import EngineError
from engine.models.device import Device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.models.sampling import random_configuration
from engine.resources import DEFAULT_KERNEL, KERNELS
from engine.sim import simulate
from engine.studies.common import (
    Comparison,
    Log,
    StudyReport,
    _figure,
    finish,
    percent,
    prepare_output,
    write_csv,
)

NAME = "model_accuracy"
PAPER_WORKLOADS = ((KERNELS / "mm.c", ["I=64", "J=64", "K=64"]),
                   (KERNELS / "cnn.c", ["I=16", "O=16", "H=16", "W=16", "P=3", "Q=3"]))
PAPER_DEFAULT_SIZES = {"I": 1024, "J": 1024, "K": 1024}  # what `systolic study` compiles without --kernel
COLUMNS = ["workload", "design", "params", "model_cycles", "simulated_cycles", "error", "prologue", "main",
           "epilogue", "model_bottleneck", "simulated_bottleneck", "dsp", "bram18k", "sim_seconds", "status"]


def _non_divisor(design, values: dict[str, int]) -> bool:
    sizes = dict(zip(design.band_loops, design.problem_size))
    return any(sizes[p.loop] % values[p.name] for p in design.params if p.role == "array_partition")


def configurations(design, count: int, rng: np.random.Generator) -> list[dict[str, int]]:
    configs = []
    for k in range(count):
        values = random_configuration(design, rng)
        for _ in range(50):  # the first one with a non-divisor factor, when the sizes allow one
            if k or _non_divisor(design, values):
                break
            values = random_configuration(design, rng)
        configs.append(values)
    return configs


def run_model_accuracy(space: DesignSpace, device: Device, *, designs: list[str] | None = None,
                       seconds: float | None = None, samples: int | None = None, seeds: int = 1,
                       out_dir: str | Path = "study-model-accuracy", force: bool = False,
                       log: Log | None = None) -> StudyReport:
    """`samples`: configurations per design (default 5); `seeds`: seeds 0..seeds-1, each adding `samples`
    configurations per design, drawn from (seed, the design's position); `seconds` is not used (a
    simulation runs to completion)."""
    del seconds
    started = time.perf_counter()
    out = prepare_output(out_dir, force=force)
    per_design = samples or 5
    if Path(space.kernel.path).resolve() == DEFAULT_KERNEL.resolve() and space.kernel.sizes == PAPER_DEFAULT_SIZES:
        spaces = [compile_kernel(path, defines=defines) for path, defines in PAPER_WORKLOADS]
    else:
        spaces = [space]
    rows = []
    for sp in spaces:
        label = f"{sp.kernel.name} " + ",".join(f"{k}={v}" for k, v in sp.kernel.sizes.items())
        chosen = [d for d in sp.designs if not designs or d.id in designs]
        for number, design in enumerate(chosen):
            model = PerformanceModel(sp, design, device)
            descriptor = build_descriptor(sp, design, model.architecture)
            configs = [c for seed in range(seeds)
                       for c in configurations(design, per_design, np.random.default_rng([seed, number]))]
            for params in configs:
                rows.append(_row(label, model, descriptor, params))
                if log:
                    r = rows[-1]
                    log(f"{label} {design.id} {r['params']}: model {r['model_cycles']:,.0f} simulated "
                        f"{r['simulated_cycles'] or 0:,.0f} ({percent(r['error'], 2)}) {r['sim_seconds']:.1f} s")
    if not rows:
        raise EngineError("model-accuracy: no design matched " + ", ".join(designs or []))
    return _report(rows, out, started, spaces, per_design * seeds)


def _row(label: str, model: PerformanceModel, descriptor: dict, params: dict[str, int]) -> dict:
    report = evaluate_configuration(model, params)
    row = {"workload": label, "design": model.design.id, "params": report["params"],
           "model_cycles": report["latency_cycles"], "prologue": report["prologue"], "main": report["main"],
           "epilogue": report["epilogue"], "model_bottleneck": report["bottleneck"], "dsp": report["dsp"],
           "bram18k": report["bram18k"], "status": "ok"}
    t = time.perf_counter()
    try:
        result = simulate(descriptor, report["params"])
        row.update(simulated_cycles=result.cycles, simulated_bottleneck=result.bottleneck,
                   error=(report["latency_cycles"] - result.cycles) / result.cycles)
    except EngineError as exc:  # a deadlock is a finding of the study, not a reason to stop it
        row.update(simulated_cycles=None, error=None, status=f"error: {exc}")
    row["sim_seconds"] = time.perf_counter() - t
    return row


def _report(rows: list[dict], out: Path, started: float, spaces, configs_per_design: int) -> StudyReport:
    ok = [r for r in rows if r["error"] is not None]
    errors = np.array([abs(r["error"]) for r in ok]) if ok else np.array([np.nan])
    per_design: dict[tuple[str, str], list[float]] = {}
    for r in ok:
        per_design.setdefault((r["workload"], r["design"]), []).append(abs(r["error"]))
    worst = max(per_design.items(), key=lambda kv: np.mean(kv[1]), default=(("-", "-"), [np.nan]))
    designs_over = [k for k, v in per_design.items() if np.mean(v) > 0.05]
    setup = (f"workloads: {'; '.join(sp.kernel.name + ' ' + str(sp.kernel.sizes) for sp in spaces)}; "
             f"{len(per_design)} designs x {configs_per_design} random configurations; "
             f"{len(ok)} simulated, {len(rows) - len(ok)} failed")
    report = StudyReport(NAME, "latency model vs cycle-level simulation", "sec. 5.1, Table 5, Fig. 6", setup, rows)
    report.comparisons += [
        Comparison("mean absolute latency error", percent(float(np.mean(errors)), 2), "1.99% (vs RTL simulation)"),
        Comparison("max absolute latency error (one configuration)", percent(float(np.max(errors)), 2), "-"),
        Comparison("worst design (mean error over its configurations)",
                   f"{worst[0][1]} ({worst[0][0]}): {percent(float(np.mean(worst[1])), 2)}", "-"),
        Comparison("designs above 5% mean error", str(len(designs_over)), "-"),
        Comparison("DSP / BRAM", "model only (no synthesis baseline here)", "0% / 0% vs HLS reports")]
    by_workload = {}
    for r in ok:
        by_workload.setdefault(r["workload"], []).append(abs(r["error"]))
    report.table = (("workload", "configurations", "mean |error|", "max |error|"),
                    [(w, str(len(v)), percent(float(np.mean(v)), 2), percent(float(np.max(v)), 2))
                     for w, v in by_workload.items()])
    failed = [r for r in rows if r["error"] is None]
    if failed:
        report.notes.append(f"{len(failed)} configurations did not simulate: " +
                            "; ".join(f"{r['design']} {r['status']}" for r in failed[:3]))
    report.notes.append("error = (model - simulated) / simulated; the simulator executes the descriptor's modules "
                        "as processes over bounded FIFOs (docs/sim.md) and never evaluates the model's formulas")
    report.values.update(mean_error=float(np.mean(errors)), max_error=float(np.max(errors)))
    write_csv(out / f"{NAME}.csv", COLUMNS, rows)
    _scatter(out / f"{NAME}.png", ok)
    report.files += [f"{NAME}.csv", f"{NAME}.png"]
    return finish(report, out, started)


def _scatter(path: Path, rows: list[dict]) -> None:
    fig = _figure(11.0, 4.6)
    ax_lat, ax_res = fig.subplots(1, 2)
    for workload in sorted({r["workload"] for r in rows}):
        mine = [r for r in rows if r["workload"] == workload]
        ax_lat.scatter([r["simulated_cycles"] for r in mine], [r["model_cycles"] for r in mine], s=12,
                       label=workload.split(" ")[0])
        ax_res.scatter([r["dsp"] for r in mine], [r["bram18k"] for r in mine], s=12, label=workload.split(" ")[0])
    if rows:
        lo = min(min(r["simulated_cycles"], r["model_cycles"]) for r in rows)
        hi = max(max(r["simulated_cycles"], r["model_cycles"]) for r in rows)
        ax_lat.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8)
    ax_lat.set(xscale="log", yscale="log", xlabel="simulated cycles", ylabel="model latency (cycles)",
               title="(a) latency: predicted vs simulated")
    ax_res.set(xlabel="DSP (model)", ylabel="BRAM18K (model)", title="(b) resources of the validated configurations")
    for ax in (ax_lat, ax_res):
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
