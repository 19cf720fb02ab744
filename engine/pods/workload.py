"""Network layers (name, tags, sizes) -> a `PodWorkload`: the GEMMs X W = P a multi-pod accelerator runs.

SOSA writes every layer as X (d1 x d2) times W (d2 x d3):
- a convolution through im2col (Odyssey's CNN keys i, o, r, c, p, q, or the CNN kernel's I, O, H, W, P, Q;
  r x c the output pixels with the stride folded in): d1 = r*c*batch (filter reuse), d2 = i*p*q (features), d3 = o (filters);
- a matrix multiply (Odyssey's MM keys i, j, k: C[i][j] += A[i][k] B[k][j]): d1 = i*batch, d2 = k,
  d3 = j; a transformer layer is its GEMMs.

Dependences (read after write) come from the layer order: a layer reads the previous layer's output
rows (row-aligned: a row block waits only for the producer rows it reads, widened by a convolution's
halo). Tags refine that, so a transformer can be written as it is:
- `from:NAME` (repeatable): the X operand is the output of these layers, not the previous one;
- `input`: the X operand is the network input (no producer);
- `weights-from:NAME`: the stationary operand is another layer's output (attention's K^T and V), so
  every tile waits for the whole of that layer;
- `heads:H`: the layer is H independent GEMMs of these sizes (attention heads); a multi-head layer
  reading a multi-head layer with the same H reads its own head only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Protocol

from engine.errors import EngineError
from engine.network.workload import load_network


class WorkloadError(EngineError):
    """A network layer cannot be turned into GEMMs: unknown sizes, a size of 0, a bad tag."""


class Layer(Protocol):
    name: str
    tags: tuple[str, ...] | list[str]
    sizes: dict[str, int]


@dataclass(frozen=True)
class Gemm:
    name: str
    rows: int                      # d1: rows of X (filter reuse x batch)
    depth: int                     # d2: columns of X = rows of W (features)
    cols: int                      # d3: columns of W (filters)
    inputs: tuple[str, ...] = ()   # GEMMs whose output is X (row-aligned); () = network input
    weights_from: tuple[str, ...] = ()  # GEMMs whose output is W (whole); () = stored weights
    halo_rows: int = 0             # extra producer rows a row block reads (convolution window)

    @property
    def macs(self) -> int:
        return self.rows * self.depth * self.cols


@dataclass(frozen=True)
class PodWorkload:
    name: str
    gemms: tuple[Gemm, ...]

    @property
    def macs(self) -> int:
        return sum(g.macs for g in self.gemms)

    def __post_init__(self):
        names = [g.name for g in self.gemms]
        if len(set(names)) != len(names):
            raise WorkloadError(f"{self.name}: GEMM names repeat")
        seen: set[str] = set()
        for g in self.gemms:
            for producer in g.inputs + g.weights_from:
                if producer not in seen:
                    raise WorkloadError(f"{self.name}: '{g.name}' reads '{producer}', which is not an earlier layer")
            if min(g.rows, g.depth, g.cols) < 1:
                raise WorkloadError(f"{self.name}: '{g.name}' has a size of 0 ({g.rows}x{g.depth}x{g.cols})")
            seen.add(g.name)


def workload_from_layers(name: str, layers: Iterable[Layer], *, batch: int = 1) -> PodWorkload:
    """The GEMMs of a network's layers (any objects with .name, .tags, .sizes), `batch` inputs at once."""
    if batch < 1:
        raise WorkloadError(f"batch must be at least 1, got {batch}")
    gemms: list[Gemm] = []
    heads_of: dict[str, list[str]] = {}
    previous: list[str] = []
    for layer in layers:
        tags = list(layer.tags)
        rows, depth, cols, halo = _gemm_sizes(layer, batch)
        heads = _int_tag(layer, tags, "heads", 1)
        x_from = [t.split(":", 1)[1] for t in tags if t.startswith("from:")] or previous
        if "input" in tags:
            x_from = []
        w_from = [t.split(":", 1)[1] for t in tags if t.startswith("weights-from:")]
        for producer in x_from + w_from:
            if producer not in heads_of:
                raise WorkloadError(f"layer '{layer.name}': reads '{producer}', which is not an earlier layer")
        names = [layer.name] if heads == 1 else [f"{layer.name}#h{h}" for h in range(heads)]
        for h, gemm_name in enumerate(names):
            gemms.append(Gemm(gemm_name, rows, depth, cols,
                              inputs=_heads(x_from, heads_of, h, heads),
                              weights_from=_heads(w_from, heads_of, h, heads), halo_rows=halo))
        heads_of[layer.name] = names
        previous = [layer.name]
    if not gemms:
        raise WorkloadError(f"network '{name}' has no layers")
    return PodWorkload(name, tuple(gemms))


def _heads(producers: list[str], heads_of: dict[str, list[str]], head: int, heads: int) -> tuple[str, ...]:
    out: list[str] = []
    for producer in producers:
        names = heads_of[producer]
        out.extend([names[head]] if len(names) == heads and heads > 1 else names)
    return tuple(out)


def _int_tag(layer: Layer, tags: list[str], key: str, default: int) -> int:
    for tag in tags:
        if tag.startswith(key + ":"):
            text = tag.split(":", 1)[1]
            if not text.isdigit() or int(text) < 1:
                raise WorkloadError(f"layer '{layer.name}': tag '{tag}' needs a positive whole number")
            return int(text)
    return default


def _gemm_sizes(layer: Layer, batch: int) -> tuple[int, int, int, int]:
    sizes = {k.lower(): v for k, v in dict(layer.sizes).items()}
    for key, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise WorkloadError(f"layer '{layer.name}': size {key}={value!r} must be a positive whole number")
    for odyssey, ours in (("r", "h"), ("c", "w")):  # Odyssey's output rows/columns are the CNN kernel's H/W
        if odyssey in sizes and ours not in sizes:
            sizes[ours] = sizes.pop(odyssey)
    if {"i", "o", "h", "w"} <= sizes.keys():
        p, q = sizes.get("p", 1), sizes.get("q", 1)
        return sizes["h"] * sizes["w"] * batch, sizes["i"] * p * q, sizes["o"], (p // 2) * sizes["w"] + q // 2
    if {"i", "j", "k"} <= sizes.keys():
        return sizes["i"] * batch, sizes["k"], sizes["j"], 0
    raise WorkloadError(f"layer '{layer.name}': sizes {sorted(sizes)} are neither a convolution "
                        "(i, o, r|h, c|w[, p, q]) nor a matrix multiply (i, j, k)")


def load_pod_workload(path: str | Path, *, batch: int = 1) -> PodWorkload:
    """A network file (Odyssey's JSON or CSV, read by engine/network/workload.py) as GEMMs."""
    network = load_network(path)
    return workload_from_layers(network.name, network.layers, batch=batch)


@dataclass(frozen=True)
class CodeLayer:
    """A layer written in code (tests, generated workloads): the same three fields as a network file's."""
    name: str
    sizes: dict[str, int]
    tags: tuple[str, ...] = field(default=())
