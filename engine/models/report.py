"""One evaluated configuration -> a plain dict (the `systolic model --json` object) and a text report."""
from __future__ import annotations

import dataclasses

import numpy as np
import sympy

from engine.compiler.architecture.build import operations_label
from engine.models.constraints import violations
from engine.models.device import RESOURCE_NAMES
from engine.compiler.architecture.dram_runs import in_row_order
from engine.models.dram import port_directions, port_layout, row_ordered_arrays
from engine.models.evaluate import PerformanceModel
from engine.models.host_time import HOST_COPY_GBYTES_PER_S, repack_seconds
from engine.errors import DesignError


def packing_violations(model: PerformanceModel, values: dict[str, int]) -> list[str]:
    """Given data-packing factors: power of two, at most one bus word, dividing their block."""
    given = [p for p in model.packing if p.name in values]
    if not given:
        return []
    blocks = model.packing_blocks({k: v for k, v in values.items() if k in model.tunable})
    problems = []
    for p in given:
        v, block = values[p.name], int(blocks[p.name])
        if not 1 <= v <= p.upper:
            problems.append(f"{p.name}={v} is outside its bounds 1..{p.upper}")
        elif v & (v - 1):
            problems.append(f"{p.name}={v} must be a power of two")
        elif block % v:
            where = " and where the boxes start along it" if p.steps else ""
            problems.append(f"{p.name}={v} must divide {block} (its block's innermost extent{where})")
    return problems


def evaluate_configuration(model: PerformanceModel, values: dict[str, int], *, crossing_cycles: int = 0) -> dict:
    """Check the parameters (all problems at once), evaluate, and report as plain data. `crossing_cycles`:
    what a floorplan's SLR-crossing pipelines add (engine/models/crossings.py), charged to the latency
    (its epilogue: the last word's path is that much longer) and so to the throughput."""
    known = {p.name for p in model.design.params if p.tunable}
    problems = violations(model.design, {k: v for k, v in values.items() if k in known})
    problems += [f"{k} is not a parameter of {model.design.id}" for k in values
                 if k not in known and k not in {p.name for p in model.packing}]
    if not problems:
        problems += packing_violations(model, values)
    if problems:
        raise DesignError(f"{model.design.id}: " + "; ".join(problems))
    ev = model.evaluate(values)
    scalar = {k: (bool(v) if k == "fits" else float(v)) for k, v in ev.values.items()}
    if crossing_cycles:
        plain = scalar["latency_cycles"]
        scalar["latency_cycles"] += crossing_cycles
        scalar["epilogue"] += crossing_cycles
        scalar["throughput_gops"] *= plain / scalar["latency_cycles"]
    modules = {k.split(":", 1)[1]: scalar[k] for k in scalar if k.startswith("module:")}
    bottleneck = max(modules, key=modules.get)
    packing = {k: int(v) for k, v in model.inferred_packing(values).items()}
    return {
        "design": model.design.id,
        "params": {**{k: int(v) for k, v in values.items() if k in model.tunable}, **packing},
        "latency_cycles": scalar["latency_cycles"],
        "prologue": scalar["prologue"],
        "main": scalar["main"],
        "epilogue": scalar["epilogue"],
        "slr_crossing_cycles": int(crossing_cycles),
        "modules": modules,
        "bottleneck": bottleneck,
        "pes": _pe_counts(model, values),
        "dsp": scalar["DSP"], "bram18k": scalar["BRAM18K"], "uram": scalar["URAM"],
        "lut": scalar["LUT"], "ff": scalar["FF"],
        "bram18k_by_array": {k.split(":", 1)[1]: scalar[k] for k in scalar if k.startswith("bram:")},
        "offchip_bytes": scalar["offchip_bytes"],
        "offchip_elements": {k.split(":", 1)[1]: scalar[k] for k in scalar if k.startswith("offchip:")},
        "fifo_bytes": scalar["fifo_bytes"],
        "throughput_gops": scalar["throughput_gops"],
        # what the GOP/s counts (compute.operations; a network layer's total at its own sizes)
        "operations": {"total": model.symbolic.operations,
                       "per_iteration": model.architecture.compute["operations"]["per_iteration"]},
        "fits": scalar["fits"],
        "violations": model.over_budget(ev),
        "dram": {"layout": model.layout, "axi": dataclasses.asdict(model.device.axi)},
        "host": _host_time(model, scalar),
        "device": {"name": model.device.name, "usable_ratio": model.device.usable_ratio,
                   "clock_mhz": model.device.clock_mhz,
                   "budget": {r: model.device.budget(r) for r in RESOURCE_NAMES}},
    }


