"""Design descriptor + concrete parameter values -> `KernelPlan`: the hardware as concrete loops, boxes
and module instances, independent of the language a target writes it in.

Every band loop `l` is split as the PE runs it (docs/descriptor.md): tile index, then inside a tile
of `t1` points `p = pe * extent + time * (lh * lanes) + lh_index * lanes + lane`. Data moves in
*boxes*: the footprint of one reference's subscripts over a range of points of each loop. A block is
the footprint of a whole tile; a module instance keeps the box of the PEs it serves; a PE's
accumulators hold the box of its own points. Boxes are row-major, so producer and consumer agree on
the order of elements without exchanging anything but the elements.
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field, replace

import networkx as nx

from engine.compiler.architecture.passes import (
    descriptor_passes,
    descriptor_tiles,
    reads_partial_results,
    unused_reload_modules,
)
from engine.compiler.architecture.io_reach import existing_reach
from engine.compiler.architecture.pe_set import existing_pes, restrict_to_pe_set
from engine.compiler.expressions import evaluate
from engine.compiler.last_writer import owned_elements
from engine.export.interface import (
    ExportError,
    KernelInterface,
    affine,
    c_type,
    kernel_interface,
    stored_layout,
)
from engine.compiler.topology import topology_graph

PE_INPUT_PATTERNS = ("to_pe", "to_boundary_pe")


def _int(text: str, values: dict[str, int]) -> int:
    number = evaluate(text, values)
    if abs(number - round(number)) > 1e-9:
        raise ExportError(f"expression {text} is not a whole number for this configuration")
    return round(number)


@dataclass(frozen=True)
class BandLoop:
    name: str
    size: int        # original extent
    t1: int          # array-partitioning factor: points per tile
    tiles: int
    space: bool
    pes: int         # PEs along this loop (1 for time loops)
    time: int        # trip of the time loop inside a tile (1 for space loops)
    lh: int          # latency-hiding trip
    lanes: int       # SIMD lanes (1 unless this is the SIMD loop)

    @property
    def extent_per_pe(self) -> int:
        return self.t1 // self.pes

    @property
    def padded(self) -> bool:
        return self.size % self.t1 != 0


@dataclass(frozen=True)
class Reference:
    """An array reference: subscripts as ({loop: coefficient}, constant) per dimension."""
    array: str
    subscripts: tuple[tuple[tuple[tuple[str, int], ...], int], ...]

    def coefficients(self, dim: int) -> dict[str, int]:
        return dict(self.subscripts[dim][0])

    def depends_on(self, loop: str) -> bool:
        return any(loop in dict(c) for c, _ in self.subscripts)

    def box(self, extents: dict[str, int]) -> tuple[int, ...]:
        """Extent of each dimension as every loop runs over [0, extents[loop])."""
        return tuple(1 + sum(c * (extents[l] - 1) for l, c in coeffs) for coeffs, _ in self.subscripts)


@dataclass(frozen=True)
class Group:
    name: str
    array: str
    kind: str                   # in | acc | out
    exterior: str | None
    reference: Reference
    ctype: str
    initialised_on_chip: bool
    reloads: bool
    # an output whose subscripts miss a space loop: PE index -> the elements it writes last and
    # drains (engine/compiler/last_writer.py); None: every PE drains its whole box
    owners: dict | None = None
    # the PE indices its I/O network reaches where fewer than the PEs held (descriptor
    # io_groups[].pe_reach, engine/compiler/architecture/io_reach.py); None: every PE held
    reach: frozenset | None = None


@dataclass
class Instance:
    module: str                 # descriptor module name, or a PE-line sink/head added by the plan
    index: tuple[int, ...]
    role: str                   # pe | io | drain | sink | head
    group: str | None
    boundary: bool = False      # last of its chain: nothing to forward
    first: bool = False         # first of its chain: talks to the level above
    # alone in its chain where other chains of its module end in a member fed by the one before (a
    # network over the PEs it reaches, io_reach.py): a variant of its own, reading from the level above
    alone: bool = False
    streams: dict[str, str] = field(default_factory=dict)   # argument role -> stream name

    @property
    def name(self) -> str:
        return "_".join([self.module, *map(str, self.index)])


@dataclass(frozen=True)
class Stream:
    name: str
    array: str
    pack: int
    depth: int
    storage: str | None = None  # srl / bram for FIFOs deepened by engine/compiler/fifo_depths.py
    ends: tuple = ()  # (source node, target node) of a topology FIFO; () for a sink's, head's or unused one
    crossing: object = None  # engine/floorplan/pipeline.py CrossingPipeline: the FIFO crosses SLRs


@dataclass
class KernelPlan:
    descriptor: dict
    values: dict[str, int]
    interface: KernelInterface
    loops: dict[str, BandLoop]
    tile_order: list[str]               # tile loops, outermost first
    point_order: list[tuple[str, str]]  # (loop, "time" | "lh") inside a tile, outermost first
    simd_loop: str | None
    lanes: int
    space: list[str]
    pe_grid: list[int]
    groups: list[Group]
    acc: Group | None
    init_value: str | None              # the initialisation's C expression (constants only)
    reduce_op: str | None               # "+" or "*": how two partial results combine
    reduce_operand: str | None          # e in X = X op e: what one iteration adds to the accumulator
    identity: str | None
    update_target: str
    update_expression: str
    modules: dict[str, dict]            # descriptor modules the kernel instantiates
    module_dims: dict[str, list[str]]   # space loops a module instance's index runs over
    instances: list[Instance]           # in data-flow call order
    streams: dict[str, Stream]
    skipped_modules: list[str]
    pass_loops: list[str] = field(default_factory=list)   # tile loops run as sequential passes (arguments)
    reloads: bool = False               # the acc group's reload modules are built (partial results read back)
    reload_always: bool = False         # every event reloads (the accumulator's first value is in DRAM)
    statements: bool = False            # the PE runs several (guarded) statements: hls_kernel's _pe_statements
    # PE indices of the grid the array does not hold (descriptor topology.pe_set): not instantiated,
    # what their modules send them taken by a sink (engine/compiler/architecture/pe_set.py)
    missing_pes: frozenset = frozenset()

    def group(self, name: str) -> Group:
        return next(g for g in self.groups if g.name == name)

    def event_loops(self, group: Group) -> list[str]:
        """Tile loops up to the innermost one the group's reference depends on."""
        deps = [i for i, l in enumerate(self.tile_order) if group.reference.depends_on(l)]
        return self.tile_order[:deps[-1] + 1] if deps else []

    def block_extents(self) -> dict[str, int]:
        return {l: b.t1 for l, b in self.loops.items()}

    def served_extents(self, dims: list[str]) -> dict[str, int]:
        """Points of each loop covered by one instance indexed over `dims` (a PE line, a PE...)."""
        return {l: (b.extent_per_pe if l in dims else b.t1) for l, b in self.loops.items()}

    def pe_extents(self) -> dict[str, int]:
        return self.served_extents(self.space)

    def in_pass(self, loops: list[str]) -> list[str]:
        """The loops a module runs inside one pass (the pass loops are arguments of the region)."""
        return [l for l in loops if l not in self.pass_loops]

    def pe_iterations(self) -> int:
        """PE iterations of one pass."""
        return math.prod(b.tiles for l, b in self.loops.items() if l not in self.pass_loops) * math.prod(
            self.loops[l].time if kind == "time" else self.loops[l].lh for l, kind in self.point_order)


