"""Topology graph + descriptor -> positions for the topology viewer: the PE grid in the middle, each
I/O or drain module along the side of the PE dimension it follows (inputs top/left, drains
bottom/right, one lane per module, outer lanes for higher levels), per-PE modules as small boxes in
their PE's cell, singletons at the chain heads, and a DRAM port beyond every module that reads or
writes DRAM. Plain Python: no Qt."""
from __future__ import annotations

from dataclasses import dataclass

CELL = 60.0  # distance between PE centres
PE_SIZE = 38.0
MODULE_SIZE = 26.0
SMALL_SIZE = 12.0


@dataclass(frozen=True)
class Box:
    x: float  # centre
    y: float
    size: float


def _pe_xy(index: tuple[int, ...]) -> tuple[float, float]:
    if len(index) == 0:
        return 0.0, 0.0
    if len(index) == 1:
        return index[0] * CELL, 0.0
    col = 0
    for i in index[1:]:
        col = col * 1000 + i  # more than two space loops: the rest flattened along x
    return col * CELL, index[0] * CELL


def layout(graph, descriptor: dict) -> tuple[dict, dict]:
    """-> (boxes by node, DRAM port boxes by module name)."""
    topo = descriptor["topology"]
    pe_grid = topo["pe_grid"]
    modules = {m["name"]: m for m in topo["modules"]}
    nodes_of: dict[str, list] = {}
    for node in graph.nodes:
        nodes_of.setdefault(node[0], []).append(node)
    boxes = {}
    pe_nodes = nodes_of.get("PE", [])
    for node in pe_nodes:
        boxes[node] = Box(*_pe_xy(node[1]), PE_SIZE)
    xs = [b.x for b in boxes.values()] or [0.0]
    ys = [b.y for b in boxes.values()] or [0.0]
    left, right, top, bottom = min(xs), max(xs), min(ys), max(ys)
    lanes = {"top": 0, "bottom": 0, "left": 0, "right": 0}
    corner = {"in": 0, "out": 0}
    per_pe_slot = 0
    drams = {}
    # outer levels get outer lanes: place L1 first, then L2, L3
    order = sorted((m for m in modules.values() if m["kind"] != "pe"), key=lambda m: (m["level"] or 0, m["name"]))
    for m in order:
        incoming = m["kind"] == "io"
        dims = [pe_grid.index(g) if g in pe_grid else None for g in m["grid"]]
        nodes = nodes_of.get(m["name"], [])
        if m["grid"] and len(dims) == len(pe_grid) and None not in dims and len(pe_grid) > 1:
            dx, dy = [(-0.5, -0.5), (0.5, 0.5), (0.5, -0.5), (-0.5, 0.5)][per_pe_slot % 4]
            per_pe_slot += 1
            off = (PE_SIZE + SMALL_SIZE) / 2 - 3
            for node in nodes:
                x, y = _pe_xy(tuple(node[1][dims.index(d)] for d in range(len(pe_grid))))
                boxes[node] = Box(x + dx * 2 * off / 1.4, y + dy * 2 * off / 1.4, SMALL_SIZE)
        elif m["grid"] and dims[0] is not None:
            along_x = len(pe_grid) == 1 or dims[0] >= 1
            side = ("top" if incoming else "bottom") if along_x else ("left" if incoming else "right")
            lanes[side] += 1
            distance = CELL * (0.35 + 0.75 * lanes[side])
            for node in nodes:
                pos = node[1][0] * CELL + 0.25 * CELL * sum(node[1][1:])
                if along_x:
                    boxes[node] = Box(pos, top - distance if incoming else bottom + distance, MODULE_SIZE)
                else:
                    boxes[node] = Box(left - distance if incoming else right + distance, pos, MODULE_SIZE)
        else:  # a singleton (or a grid the PEs do not follow): at the chain heads, outward by level
            key = "in" if incoming else "out"
            corner[key] += 1
            step = CELL * (0.6 + 0.8 * corner[key])
            for k, node in enumerate(nodes):
                if incoming:
                    boxes[node] = Box(left - step, top - step + k * CELL * 0.5, MODULE_SIZE)
                else:
                    boxes[node] = Box(right + step, bottom + step - k * CELL * 0.5, MODULE_SIZE)
        if m["dram"] and nodes:
            first = boxes[nodes[0]]
            shift = CELL * 1.1
            drams[m["name"]] = Box(first.x - shift if incoming else first.x + shift, first.y, MODULE_SIZE)
    return boxes, drams