def _pe_counts(model: PerformanceModel, values: dict[str, int]) -> dict:
    """The PEs the resources are counted for (the PE module's count: a triangle where the iteration
    domain is one, engine/compiler/architecture/build.py occupied_pe_count) and the grid's box."""
    arch = model.architecture
    full = {k: v for k, v in {**model.inferred_packing(values), **values}.items()}
    grid = [int(sympy.sympify(g).subs(full)) for g in arch.pe_grid]
    return {"count": int(sympy.sympify(arch.module("PE").count).subs(full)), "grid": grid}


def _host_time(model: PerformanceModel, scalar: dict) -> dict:
    """The host's repacking estimate (engine/models/host_time.py) beside the kernel's time: every
    serialized port's words are gathered (inputs) or scattered (outputs) once; a serialized buffer
    holds exactly the off-chip traffic the model counts for its array."""
    groups = model.architecture.groups
    directions = port_directions((g.array, g.kind, sympy.sympify(g.reloads) != 0, g.initialised_on_chip)
                                 for g in groups)
    bits = {g.array: g.element_bits for g in groups}
    ordered = row_ordered_arrays((m.array, in_row_order(model.architecture, m))
                                 for m in model.architecture.modules if m.dram)
    moved = {"in": 0.0, "out": 0.0}
    for array, direction in directions.items():
        if port_layout(model.layout, direction, array in ordered)[0] != "serialized":
            continue
        if direction == "inout":  # the array gathered once before the kernel and scattered once after it
            elements = model.array_elements[array]
            for way in moved:
                moved[way] += 2 * elements * bits[array] / 8
        else:
            moved[direction] += 2 * scalar.get(f"offchip:{array}", 0.0) * bits[array] / 8
    kernel = scalar["latency_cycles"] / (model.device.clock_mhz * 1e6)
    return {"serialize_seconds": repack_seconds(moved["in"]), "deserialize_seconds": repack_seconds(moved["out"]),
            "kernel_seconds": kernel, "gbytes_per_s": HOST_COPY_GBYTES_PER_S}


def format_report(result: dict) -> str:
    dev = result["device"]
    lines = [f"design {result['design']}  " + " ".join(f"{k}={v}" for k, v in result["params"].items()),
             f"latency {result['latency_cycles']:,.0f} cycles = prologue {result['prologue']:,.0f} "
             f"+ main {result['main']:,.0f} + epilogue {result['epilogue']:,.0f}",
             f"throughput {result['throughput_gops']:,.1f} GOP/s ({operations_label(result['operations'])}) "
             f"at {dev['clock_mhz']:.0f} MHz", "modules:"]
    for name, cycles in sorted(result["modules"].items(), key=lambda kv: -kv[1]):
        mark = "  <- bottleneck" if name == result["bottleneck"] else ""
        lines.append(f"  {name:14} {cycles:>16,.0f}{mark}")
    pes = result["pes"]
    box = " x ".join(str(n) for n in pes["grid"]) or "1"
    lines.append(f"array: {pes['count']:,} PEs" + (f" ({box})" if pes["count"] == sympy.prod(pes["grid"]) else
                 f" (where the iteration domain has points, in a {box} grid)"))
    lines.append(f"resources (budget = {dev['usable_ratio']:.0%} of {dev['name']}):")
    for key, resource in (("dsp", "DSP"), ("bram18k", "BRAM18K"), ("uram", "URAM"), ("lut", "LUT"), ("ff", "FF")):
        budget = dev["budget"][resource]
        share = result[key] / budget if budget else float(result[key] > 0)
        lines.append(f"  {resource:8} {result[key]:>12,.0f} / {budget:>12,.0f}  {share:6.1%}")
    lines.append("off-chip traffic: " + ", ".join(f"{a} {n:,.0f} elements" for a, n in result["offchip_elements"].items())
                 + f" ({result['offchip_bytes'] / 2**20:,.1f} MiB)")
    dram = result["dram"]
    axi = dram["axi"]
    lines.append(f"DRAM: {dram['layout']} layout; AXI bursts of at most {axi['max_burst_beats']} beats, "
                 f"{axi['outstanding']} outstanding, {axi['latency']}-cycle latency")
    host = result["host"]
    lines.append(f"host: serialize {host['serialize_seconds'] * 1e3:,.2f} ms + kernel {host['kernel_seconds'] * 1e3:,.2f} ms"
                 f" + deserialize {host['deserialize_seconds'] * 1e3:,.2f} ms (repacking at an assumed "
                 f"{host['gbytes_per_s']:g} GB/s host copy rate)")
    lines.append("fits the device" if result["fits"] else "does NOT fit: " + "; ".join(result["violations"]))
    return "\n".join(lines)


def as_int_params(values: dict) -> dict[str, int]:
    out = {}
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) and not (isinstance(v, float) and v.is_integer()):
            raise DesignError(f"parameter {k}={v!r} must be an integer")
        out[k] = int(v)
    return out
