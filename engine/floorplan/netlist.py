"""Design descriptor + parameter values -> the floorplan's netlist: every process instance (each PE,
I/O module and drain instance of topology.modules the kernel instantiates at those values: not the
modules reading partial results back when none are) with the resources it takes, every FIFO between
two instances with its width, and the SLR each DRAM-facing instance must sit in.

The performance model gives resource totals only (engine/models/symbolic.py build_symbolic_model's
resource section); this module splits them per instance by the same rules, read from the descriptor,
so the instances add up to the model's totals:
- a PE: SIMD lanes x the DSP of each operation (resources/operators.json), the PE overhead plus the
  lanes' LUT / FF, and its buffers; only the PEs the array holds (descriptor `topology.pe_set`, e.g.
  LU's triangle: engine/compiler/architecture/pe_set.py); a PE outside it that a module still feeds is
  the dummy sink the export puts there, charged as an I/O instance;
- an I/O or drain instance: the I/O overhead and its buffers (BRAM18K or URAM as engine/models/memory.py
  counts them, doubled when double buffered);
- a FIFO: LUT / FF per bit, the block RAM of a FIFO the row rule deepens and the shift-register LUTs
  of one the skew rule deepens (engine/compiler/fifo_depths.py), charged to the instance it feeds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.compiler.architecture.build import OPERATORS
from engine.compiler.architecture.multipliers import pe_operator_resources
from engine.compiler.architecture.passes import unused_reload_modules
from engine.compiler.architecture.pe_set import restrict_to_pe_set, stub_pes
from engine.compiler.expressions import evaluate
from engine.compiler.fifo_depths import SRL_WORDS
from engine.compiler.topology import topology_graph
from engine.models.device import RESOURCE_NAMES, Device
from engine.models.dram import port_arrays
from engine.models.memory import bram18k, uram

Node = tuple  # (module name, grid index)


@dataclass(frozen=True)
class Fifo:
    source: Node  # in the direction data flows
    target: Node
    width_bits: int
    pattern: str
    array: str


@dataclass(frozen=True)
class Netlist:
    instances: dict  # Node -> {resource: amount}
    kinds: dict  # Node -> "pe" | "io" | "drain"
    fifos: tuple[Fifo, ...]
    pinned: dict  # Node -> SLR: the DRAM-facing instances, in the SLR of their bank
    space_loops: tuple[str, ...]
    pe_grid: tuple[int, ...]

    def total(self, resource: str) -> float:
        return sum(r[resource] for r in self.instances.values())


def _number(text, values: dict[str, int]) -> float:
    return float(evaluate(str(text), values))


def _buffer_blocks(module: dict, values: dict[str, int]) -> dict[str, float]:
    use = dict.fromkeys(("BRAM18K", "URAM"), 0.0)
    for b in module["buffers"]:
        width, depth = _number(b["width_bits"], values), _number(b["depth"], values)
        copies = 2 if b["double_buffered"] else 1
        if b["storage"] == "uram":
            use["URAM"] += copies * float(uram(width, depth))
        else:
            use["BRAM18K"] += copies * float(bram18k(width, depth))
    return use


def _pe_resources(descriptor: dict, values: dict[str, int]) -> dict[str, float]:
    compute = descriptor["compute"]
    table = OPERATORS[compute["dtype"]]
    lanes = _number(descriptor["topology"]["simd"], values)
    overhead = OPERATORS["module_overhead"]["pe"]
    operators = pe_operator_resources(compute, lanes, OPERATORS)
    return {"DSP": operators["DSP"],
            "LUT": overhead["lut"] + lanes * table["lut_per_lane"] + operators["LUT"],
            "FF": overhead["ff"] + lanes * table["ff_per_lane"]}


def dram_slrs(descriptor: dict, device: Device) -> dict[str, int]:
    """Array -> the SLR of the DDR bank its port is placed on (the export's round robin over kernel0's
    ports, engine/models/dram.py, and the device file's banks per SLR)."""
    arrays = port_arrays((g["array"], g["kind"]) for g in descriptor["io_groups"])
    ports = device.dram_ports()
    return {a: device.slr_of_bank(ports.bank_of(k)) for k, a in enumerate(arrays)}


def build_netlist(descriptor: dict, values: dict[str, int], device: Device) -> Netlist:
    """`values`: every tuning parameter, data-packing factors included."""
    graph = restrict_to_pe_set(topology_graph(descriptor, values), descriptor, values)
    stubs = stub_pes(graph, descriptor, values)
    unused = unused_reload_modules(descriptor, values)  # not instantiated by the kernel at these values
    graph.remove_nodes_from([n for n in list(graph) if n[0] in unused])
    modules = {m["name"]: m for m in descriptor["topology"]["modules"] if m["name"] not in unused}
    overhead = OPERATORS["module_overhead"]
    pe = _pe_resources(descriptor, values)
    per_module = {}
    for name, m in modules.items():
        use = dict.fromkeys(RESOURCE_NAMES, 0.0)
        if m["kind"] == "pe":
            use.update({k: use[k] + v for k, v in pe.items()})
        else:
            use["LUT"] += overhead["io"]["lut"]
            use["FF"] += overhead["io"]["ff"]
        for k, v in _buffer_blocks(m, values).items():
            use[k] += v
        per_module[name] = use
    sink = {**dict.fromkeys(RESOURCE_NAMES, 0.0), "LUT": overhead["io"]["lut"], "FF": overhead["io"]["ff"]}
    instances = {node: dict(sink if modules[node[0]]["kind"] == "pe" and node[1] in stubs else per_module[node[0]])
                 for node in graph.nodes}
    fifos = []
    for src, dst, data in graph.edges(data=True):
        width, depth = data["width_bits"], data["depth"]
        use = instances[dst]
        use["LUT"] += width * overhead["fifo_lut_per_bit"]
        use["FF"] += width * overhead["fifo_ff_per_bit"]
        if data["storage"] == "bram":
            use["BRAM18K"] += float(bram18k(width, depth))
        elif data["storage"] == "srl":
            use["LUT"] += width * math.ceil(depth / SRL_WORDS)
        fifos.append(Fifo(src, dst, width, data["pattern"], data["array"]))
    slr_of_array = dram_slrs(descriptor, device)
    pinned = {node: slr_of_array[modules[node[0]]["array"]] for node in graph.nodes
              if modules[node[0]]["dram"] and modules[node[0]]["array"] in slr_of_array}
    grid = tuple(int(round(_number(g, values))) for g in descriptor["topology"]["pe_grid"])
    return Netlist(instances, {node: modules[node[0]]["kind"] for node in graph.nodes}, tuple(fifos), pinned,
                   tuple(descriptor["topology"]["space_loops"]), grid)
