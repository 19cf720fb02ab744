"""What every study shares: the output folder, CSV files, the report (summary.txt), the plots, the
per-design models and the search runs, and the loss arithmetic.

A study runs searches on the designs of one kernel and writes into one folder: `<name>.csv` (one row
per design and method), `<name>.png` and `summary.txt`, the measured numbers next to the paper's.

Losses. loss = 1 - throughput(restricted method's best) / throughput(full hybrid tuner's best),
throughputs scored by the full model. It is summarised two ways:
- best design vs best design: the best configuration the restricted method found over all designs
  against the best the hybrid found over all designs. This is how the paper's Fig. 1 (and Table 3)
  compares Designs 1-3 with Design 4, so it is the number set next to the paper's;
- geometric mean over designs of the per-design ratio (designs where either side found nothing
  feasible are left out and counted).
With several seeds, a method's throughput on a design is the mean over the seeds of each run's best
(a run that found nothing feasible counts 0), as the paper averages its 3 runs.

Plots use matplotlib's Agg canvas through the object API (no pyplot, so importing a study never
changes the process's matplotlib backend and never touches Qt).
"""
from __future__ import annotations

import csv
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.errors import EngineError
from engine.models.device import Device
from engine.models.evaluate import PerformanceModel
from engine.search.best_known import fingerprint
from engine.search.progress import Candidate, DesignResult
from engine.search.run import SearchRun
from engine.search.space import Batch, SearchSpace
from engine.search.strategy import SearchStrategy
from engine.validation import read_json

Log = Callable[[str], None]
BEST_KNOWN = Path(__file__).resolve().parents[2] / "bench" / "best_known.json"
PAPER = "Odyssey (Wang & Cong)"


# --- output folder and files --------------------------------------------------------------------

def prepare_output(out_dir: str | Path, *, force: bool = False) -> Path:
    """Create the folder; refuse one that exists and holds anything, unless `force` (then the
    study's files are overwritten and other files left alone)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise EngineError(f"output folder {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise EngineError(f"output folder {out} is not empty (use --force to write into it anyway)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise EngineError(f"cannot create output folder {out}: {error.strerror or error}") from None
    return out


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.6g}"
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[dict]) -> Path:
    """One line per row, the columns in this order; floats to 6 significant digits, params as k=v."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in columns])
    return path


# --- the report --------------------------------------------------------------------------------

@dataclass
class Comparison:
    """One measured number next to the paper's."""

    what: str
    measured: str
    paper: str


@dataclass
class StudyReport:
    name: str
    title: str
    reference: str  # where in the paper: "Table 3, Fig. 15, Limitation 1"
    setup: str  # problem, designs, budget
    rows: list[dict] = field(default_factory=list)  # the CSV rows
    comparisons: list[Comparison] = field(default_factory=list)
    table: tuple[tuple[str, ...], list[tuple[str, ...]]] | None = None  # per-design digest (header, rows)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    values: dict[str, float] = field(default_factory=dict)  # the measured numbers, for programs

    def text(self) -> str:
        lines = [f"{self.title} ({PAPER}: {self.reference})", self.setup, ""]
        if self.comparisons:
            lines.append("measured vs paper")
            for c in self.comparisons:
                line = f"  {c.what}: {c.measured}"
                if c.paper in ("", "-"):
                    lines.append(line)
                elif len(line) + len(c.paper) + 11 <= 120:
                    lines.append(f"{line}   [paper: {c.paper}]")
                else:
                    lines += [line, f"      paper: {c.paper}"]
            lines.append("")
        if self.table:
            header, rows = self.table
            widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
            for r in [header, *rows]:
                lines.append("  ".join(cell.ljust(widths[0]) if k == 0 else cell.rjust(widths[k])
                                       for k, cell in enumerate(r)).rstrip())
            lines.append("")
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"files: {', '.join(self.files)}; took {self.seconds:.0f} s")
        return "\n".join(lines) + "\n"

    def write(self, out_dir: Path) -> Path:
        if "summary.txt" not in self.files:
            self.files.append("summary.txt")
        path = Path(out_dir) / "summary.txt"
        path.write_text(self.text())
        return path


def percent(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:.{digits}f}%"


def times(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}x"


def gops(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) or x <= 0 else f"{x:.1f}"


# --- plots -------------------------------------------------------------------------------------

@dataclass
class BarPanel:
    ylabel: str
    categories: list[str]
    series: dict[str, list[float | None]]  # name -> one value per category (None: no bar)
    log: bool = False
    hline: float | None = None  # e.g. 1.0 for "the reference"
    title: str = ""


