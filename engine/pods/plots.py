"""Study rows and schedules -> PNG files: the granularity heat map (SOSA Fig. 5) and a schedule's
Gantt chart (tile operations per pod over time, coloured by layer). Matplotlib's Agg canvas through
the object API, never pyplot, so the engine never touches a GUI backend."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.errors import EngineError
from engine.pods.scheduler import Schedule
from engine.pods.studies import GranularityPoint

IMAGE_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp")  # Agg's writers


def check_image_path(path: Path, option: str = "--png") -> Path:
    """An image file the plots can write: a known format and an existing folder (checked before any work)."""
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in IMAGE_FORMATS:
        raise EngineError(f"{option} {path}: '{path.suffix or 'no extension'}' is not an image format "
                          f"(use .{', .'.join(IMAGE_FORMATS)})")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise EngineError(f"{option} {path}: the folder {folder} does not exist")
    if path.is_dir():
        raise EngineError(f"{option} {path} is a folder; give a file name")
    return path


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415 (heavy: only when plotting)
    from matplotlib.figure import Figure  # noqa: PLC0415
    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def heat_map(points: list[GranularityPoint], path: Path, *, title: str) -> Path:
    """Effective TOP/s per Watt over rows x columns; the best shape marked."""
    rows = sorted({p.rows for p in points})
    cols = sorted({p.cols for p in points})
    grid = np.full((len(rows), len(cols)), np.nan)
    for p in points:
        grid[rows.index(p.rows), cols.index(p.cols)] = p.effective_tops_per_watt
    fig = _figure(7, 5.6)
    ax = fig.add_subplot()
    image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols], rotation=60)
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel("array columns")
    ax.set_ylabel("array rows")
    best = max(points, key=lambda p: p.effective_tops)
    ax.plot(cols.index(best.cols), rows.index(best.rows), marker="*", color="red", markersize=14)
    ax.set_title(f"{title}\nbest {best.rows}x{best.cols} x {best.pods} pods: {best.effective_tops:.0f} TOP/s")
    fig.colorbar(image, ax=ax, label="effective TOP/s per W")
    fig.tight_layout()
    fig.savefig(path)
    return path


def gantt(sched: Schedule, path: Path, *, title: str, max_pods: int = 256) -> Path:
    """Pods (rows) x slices (columns): each cell coloured by the GEMM its tile operation belongs to,
    white when the pod is idle; at most `max_pods` pods are drawn."""
    grid = gantt_grid(sched, max_pods) % 20
    pods = grid.shape[0]
    fig = _figure(10, 5)
    ax = fig.add_subplot()
    ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="tab20", vmin=0, vmax=19,
              extent=(0, sched.slices * sched.slice_cycles, pods, 0))
    ax.set_xlabel(f"cycle (slices of {sched.slice_cycles})")
    ax.set_ylabel("pod")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    return path


def gantt_grid(sched: Schedule, max_pods: int = 256) -> np.ndarray:
    """Pods x slices: the GEMM index of the tile operation a pod holds in a slice, NaN when idle
    (the first `max_pods` pods)."""
    tiling = sched.tiling
    pods = min(sched.system.pods, max_pods)
    grid = np.full((pods, max(sched.slices, 1)), np.nan)
    gemm = tiling.block_gemm[tiling.op_block]
    for offset in range(int(sched.op_span.max(initial=1))):
        held = (sched.op_span > offset) & (sched.op_pod < pods)
        grid[sched.op_pod[held], sched.op_slice[held] + offset] = gemm[held]
    return grid


def pod_busy(sched: Schedule) -> np.ndarray:
    """Each pod's share of the schedule's slices spent holding a tile operation."""
    held = np.bincount(sched.op_pod, weights=sched.op_span, minlength=sched.system.pods)
    return held / max(sched.slices, 1)


def scale_chart(rows, path: Path, *, title: str, paper: dict | None = None) -> Path:
    """Effective TOP/s per array shape, with SOSA's Table 2 beside it."""
    fig = _figure(7, 4)
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r.effective_tops for r in rows], 0.4, label="ours")
    if paper:
        ax.bar(x + 0.2, [paper.get(r.array, (0, 0, 0, 0))[3] for r in rows], 0.4, label="SOSA Table 2")
    ax.set_xticks(x, [f"{r.array}\n{r.pods} pods" for r in rows])
    ax.set_ylabel("effective TOP/s at the budget")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    return path