_REF = re.compile(r"([A-Za-z_]\w*)((?:\[[^\[\]]+\])+)")


def references(text: str) -> list[tuple[str, str, list[str]]]:
    """(matched text, array, subscripts) of every array reference in C text."""
    return [(m.group(0), m.group(1), re.findall(r"\[([^\[\]]+)\]", m.group(2))) for m in _REF.finditer(text)]


def _reference(array: str, subscripts: list[str], loops: list[str], layout: tuple[int, ...]) -> Reference:
    """Subscripts in stored order (engine/export/interface.py: the SIMD layout), so that boxes,
    words and DRAM addresses all follow the layout."""
    parts = []
    for s in (subscripts[d] for d in layout):
        coeffs, constant = affine(s, loops)
        if any(c < 0 for c in coeffs.values()):
            raise ExportError(f"subscript {s} of {array} decreases with a loop; the exporter needs "
                              "non-negative coefficients")
        parts.append((tuple(sorted(coeffs.items())), constant))
    return Reference(array, tuple(parts))


def _band_loops(descriptor: dict, values: dict[str, int]) -> tuple[dict[str, BandLoop], list[str], list]:
    design, topo = descriptor["design"], descriptor["topology"]
    pe = next(m for m in topo["modules"] if m["kind"] == "pe")
    compute = next(p for p in pe["phases"] if p["name"] == "compute")
    trips: dict[tuple[str, str], int] = {}
    tile_order, point_order = [], []
    for loop in compute["loops"]:
        name, role = loop["name"].rsplit("_", 1)
        trips[(name, role)] = _int(loop["trip"], values)
        (tile_order if role == "tile" else point_order).append(name if role == "tile" else (name, role))
    lanes = _int(topo["simd"], values)
    pe_grid = [_int(g, values) for g in topo["pe_grid"]]
    loops = {}
    for name, size in design["problem_size"].items():
        t1 = int(values[f"{name}_t1"])
        space = name in topo["space_loops"]
        b = BandLoop(name=name, size=int(size), t1=t1, tiles=-(-int(size) // t1), space=space,
                     pes=pe_grid[topo["space_loops"].index(name)] if space else 1,
                     time=trips.get((name, "time"), 1), lh=trips.get((name, "lh"), 1),
                     lanes=lanes if name == design["simd_loop"] else 1)
        if b.extent_per_pe * b.pes != t1 or b.time * b.lh * b.lanes != b.extent_per_pe:
            raise ExportError(f"loop {name}: PE loops do not cover a tile of {t1} points")
        loops[name] = b
    return loops, tile_order, point_order


def _statement(descriptor: dict, acc: Group | None) -> tuple[str, str, str | None, str | None, str | None, str | None]:
    compute = descriptor["compute"]
    # (since descriptor 1.3 a guarded initialisation inside the band, `if (k == 0) C[i][j] = 0`,
    # is one of the band's statements: it is the accumulator's initialisation, as one before it is)
    updates, guarded = _updates(descriptor)
    if len(updates) != 1:
        raise ExportError("the exporter handles one compute statement per band")
    if compute["after"]:
        raise ExportError("statements after the band's reduction are not exported yet")
    update = updates[0]
    before = compute["before"] + guarded
    target, expression = update["target"], update["expression"]
    init = reduce_op = identity = operand = None
    if acc is not None and acc.kind == "acc":
        inits = [s for s in before if references(s["target"])[0][1] == acc.array]
        if inits:
            init = inits[0]["expression"]
            if references(init) or re.search(r"[A-Za-z_]", init):
                raise ExportError(f"initialisation {inits[0]['target']} = {init} is not a constant")
        m = re.fullmatch(r"\(\s*" + re.escape(target) + r"\s*([-+*])\s*(.*)\)", expression.strip())
        if m is None:
            raise ExportError(f"reduction {target} = {expression} is not of the form X = X op e")
        reduce_op = "*" if m.group(1) == "*" else "+"
        identity = "1" if reduce_op == "*" else "0"
        operand = f"-({m.group(2)})" if m.group(1) == "-" else m.group(2)
    return target, expression, init, reduce_op, identity, operand


def _updates(descriptor: dict) -> tuple[list[dict], list[dict]]:
    """The band's unguarded statements, and its guarded statements that write the same element (a
    guarded initialisation of the accumulator)."""
    update = descriptor["compute"]["update"]
    plain = [s for s in update if not s.get("guards")]
    targets = {s["target"] for s in plain}
    return plain, [s for s in update if s.get("guards") and s["target"] in targets]


def _check_statements(descriptor: dict, loops: dict[str, BandLoop], groups: list[Group]) -> None:
    """What the exporter needs of a PE that runs several statements (descriptor compute.update, each
    under its guards, over the scop's local arrays): one tile per loop and one point per PE along
    each space loop, so that the local arrays' values never cross a tile (no latency hiding or SIMD);
    outputs only written (no accumulation), each element drained once: by the PE whose box holds it
    (the output's subscripts use every space loop) or, where several PEs hold it, by its last writer
    (`Group.owners`, engine/export/owned_drain.py); the values a PE passes its neighbour described
    exactly (local_arrays[].channels)."""
    ids = ", ".join(s["name"] for s in descriptor["compute"]["update"])
    what = f"this design's PE runs statements {ids}"
    tiled = [f"{l}_t1={b.t1} (size {b.size})" for l, b in loops.items() if b.tiles > 1]
    if tiled:
        raise ExportError(f"{what}: export needs one tile per loop (l_t1 = the loop's size); got {', '.join(tiled)}")
    split = [l for l, b in loops.items() if b.lh > 1 or b.lanes > 1 or (b.space and b.extent_per_pe > 1)]
    if split:
        raise ExportError(f"{what}: export needs one point per PE along each space loop and no latency "
                          f"hiding or SIMD; loops {', '.join(split)} are split")
    space = [l for l, b in loops.items() if b.space and b.pes > 1]
    for g in groups:
        if g.kind == "acc":
            raise ExportError(f"{what}: an accumulation ({g.array}) among several statements is not exported")
        missing = [l for l in space if g.kind == "out" and not g.reference.depends_on(l)]
        if missing and g.owners is None:
            raise ExportError(f"{what}: every PE along {', '.join(missing)} would drain the same {g.array} "
                              f"elements (its subscripts do not use {', '.join(missing)}); choose a design whose "
                              f"space loops all appear in {g.array}'s subscripts")
    for a in descriptor.get("local_arrays", []):
        for ch in a["channels"]:
            if not ch["uniform"] or ch["value"] is None or ch["send_when"] is None or ch["receive_when"] is None:
                raise ExportError(f"{what}: local array {a['name']} crosses {ch['along']} other than by one PE "
                                  "per step from a single statement, which is not exported")


def _owners(descriptor: dict, group: dict, values: dict[str, int]) -> dict | None:
    """The elements each PE drains of an output several PEs hold (its last writer's), or None."""
    topo = descriptor["topology"]
    owned = owned_elements(group, descriptor["design"]["problem_size"], topo["space_loops"],
                           [_int(g, values) for g in topo["pe_grid"]], values)
    if owned is not None and list(stored_layout(descriptor, group["array"])) != list(range(len(group["subscripts"]))):
        raise ExportError(f"{group['array']}: a drain of each element's last writer keeps the source layout "
                          "(no SIMD reordering)")
    return owned


def _module_dims(descriptor: dict) -> dict[str, list[str]]:
    """The space loops a module's grid index runs over, derived from how it connects to the PEs."""
    space = descriptor["topology"]["space_loops"]
    dims: dict[str, list[str]] = {"PE": list(space)}
    fifos = descriptor["topology"]["fifos"]
    for f in fifos:
        if f["pattern"] == "to_pe":
            dims[f["source"]] = list(space)
        elif f["pattern"] == "to_boundary_pe":
            dims[f["source"]] = [s for s in space if s != f["along"]]
    changed = True
    while changed:
        changed = False
        for f in fifos:
            if f["pattern"] in ("to_row_heads", "to_first") and f["target"] in dims and f["source"] not in dims:
                dims[f["source"]] = dims[f["target"]][:-1]
                changed = True
    return dims


def build_plan(descriptor: dict, values: dict[str, int], *, crossings: dict | None = None) -> KernelPlan:
    """`values` holds every tuning parameter, data-packing factors included. `crossings`: (source node,
    target node, array) -> CrossingPipeline (engine/floorplan/pipeline.py) of the FIFOs a floorplan
    puts across SLRs; each such FIFO is deepened by its pipeline's extra depth."""
    values = {k: int(v) for k, v in values.items()}
    design, topo = descriptor["design"], descriptor["topology"]
    band = list(design["problem_size"])
    loops, tile_order, point_order = _band_loops(descriptor, values)
    reach = existing_reach(descriptor, values)
    groups = [Group(name=g["name"], array=g["array"], kind=g["kind"], exterior=g["exterior_loop"],
                    reference=_reference(g["array"], g["subscripts"], band, stored_layout(descriptor, g["array"])),
                    ctype=c_type(descriptor["kernel"]["arrays"][g["array"]]["dtype"]),
                    initialised_on_chip=g["initialised_on_chip"], reloads=g["reload_events"] != "0",
                    owners=_owners(descriptor, g, values), reach=reach.get(g["name"]))
              for g in descriptor["io_groups"]]
    update = descriptor["compute"]["update"]
    multi = descriptor["compute"]["several_statements"]
    if len({g.array for g in groups}) != len(groups):
        raise ExportError("an array referenced twice in the statement is not exported yet")
    written = [g for g in groups if g.kind != "in"]
    if not multi and any(g.reach is not None for g in groups):
        # the guarded read of an input the network brings to some PEs only is pe_statements.py's
        raise ExportError("an I/O network that reaches some PEs only (io_groups[].pe_reach) is exported for a PE "
                          "running several statements only")
    if multi:
        _check_statements(descriptor, loops, groups)
        acc = written[0]
        target, expression, init, reduce_op, identity, operand = (
            update[0]["target"], update[0]["expression"], None, None, None, None)
    else:
        if len(written) != 1:
            raise ExportError("the exporter handles exactly one written array reference")
        acc = written[0]
        target, expression, init, reduce_op, identity, operand = _statement(descriptor, acc)

    # Reloaded partial results come back through the descriptor's reload modules (C_L3_in...): the
    # tile loops that revisit an output block run as sequential passes, one dataflow region call each
    # (engine/compiler/architecture/passes.py), so a block is read before it is written, once per pass.
    # Where nothing is reloaded at these values, those modules are not instantiated.
    passes = descriptor_passes(descriptor)
    tiles = descriptor_tiles(descriptor, values)
    reloads = reads_partial_results(descriptor, values)
    skipped = unused_reload_modules(descriptor, values)
    modules = {m["name"]: m for m in topo["modules"] if m["name"] not in skipped}
    dims = _module_dims({"topology": {**topo, "fifos": [f for f in topo["fifos"]
                                                         if f["source"] not in skipped]}})
    for name, m in modules.items():
        if len(dims.get(name, [])) != len(m["grid"]):
            raise ExportError(f"cannot place module {name} in the PE grid")

    # only the PEs the array holds (a triangle for LU along k and j); chains end at the last of them
    graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
    graph.remove_nodes_from([n for n in list(graph) if n[0] in skipped])
    pe_grid = [_int(g, values) for g in topo["pe_grid"]]
    plan = KernelPlan(descriptor=descriptor, values=values, interface=kernel_interface(descriptor, values),
                      loops=loops, tile_order=tile_order, point_order=point_order,
                      simd_loop=design["simd_loop"], lanes=_int(topo["simd"], values), space=list(topo["space_loops"]),
                      pe_grid=pe_grid, groups=groups, acc=acc, init_value=init, reduce_op=reduce_op,
                      reduce_operand=operand, identity=identity, update_target=target, update_expression=expression, modules=modules,
                      module_dims=dims, instances=[], streams={}, skipped_modules=skipped,
                      pass_loops=list(passes.loops) if passes.active(tiles) else [], reloads=bool(reloads),
                      reload_always=bool(reloads) and not acc.initialised_on_chip, statements=multi,
                      missing_pes=_missing_pes(descriptor, values, pe_grid))
    _instances(plan, graph)
    for name, stream in list(plan.streams.items()):
        pipe = (crossings or {}).get((*stream.ends, stream.array)) if stream.ends else None
        if pipe is not None:
            plan.streams[name] = replace(stream, depth=stream.depth + pipe.extra_depth, crossing=pipe)
    return plan


def _missing_pes(descriptor: dict, values: dict[str, int], pe_grid: list[int]) -> frozenset:
    """The PE indices of the grid the array does not hold (descriptor topology.pe_set)."""
    held = existing_pes(descriptor, values)
    return frozenset() if held is None else frozenset(indices(pe_grid)) - held


def _stream_name(array: str, src: tuple, dst: tuple, drain: bool) -> str:
    node = src if drain else dst
    where = "_".join([node[0], *map(str, node[1])])
    return f"{array}_{'from' if drain else 'to'}_{where}"


def _instances(plan: KernelPlan, graph: nx.MultiDiGraph) -> None:
    """Module instances with their streams, PE-line sinks and reduction heads, in data-flow order."""
    elements = {a: info["element_bits"] for a, info in plan.descriptor["kernel"]["arrays"].items()}
    flow = nx.DiGraph()
    by_node: dict[tuple, Instance] = {}
    for node, data in graph.nodes(data=True):
        module = plan.modules[node[0]]
        group = None if module["kind"] == "pe" else next(g.name for g in plan.groups if g.array == module["array"])
        inst = Instance(module=node[0], index=node[1], role=module["kind"], group=group)
        by_node[node] = inst
        flow.add_node(inst.name)
    for src, dst, data in graph.edges(data=True):
        array = data["array"]
        drain = plan.modules[src[0]]["kind"] == "drain" or plan.modules[dst[0]]["kind"] == "drain" or (
            src[0] == dst[0] == "PE" and plan.acc is not None and array == plan.acc.array)
        name = _stream_name(array, src, dst, drain)
        pack = data["width_bits"] // elements[array]
        plan.streams[name] = Stream(name, array, pack, data["depth"], data.get("storage"), ends=(src, dst))
        s, d = by_node[src], by_node[dst]
        pattern = data["pattern"]
        if s.role == "pe" and d.role == "pe":
            s.streams[f"{array}_out"] = name
            d.streams[f"{array}_in"] = name
        elif d.role == "pe":
            d.streams[f"{array}_in"] = name
            s.streams["child"] = name
        elif s.role == "pe":
            s.streams[f"{array}_out"] = name
            d.streams["own"] = name
        elif pattern == "chain":
            if d.role == "drain":
                s.streams["out"] = name
                d.streams["successor"] = name
            else:
                s.streams["next"] = name
                d.streams["in"] = name
        elif d.role == "drain":  # towards DRAM: from a child chain's head to its parent
            s.streams["out"] = name
            d.streams["own"] = name
        else:
            s.streams["child"] = name
            d.streams["in"] = name
        flow.add_edge(s.name, d.name)
    extra: list[Instance] = []
    for node in [n for n in by_node if n[0] == "PE" and n[1] in plan.missing_pes]:
        extra += _stub_sinks(plan, by_node.pop(node), flow)
    for node, inst in by_node.items():
        if inst.role != "pe":
            has_chain = any(f["pattern"] == "chain" and f["source"] == inst.module
                            for f in plan.descriptor["topology"]["fifos"])
            inst.boundary = has_chain  # a chain member: head, middle or last (see hls_kernel)
            # the head talks to the level above: no chain FIFO of its own module reaches it
            # (index 0 of its line, or the first instance left of a network over the PEs it reaches)
            inst.first = not any(graph.edges[e]["pattern"] == "chain"
                                 for e in (graph.in_edges(node, keys=True) if inst.role == "io"
                                           else graph.out_edges(node, keys=True)))
            continue
        for g in plan.groups:
            key_in, key_out = f"{g.array}_in", f"{g.array}_out"
            if g.kind == "in" and g.exterior and key_out not in inst.streams:
                name = f"{g.array}_to_{g.array}_PE_sink_" + "_".join(map(str, inst.index))
                plan.streams[name] = Stream(name, g.array, _pe_pack(plan, g.array, graph), 2)
                inst.streams[key_out] = name
                sink = Instance(f"{g.array}_PE_sink", inst.index, "sink", g.name, streams={"in": name})
                extra.append(sink)
                flow.add_edge(inst.name, sink.name)
            if g.kind != "in" and g.exterior and key_in not in inst.streams:
                name = f"{g.array}_from_{g.array}_PE_head_" + "_".join(map(str, inst.index))
                plan.streams[name] = Stream(name, g.array, plan.streams[inst.streams[key_out]].pack, 2)
                inst.streams[key_in] = name
                head = Instance(f"{g.array}_PE_head", inst.index, "head", g.name, streams={"out": name})
                extra.append(head)
                flow.add_edge(head.name, inst.name)
    ends: dict[str, set[bool]] = {}  # module -> whether its chains' last members are also their first
    last = [i for i in by_node.values() if i.role in ("io", "drain") and i.boundary
            and ("next" if i.role == "io" else "successor") not in i.streams]
    for inst in last:
        ends.setdefault(inst.module, set()).add(inst.first)
    for inst in last:
        inst.alone = inst.first and len(ends[inst.module]) == 2
    for inst in by_node.values():
        if inst.role != "pe":
            continue
        for g in plan.groups:
            # a PE outside the PEs a group's network reaches (io_reach.py): its guards never read
            # (write) the group there, but every PE instance has the same arguments
            key = f"{g.array}_{'in' if g.kind == 'in' else 'out'}"
            if g.reach is not None and inst.index not in g.reach and key not in inst.streams:
                name = f"{g.array}_unused_{key.rsplit('_', 1)[1]}_" + "_".join(map(str, inst.index))
                plan.streams[name] = Stream(name, g.array, _pe_side_pack(plan, g.array, graph), 2)
                inst.streams[key] = name
        for a in plan.descriptor.get("local_arrays", []):
            for key in (f"{a['name']}_in", f"{a['name']}_out") if a["channels"] else ():
                if key not in inst.streams:
                    # the first / last PE of a line: its guards never receive / send there (a value
                    # crosses from a point of the domain to a point of the domain), but every PE
                    # instance has the same arguments
                    name = f"{a['name']}_unused_{key.rsplit('_', 1)[1]}_" + "_".join(map(str, inst.index))
                    plan.streams[name] = Stream(name, a["name"], 1, 2)
                    inst.streams[key] = name
    everything = {i.name: i for i in [*by_node.values(), *extra]}
    order = list(nx.lexicographical_topological_sort(flow, key=lambda n: _order_key(everything[n])))
    plan.instances = [everything[n] for n in order]


def _stub_sinks(plan: KernelPlan, stub: Instance, flow: nx.DiGraph) -> list[Instance]:
    """A PE the array does not hold, still joined to its I/O modules (pe_set.py): a sink takes each
    input stream (the words the PE would read, one per PE iteration: AutoSA's dummy module); an
    output's stream is left without a writer, its drain reading nothing from a PE that writes no
    element (the output's last-writer table gives it none)."""
    where = f"PE {stub.index} outside the iteration domain"
    sinks = []
    for key, name in stub.streams.items():
        array, side = key.rsplit("_", 1)
        group = next(g for g in plan.groups if g.array == array)
        if side == "in" and group.kind == "in":
            sink = Instance(f"{array}_PE_sink", stub.index, "sink", group.name, streams={"in": name})
            sinks.append(sink)
            for source in flow.predecessors(stub.name):
                flow.add_edge(source, sink.name)
        elif side == "out" and group.owners is not None and not group.owners.get(stub.index):
            continue
        else:
            raise ExportError(f"{where}: its {array} stream ({key}) would need a module that "
                              f"{'reads partial results back' if side == 'in' else 'drains a box'}; "
                              "only inputs and outputs drained by their last writer are exported")
    flow.remove_node(stub.name)
    return sinks


def _order_key(inst: Instance) -> tuple:
    rank = {"io": 0, "head": 1, "pe": 2, "sink": 3, "drain": 4}[inst.role]
    return (rank, inst.module, inst.index)


def _grid(plan: KernelPlan, module: str) -> list[int]:
    return [_int(g, plan.values) for g in plan.modules[module]["grid"]]


def _pe_pack(plan: KernelPlan, array: str, graph: nx.MultiDiGraph) -> int:
    for src, dst, data in graph.edges(data=True):
        if dst[0] == "PE" and data["array"] == array:
            return plan.streams[_stream_name(array, src, dst, False)].pack
    raise ExportError(f"no stream brings {array} to the PEs")


def _pe_side_pack(plan: KernelPlan, array: str, graph: nx.MultiDiGraph) -> int:
    """Elements per word of the FIFOs between the PEs and an array's I/O modules (either way)."""
    for src, dst, data in graph.edges(data=True):
        if data["array"] == array and (src[0] == "PE") != (dst[0] == "PE"):
            return data["width_bits"] // plan.descriptor["kernel"]["arrays"][array]["element_bits"]
    raise ExportError(f"no stream joins {array} to the PEs")


def grid_of(plan: KernelPlan, module: str) -> list[int]:
    return _grid(plan, module)


def indices(extents) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(e) for e in extents)))