@dataclass
class LinePanel:
    xlabel: str
    ylabel: str
    series: dict[str, tuple[list[float], list[float]]]  # name -> (x, y), drawn as steps
    logx: bool = True
    hline: float | None = None
    title: str = ""


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415 (heavy: only when plotting)
    from matplotlib.figure import Figure  # noqa: PLC0415
    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def bar_chart(path: Path, title: str, panels: list[BarPanel]) -> Path:
    """Grouped bars, one group per category, one colour per series; panels stacked vertically."""
    width = max(6.0, 0.5 * max(len(p.categories) * max(1, len(p.series)) for p in panels) ** 0.85 + 3)
    fig = _figure(min(width, 16.0), 3.6 * len(panels) + 0.6)
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        n = max(1, len(panel.series))
        x = np.arange(len(panel.categories))
        w = 0.8 / n
        for k, (name, values) in enumerate(panel.series.items()):
            ys = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
            ax.bar(x - 0.4 + w * (k + 0.5), ys, w, label=name)
        if panel.hline is not None:
            ax.axhline(panel.hline, color="black", linewidth=0.8, linestyle="--")
        if panel.log:
            ax.set_yscale("log")
        else:
            values = [float(v) for vs in panel.series.values() for v in vs if v is not None]
            top = np.nanmax(values + [panel.hline or 0, 0])
            ax.set_ylim(0, 1.25 * top if top > 0 else 1)
        ax.set_xticks(x)
        ax.set_xticklabels(panel.categories, rotation=45 if len(panel.categories) > 4 else 0,
                           ha="right" if len(panel.categories) > 4 else "center", fontsize=8)
        ax.set_ylabel(panel.ylabel)
        if panel.title:
            ax.set_title(panel.title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        if len(panel.series) > 1:
            ax.legend(fontsize=7, ncol=min(4, n))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def line_chart(path: Path, title: str, panels: list[LinePanel]) -> Path:
    fig = _figure(7.5 * len(panels), 4.4)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        for name, (xs, ys) in panel.series.items():
            if len(xs):
                (line,) = ax.step(xs, ys, where="post", label=name)
                ax.plot(xs[-1:], ys[-1:], marker="o", markersize=3, color=line.get_color())  # one-point runs show
        if panel.hline is not None:
            ax.axhline(panel.hline, color="black", linewidth=0.8, linestyle="--")
        if panel.logx:
            ax.set_xscale("log")
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        if panel.title:
            ax.set_title(panel.title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


# --- problem, models and runs ------------------------------------------------------------------

class DesignModels:
    """One design's performance model (built once) and its search spaces, one per objective."""

    def __init__(self, space: DesignSpace, design: Design, device: Device):
        self.design = design
        self.model = PerformanceModel(space, design, device)
        self._spaces: dict[str, SearchSpace] = {}

    def space(self, objective: str = "latency") -> SearchSpace:
        if objective not in self._spaces:
            self._spaces[objective] = SearchSpace(self.model, objective=objective)
        return self._spaces[objective]

    def score(self, config: dict[str, int]) -> dict[str, float]:
        """Full-model latency, resources, feasibility and both simplified objectives of a configuration."""
        full = self.space("latency").evaluate([config])
        return {"latency_cycles": float(full.latency[0]), "dsp": float(full.dsp[0]), "bram18k": float(full.bram[0]),
                "feasible": bool(full.feasible[0]),
                "offchip_bytes": float(self.space("offchip").evaluate([config]).objective[0]),
                "max_model_cycles": float(self.space("max_compute_comm").evaluate([config]).objective[0]),
                "throughput_gops": float(self.space("latency").throughput(full.latency[0]))}


class TrafficCapSpace(SearchSpace):
    """The full latency model over only the configurations moving at most `cap` off-chip bytes:
    Marvel's pruning by off-chip traffic followed by a search of what survives it."""

    def __init__(self, model: PerformanceModel, cap: float):
        super().__init__(model, objective="latency")
        self.cap = cap
        self._traffic = model.compile_objective(model.symbolic.offchip_bytes)

    def evaluate(self, configs) -> Batch:
        batch = super().evaluate(configs)
        if isinstance(configs, list):
            arrays = {n: np.fromiter((c[n] for c in configs), dtype=np.int64, count=len(configs)) for n in self.names}
        else:
            arrays = {n: np.asarray(configs[n], dtype=np.int64) for n in self.names}
        within = self._traffic(arrays) <= self.cap * (1 + 1e-12)
        return Batch(batch.latency, batch.dsp, batch.bram, batch.feasible & within, batch.objective)


@dataclass
class Runs:
    """One method on one design: a run per seed."""

    design: str
    method: str
    results: list[DesignResult]

    @property
    def throughput(self) -> float:
        """Mean over seeds of each run's best (full-model) throughput; 0 for a run that found nothing."""
        if not self.results:
            return 0.0
        return float(np.mean([r.best.throughput_gops if r.best else 0.0 for r in self.results]))

    @property
    def best(self) -> Candidate | None:
        """The best configuration any seed found, by the full model (for the CSV's details)."""
        found = [r.best for r in self.results if r.best is not None]
        return min(found, key=lambda c: c.latency_cycles) if found else None

    @property
    def samples(self) -> float:
        return float(np.mean([r.samples for r in self.results])) if self.results else 0.0

    @property
    def seconds(self) -> float:
        return float(np.mean([r.elapsed for r in self.results])) if self.results else 0.0

    @property
    def notes(self) -> str:
        return "; ".join(dict.fromkeys(n for r in self.results for n in r.notes))


@dataclass
class Setup:
    """The common arguments of a study, checked once."""

    space: DesignSpace
    device: Device
    designs: list[Design]
    seconds: float | None
    samples: int | None
    seeds: int
    out: Path
    log: Log

    def models(self, design: Design) -> DesignModels:
        return DesignModels(self.space, design, self.device)

    def each_design(self):
        """(design, its models), one after the other, logging progress."""
        for k, design in enumerate(self.designs):
            self.log(f"[{k + 1}/{len(self.designs)}] {design.id}")
            yield design, self.models(design)

    def run(self, make: Callable[[int], SearchStrategy | None], label: str, design: str, *,
            seeds: int | None = None) -> Runs:
        """`make(seed)` -> a strategy (over its own search space) or None to skip that seed; one run
        per seed within the study's budget."""
        results = []
        for seed in range(self.seeds if seeds is None else seeds):
            strategy = make(seed)
            if strategy is not None:
                results.append(SearchRun(strategy.space, strategy, seconds=self.seconds, samples=self.samples).run())
        runs = Runs(design, label, results)
        self.log(f"  {design:14} {label:16} {gops(runs.throughput):>8} GOP/s  ({runs.samples:,.0f} samples, "
                 f"{runs.seconds:.1f} s)")
        return runs

    def describe(self, runs_per_design: int | str) -> str:
        sizes = " ".join(f"{k}={v}" for k, v in self.space.kernel.sizes.items())
        budget = " and ".join(x for x in (f"{self.seconds:g} s" if self.seconds is not None else "",
                                          f"{self.samples:,} samples" if self.samples is not None else "") if x)
        return (f"problem: {self.space.kernel.name} ({sizes}) on {self.device.name}, {len(self.designs)} designs, "
                f"{runs_per_design} runs per design, {budget} per run, {self.seeds} seed(s)")


def setup(space: DesignSpace, device: Device, *, designs, seconds, samples, seeds, out_dir, force, log) -> Setup:
    if seconds is None and samples is None:
        raise EngineError("a study needs a budget: seconds or samples per run")
    if (seconds is not None and seconds <= 0) or (samples is not None and samples <= 0):
        raise EngineError("the study's budget must be positive")
    if seeds < 1:
        raise EngineError("a study needs at least one seed")
    chosen = [space.design(d) for d in designs] if designs else list(space.designs)
    out = prepare_output(out_dir, force=force)
    warm_up_solver()
    return Setup(space, device, chosen, seconds, samples, seeds, out, log or (lambda _message: None))


def relate_to_hybrid(rows: list[dict], by: dict) -> None:
    """Fill each row's throughput relative to the hybrid tuner's on the same design, and its loss."""
    for row in rows:
        full = by[row["design"], "hybrid"].throughput
        row["relative_to_hybrid"] = row["throughput_gops"] / full if full > 0 else None
        row["loss"] = loss(row["throughput_gops"], full) if row["method"] != "hybrid" else None


def warm_up_solver() -> None:
    """Import pyomo and SCIP before any timed run: HybridSearch and MPSearch import them on their
    first solve, inside the run's time budget (about half a second), which would starve the first
    design's run."""
    try:
        import pyomo.environ  # noqa: F401, PLC0415

        from engine.search.mathematical_programming import _scip_options  # noqa: PLC0415
        _scip_options()
    except Exception:  # noqa: BLE001 (the runs report solver trouble themselves)
        pass


# --- best-known table --------------------------------------------------------------------------

def load_best_known(path: Path | None, device: Device) -> dict:
    """The table's designs, or {} when there is none or it was made for another device setting."""
    if path is None or not Path(path).is_file():
        return {}
    try:
        table = read_json(path, "best-known file")
    except EngineError:
        return {}
    if not isinstance(table, dict):
        return {}
    problem = table.get("problem", {})
    named = str(problem.get("device", device.name)).lower()  # a device file's stem ("u250") or its full name
    if (named != device.name.lower() and named not in device.name.lower().split()
            or abs(float(problem.get("usable_ratio", device.usable_ratio)) - device.usable_ratio) > 1e-9
            or abs(float(problem.get("clock_mhz", device.clock_mhz)) - device.clock_mhz) > 1e-9):
        return {}
    return dict(table.get("designs", {}))


def best_known_latency(table: dict, search: SearchSpace) -> float | None:
    """The table's latency for this design, if it was found with this very model."""
    entry = table.get(search.design.id)
    if not entry or entry.get("model") != fingerprint(search):
        return None
    return float(entry["latency_cycles"])


# --- losses ------------------------------------------------------------------------------------

@dataclass
class Loss:
    best_design: float | None  # 1 - best restricted over all designs / best hybrid over all designs
    restricted_best: str | None  # the designs those bests are on
    full_best: str | None
    geomean: float | None  # 1 - geometric mean of the per-design ratios
    worst: float | None  # the largest per-design loss
    designs: int  # designs in the geometric mean
    missing: int  # designs left out (a side found nothing feasible)


def loss(restricted: float, full: float) -> float | None:
    return 1.0 - restricted / full if full > 0 else None


def summarise_loss(pairs: dict[str, tuple[float, float]]) -> Loss:
    """pairs: design -> (restricted throughput, hybrid throughput)."""
    ok = {d: (r, f) for d, (r, f) in pairs.items() if r > 0 and f > 0}
    rbest = max(pairs, key=lambda d: pairs[d][0], default=None)
    fbest = max(pairs, key=lambda d: pairs[d][1], default=None)
    best = None
    if fbest is not None and pairs[fbest][1] > 0:
        best = 1.0 - pairs[rbest][0] / pairs[fbest][1]
    ratios = [r / f for r, f in ok.values()]
    geo = 1.0 - float(np.exp(np.mean(np.log(ratios)))) if ratios else None
    worst = max((loss(r, f) for r, f in pairs.values() if f > 0), default=None)
    return Loss(best, rbest, fbest, geo, worst, len(ok), len(pairs) - len(ok))


def loss_comparisons(what: str, summary: Loss, paper: str) -> list[Comparison]:
    best = f"{percent(summary.best_design, 1)}"
    lines = [Comparison(f"{what}, best design vs best design", best, paper)]
    extra = f" ({summary.missing} design(s) without a result left out)" if summary.missing else ""
    lines.append(Comparison(f"{what}, geometric mean over {summary.designs} designs{extra}",
                            percent(summary.geomean, 1), "-"))
    lines.append(Comparison(f"{what}, worst design", percent(summary.worst, 1), "-"))
    return lines


def finish(report: StudyReport, out: Path, started: float) -> StudyReport:
    report.seconds = time.perf_counter() - started
    report.write(out)
    return report


def run_row(runs: Runs, setup: Setup) -> dict:
    """The CSV columns every study shares for one method on one design."""
    best = runs.best
    dsp_budget, bram_budget = setup.device.budget("DSP"), setup.device.budget("BRAM18K")
    return {"design": runs.design, "method": runs.method, "throughput_gops": runs.throughput,
            "latency_cycles": best.latency_cycles if best else None, "dsp": best.dsp if best else None,
            "dsp_pct": 100 * best.dsp / dsp_budget if best else None, "bram18k": best.bram18k if best else None,
            "bram_pct": 100 * best.bram18k / bram_budget if best else None, "params": best.params if best else None,
            "samples": runs.samples, "seconds": runs.seconds, "notes": runs.notes}


COMMON_COLUMNS = ["design", "method", "throughput_gops", "latency_cycles", "dsp", "dsp_pct", "bram18k", "bram_pct"]
TAIL_COLUMNS = ["samples", "seconds", "params", "notes"]
