"""NetworkAnswers -> text tables, CSV files and PNG plots (one of each per answer).

Files: layers.csv / layers.png (a: per layer, each design's throughput normalised to the layer's best),
designs.csv / designs.png (b: geometric-mean share per design), single_array.csv / single_array.png
(c: per layer, the single array's throughput share against the layer's best). Plots use matplotlib's
Agg canvas through the object API (no pyplot: the engine never touches a GUI backend).
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from engine.network.answers import NetworkAnswers


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = ["  ".join(c.ljust(widths[k]) if k == 0 else c.rjust(widths[k]) for k, c in enumerate(r)).rstrip()
             for r in [header, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def text_report(a: NetworkAnswers) -> str:
    parts = [f"(a) per layer: best design and throughput (Odyssey Fig. 11)",
             _table(["layer", "sizes", "best design", "GOP/s", "2nd design", "share"],
                    [[l.name, " ".join(f"{k}={v}" for k, v in l.sizes.items()), l.best_design or "-",
                      _fmt(l.best_gops), *_second(l)] for l in a.layers]), "",
             f"(b) per design: geometric mean over layers of throughput / the layer's best (Figs. 13-14)",
             _table(["design", "space", "permutation", "geomean", "feasible"],
                    [[d.id, "[" + ",".join(d.space_loops) + "]", d.permutation, _pct(d.geomean_share),
                      f"{d.layers_feasible}/{len(a.layers)}"] for d in a.designs[:10]])]
    if len(a.designs) > 10:
        parts.append(f"... {len(a.designs) - 10} more designs in designs.csv")
    parts.append("")
    parts.append("(c) best single array: one design, one configuration for every layer (padded to its tiles)")
    if a.single_candidates:
        parts.append(_table(["design", "network latency", "GOP/s", "share of peak", "geomean layer share", "DSP",
                             "BRAM18K"],
                            [[c.design, f"{c.network_latency_cycles:,.0f}", _fmt(c.network_gops),
                              _pct(c.share_of_peak), _pct(c.geomean_layer_share), f"{c.dsp:.0f}", f"{c.bram18k:.0f}"]
                             for c in a.single_candidates]))
        s = a.single_array
        parts.append(f"chosen: {s.design} " + " ".join(f"{k}={v}" for k, v in s.params.items()))
    else:
        parts.append("none (no design was optimised as a single array, or none fits every layer)")
    if not a.complete:
        parts.append("note: the run is incomplete (some pairs have no result yet; resume it with --resume)")
    return "\n".join(parts) + "\n"


def _second(layer) -> list[str]:
    ranked = sorted(((g, d) for d, g in layer.designs.items() if g), reverse=True)
    if len(ranked) < 2:
        return ["-", "-"]
    return [ranked[1][1], _pct(ranked[1][0] / ranked[0][0])]


def write_files(a: NetworkAnswers, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    design_ids = [d.id for d in a.designs]
    files = [
        _csv(out / "layers.csv", ["layer", "sizes", "best_design", "best_gops", *design_ids],
             [[l.name, " ".join(f"{k}={v}" for k, v in l.sizes.items()), l.best_design or "", _fmt(l.best_gops, 3),
               *[f"{l.share(d):.4f}" for d in design_ids]] for l in a.layers]),
        _csv(out / "designs.csv", ["design", "space_loops", "permutation", "geomean_share", "layers_feasible"],
             [[d.id, " ".join(d.space_loops), d.permutation, f"{d.geomean_share:.4f}", d.layers_feasible]
              for d in a.designs]),
        _csv(out / "single_array.csv", ["design", "network_latency_cycles", "network_gops", "share_of_peak",
                                        "geomean_layer_share", "dsp", "bram18k", "params",
                                        *[f"share:{l.name}" for l in a.layers]],
             [[c.design, f"{c.network_latency_cycles:.0f}", f"{c.network_gops:.3f}", f"{c.share_of_peak:.4f}",
               f"{c.geomean_layer_share:.4f}", f"{c.dsp:.0f}", f"{c.bram18k:.0f}",
               " ".join(f"{k}={v}" for k, v in c.params.items()),
               *[f"{c.layer_share[l.name]:.4f}" for l in a.layers]] for c in a.single_candidates]),
    ]
    files += [_layers_png(a, out / "layers.png"), _designs_png(a, out / "designs.png"),
              _single_png(a, out / "single_array.png")]
    return files


def _csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415 (heavy: only when plotting)
    from matplotlib.figure import Figure  # noqa: PLC0415
    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _layers_png(a: NetworkAnswers, path: Path) -> Path:
    """A heat map, designs x layers, of throughput normalised to each layer's best; best marked."""
    ids = [d.id for d in a.designs]
    grid = np.array([[l.share(d) for l in a.layers] for d in ids]) if ids else np.zeros((1, 1))
    fig = _figure(min(16.0, 3.5 + 0.45 * len(a.layers)), 1.5 + 0.22 * max(1, len(ids)))
    ax = fig.subplots()
    image = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0, vmax=1)
    for x, layer in enumerate(a.layers):
        if layer.best_design in ids:
            ax.plot(x, ids.index(layer.best_design), marker="*", color="red", markersize=7)
    ax.set_xticks(range(len(a.layers)))
    ax.set_xticklabels([l.name for l in a.layers], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(ids)))
    ax.set_yticklabels(ids, fontsize=6)
    fig.colorbar(image, ax=ax, label="throughput / layer's best")
    ax.set_title(f"{a.network}: per-layer throughput of each design (best = red star)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def _designs_png(a: NetworkAnswers, path: Path) -> Path:
    fig = _figure(min(16.0, 4 + 0.3 * len(a.designs)), 4.5)
    ax = fig.subplots()
    ax.bar(range(len(a.designs)), [d.geomean_share for d in a.designs], color="tab:blue")
    ax.set_xticks(range(len(a.designs)))
    ax.set_xticklabels([d.id for d in a.designs], rotation=60, ha="right", fontsize=6)
    ax.set_ylabel("geo. mean of throughput / layer's best")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{a.network}: each design over the network (Odyssey Figs. 13-14)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def _single_png(a: NetworkAnswers, path: Path) -> Path:
    fig = _figure(min(16.0, 4 + 0.4 * len(a.layers)), 4.2)
    ax = fig.subplots()
    x = np.arange(len(a.layers))
    for k, c in enumerate(a.single_candidates[:3]):
        ax.bar(x - 0.4 + 0.8 / 3 * (k + 0.5), [c.layer_share[l.name] for l in a.layers], 0.8 / 3,
               label=f"{c.design}: {100 * c.share_of_peak:.0f}% of peak")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(x)
    ax.set_xticklabels([l.name for l in a.layers], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("layer's best latency / latency on the array")
    ax.grid(axis="y", alpha=0.3)
    if a.single_candidates:
        ax.legend(fontsize=7)
    ax.set_title(f"{a.network}: one array for every layer", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def arrays_report(answers: list) -> str:
    """(d) N arrays pipelining the network (engine/network/arrays.py: MultiArrayAnswer), one table."""
    rows = []
    for m in answers:
        stages = " | ".join(f"{a.layers[0]}..{a.layers[-1]} {100 * a.share:.0f}% {a.result.design or 'none'}"
                            for a in m.plan.arrays)
        rows.append([str(m.arrays), f"{m.plan.interval_cycles:,.0f}", _fmt(m.network_gops),
                     "-" if m.speedup is None else f"{m.speedup:.2f}x", "yes" if m.fits else "NO",
                     f"{m.used['DSP']:.0f}", f"{m.used['BRAM18K']:.0f}", stages])
    return ("(d) N arrays pipelining the network (stages of consecutive layers; a share of the device each)\n"
            + _table(["arrays", "interval", "GOP/s", "vs single", "fits", "DSP", "BRAM18K", "stages"], rows) + "\n")


def write_arrays_csv(answers: list, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for m in answers:
        for k, a in enumerate(m.plan.arrays, start=1):
            rows.append([m.arrays, f"{m.plan.interval_cycles:.0f}", f"{m.network_gops:.3f}",
                         "" if m.speedup is None else f"{m.speedup:.4f}", int(m.fits), k, " ".join(a.layers),
                         f"{a.share:.4f}", a.result.design or "", f"{a.result.latency:.0f}",
                         " ".join(f"{p}={v}" for p, v in (a.result.params or {}).items()),
                         f"{(a.result.resources or {}).get('DSP', 0):.0f}",
                         f"{(a.result.resources or {}).get('BRAM18K', 0):.0f}"])
    return _csv(out / "arrays.csv", ["arrays", "interval_cycles", "network_gops", "vs_single", "fits", "array",
                                     "layers", "share", "design", "stage_latency_cycles", "params", "dsp",
                                     "bram18k"], rows)
