"""Topology graph + descriptor -> positions for the topology viewer: the PE grid in the middle, each
I/O or drain module along the side of the PE dimension it follows (inputs top/left, drains
bottom/right, one lane per module, outer lanes for higher levels), per-PE modules as small boxes in
their PE's cell, singletons in line with the modules they are wired to, beyond the nearest side of
the drawing (a wire never runs diagonally across the array), and a DRAM port beyond every module
that reads or writes DRAM.

A long 1-D chain (more than FOLD_AT PEs), or a 2-D array whose one dimension is that long and
THIN times longer than the other, is folded into bands along its long dimension, serpentine (every
other band runs backwards, so neighbours in the chain stay neighbours on screen and the turn is
one step down); a band is as thick as the short dimension, with the modules that follow the long
dimension above (inputs) or below (drains) their PE in each band, and those that follow the short
one left of the first band. The band width makes the whole array about ASPECT times as wide as
high. Also the array's shape in words for the view's title (pe_extents, shape_text). Plain
Python: no Qt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

CELL = 60.0  # distance between PE centres
PE_SIZE = 38.0
MODULE_SIZE = 26.0
SMALL_SIZE = 12.0
LANE = 0.75 * CELL  # distance between lanes of modules beside the PEs
FOLD_AT = 24  # 1-D chains longer than this are folded into rows
ASPECT = 1.6  # width / height a folded chain aims at
THIN = 6  # a 2-D array is folded when its long dimension is this many times its short one


@dataclass(frozen=True)
class Box:
    x: float  # centre
    y: float
    size: float


@dataclass(frozen=True)
class Fold:
    """A chain of `n` PEs (or `thick` chains side by side) in bands of `width`, `pitch` apart,
    serpentine; `long` is the PE dimension folded."""

    n: int
    width: int
    pitch: float
    thick: int = 1
    long: int = 0

    @property
    def rows(self) -> int:
        return math.ceil(self.n / self.width)

    def xy(self, i: int) -> tuple[float, float]:
        row, col = divmod(i, self.width)
        if row % 2:
            col = self.width - 1 - col
        return col * CELL, row * self.pitch


def fold_for(n: int, lanes_above: int, lanes_below: int, thick: int = 1, long: int = 0) -> Fold | None:
    """The fold of a chain of n PEs (`thick` wide) with that many module lanes per band (None: straight)."""
    if n <= FOLD_AT:
        return None
    pitch = CELL * thick + LANE * (lanes_above + lanes_below) + 0.4 * CELL
    width = max(4, min(n, round(math.sqrt(ASPECT * n * pitch / CELL))))
    return Fold(n, width, pitch, thick, long)


def _pe_xy(index: tuple[int, ...], fold: Fold | None) -> tuple[float, float]:
    if len(index) == 0:
        return 0.0, 0.0
    if fold is not None:
        x, y = fold.xy(index[fold.long])
        return x, y + (index[1 - fold.long] * CELL if len(index) == 2 else 0.0)
    if len(index) == 1:
        return index[0] * CELL, 0.0
    col = 0
    for i in index[1:]:
        col = col * 1000 + i  # more than two space loops: the rest flattened along x
    return col * CELL, index[0] * CELL


def _placement(m: dict, pe_grid: list) -> tuple[str, list]:
    """How a module is placed: 'per_pe' (one in each PE cell), 'lane' (along a PE dimension) or
    'single' (at the chain heads), with the PE dimension of each of its grid's dimensions."""
    dims = [pe_grid.index(g) if g in pe_grid else None for g in m["grid"]]
    if m["grid"] and len(dims) == len(pe_grid) and None not in dims and len(pe_grid) > 1:
        return "per_pe", dims
    if m["grid"] and dims[0] is not None:
        return "lane", dims
    return "single", dims


def layout(graph, descriptor: dict) -> tuple[dict, dict]:
    """-> (boxes by node, DRAM port boxes by module name)."""
    topo = descriptor["topology"]
    pe_grid = topo["pe_grid"]
    modules = {m["name"]: m for m in topo["modules"]}
    nodes_of: dict[str, list] = {}
    for node in graph.nodes:
        nodes_of.setdefault(node[0], []).append(node)
    order = sorted((m for m in modules.values() if m["kind"] != "pe"), key=lambda m: (m["level"] or 0, m["name"]))
    placements = {m["name"]: _placement(m, pe_grid) for m in order}
    pe_nodes = nodes_of.get("PE", [])
    fold = None
    extents = [max((n[1][d] for n in pe_nodes), default=0) + 1 for d in range(len(pe_grid))]
    long = max(range(len(extents)), key=lambda d: extents[d]) if extents else 0
    thin = len(pe_grid) == 1 or (len(pe_grid) == 2 and extents[long] >= THIN * extents[1 - long])
    if thin and pe_nodes:
        along = [m for m in order if placements[m["name"]][0] == "lane" and placements[m["name"]][1][0] == long]
        fold = fold_for(extents[long], sum(m["kind"] == "io" for m in along), sum(m["kind"] != "io" for m in along),
                        extents[1 - long] if len(pe_grid) == 2 else 1, long)
    boxes = {node: Box(*_pe_xy(node[1], fold), PE_SIZE) for node in pe_nodes}
    xs = [b.x for b in boxes.values()] or [0.0]
    ys = [b.y for b in boxes.values()] or [0.0]
    left, right, top, bottom = min(xs), max(xs), min(ys), max(ys)
    lanes = {"top": 0, "bottom": 0, "left": 0, "right": 0}
    corner = {"in": 0, "out": 0}
    sides = {"left": 0, "right": 0, "top": 0, "bottom": 0}  # singletons put beyond each side so far
    outward: dict = {}  # a singleton's node -> the direction its DRAM port goes
    per_pe_slot = 0
    drams = {}
    for m in order:  # outer levels get outer lanes: L1 first, then L2, L3
        incoming = m["kind"] == "io"
        how, dims = placements[m["name"]]
        nodes = nodes_of.get(m["name"], [])
        if how == "per_pe":
            dx, dy = [(-0.5, -0.5), (0.5, 0.5), (0.5, -0.5), (-0.5, 0.5)][per_pe_slot % 4]
            per_pe_slot += 1
            off = (PE_SIZE + SMALL_SIZE) / 2 - 3
            for node in nodes:
                x, y = _pe_xy(tuple(node[1][dims.index(d)] for d in range(len(pe_grid))), fold)
                boxes[node] = Box(x + dx * 2 * off / 1.4, y + dy * 2 * off / 1.4, SMALL_SIZE)
        elif how == "lane":
            along_x = len(pe_grid) == 1 or dims[0] >= 1
            side = ("top" if incoming else "bottom") if along_x else ("left" if incoming else "right")
            lanes[side] += 1
            distance = CELL * 0.35 + LANE * lanes[side]
            for node in nodes:
                if fold is not None and dims[0] == fold.long:  # in the band of its PE
                    x, y = fold.xy(node[1][0])
                    below = y + CELL * (fold.thick - 1) + distance
                    boxes[node] = Box(x, y - distance if incoming else below, MODULE_SIZE)
                    continue
                if fold is not None:  # follows the short dimension: left of the first band
                    boxes[node] = Box(-distance - (0 if incoming else CELL * 0.5), node[1][0] * CELL, MODULE_SIZE)
                    continue
                pos = node[1][0] * CELL + 0.25 * CELL * sum(node[1][1:])
                if along_x:
                    boxes[node] = Box(pos, top - distance if incoming else bottom + distance, MODULE_SIZE)
                else:
                    boxes[node] = Box(left - distance if incoming else right + distance, pos, MODULE_SIZE)
        else:  # a singleton (or a grid the PEs do not follow): beside the modules it feeds or drains
            for k, node in enumerate(nodes):
                box, outward[node] = _beside(graph, node, boxes, sides, incoming, k)
                if box is None:  # nothing placed to connect to: at the chain heads, outward by level
                    key = "in" if incoming else "out"
                    corner[key] += 1
                    step = CELL * (0.6 + 0.8 * corner[key])
                    box = Box(left - step, top - step + k * CELL * 0.5, MODULE_SIZE) if incoming else \
                        Box(right + step, bottom + step - k * CELL * 0.5, MODULE_SIZE)
                boxes[node] = box
        if m["dram"] and nodes:
            first = boxes[nodes[0]]
            shift = CELL * 1.1
            dx, dy = outward.get(nodes[0], (-1.0, 0.0) if incoming else (1.0, 0.0))
            drams[m["name"]] = Box(first.x + dx * shift, first.y + dy * shift, MODULE_SIZE)
    return boxes, drams


def _beside(graph, node, boxes: dict, sides: dict, incoming: bool, k: int) -> tuple[Box | None, tuple]:
    """A singleton's place: in line with the modules it is wired to, beyond the side of the drawing
    nearest to them (so its wires run straight out of the array, never across it), further out for
    each module already put on that side; and the outward direction. (None, ()) if none is placed."""
    near = [boxes[n] for n in (*graph.predecessors(node), *graph.successors(node)) if n in boxes]
    if not near:
        return None, ()
    placed = list(boxes.values())
    x = sum(b.x for b in near) / len(near)
    y = sum(b.y for b in near) / len(near)
    edges = {"left": min(b.x for b in placed), "right": max(b.x for b in placed),
             "top": min(b.y for b in placed), "bottom": max(b.y for b in placed)}
    gap = {"left": x - edges["left"], "right": edges["right"] - x,
           "top": y - edges["top"], "bottom": edges["bottom"] - y}
    prefer = ("left", "top", "right", "bottom") if incoming else ("right", "bottom", "left", "top")
    side = min(prefer, key=lambda s: (gap[s], prefer.index(s)))
    sides[side] += 1
    step = CELL * (0.2 + 0.8 * sides[side])
    if side in ("left", "right"):
        sign = -1.0 if side == "left" else 1.0
        return Box(edges[side] + sign * step, y + k * CELL * 0.5, MODULE_SIZE), (sign, 0.0)
    sign = -1.0 if side == "top" else 1.0
    return Box(x + k * CELL * 0.5, edges[side] + sign * step, MODULE_SIZE), (0.0, sign)


def pe_extents(graph) -> list[int]:
    """PEs along each space loop of a topology graph (its PE nodes are ("PE", index))."""
    indices = [node[1] for node in graph.nodes if node[0] == "PE"]
    return [max(index[d] for index in indices) + 1 for d in range(len(indices[0]))] if indices else []


def shape_text(extents: list[int], lanes: int, pes: int | None = None) -> str:
    """An array's shape, PE count and SIMD lanes in words: "103 x 2 = 206 PEs x 8 lanes"; with `pes`
    fewer than the grid holds (LU's triangle, descriptor topology.pe_set): "12 x 12 grid, 78 PEs x 1 lane"."""
    grid = math.prod(extents)
    count = grid if pes is None else pes
    lanes_text = f"{lanes} lane{'s' if lanes != 1 else ''}"
    if count != grid:
        return f"{' x '.join(str(e) for e in extents)} grid, {count:,} PE{'s' if count != 1 else ''} x {lanes_text}"
    shape = " x ".join(str(e) for e in extents) + (f" = {count:,}" if len(extents) > 1 else "")
    return f"{shape} PE{'s' if count != 1 else ''} x {lanes_text}"
