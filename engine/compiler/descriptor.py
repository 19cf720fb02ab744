"""Architecture -> design descriptor: the versioned JSON document that models, tuner, topology viewer
and exporter read (docs/descriptor.md describes every field). Expressions are sympy text in the
tuning parameters (e.g. "i_t1/i_t2", "ceiling(1024/k_t1)"); engine/compiler/expressions.py
`expression` and `evaluate` read them.
"""
from __future__ import annotations

from engine.compiler.architecture.build import guard_text, loop_bounds, pass_architectures
from engine.compiler.architecture.dram_runs import dram_runs, in_row_order
from engine.compiler.architecture.passes import architecture_passes
from engine.compiler.architecture.modules import Architecture, Buffer, Fifo, Module, PackingParameter, Phase
from engine.compiler.design import Design
from engine.compiler.band import runs_several_statements
from engine.compiler.design_space import DesignSpace
from engine.compiler.golden import golden_loop_nest
from engine.compiler.tuning import DTYPE_BITS

SCHEMA = "systolic-studio/design-descriptor"
VERSION = "1.9"


def build_descriptor(space: DesignSpace, design: Design, arch: Architecture,
                     passes: dict[str, Architecture] | None = None) -> dict:
    """`passes`: the design's pass architectures (architecture/build.py pass_architectures), built
    here when not given."""
    kernel = space.kernel
    if passes is None:
        passes = pass_architectures(space, design, arch)
    descriptor = {
        "schema": SCHEMA,
        "version": VERSION,
        "kernel": {
            "name": kernel.name,
            "path": kernel.path,
            "sizes": dict(kernel.sizes),
            "arrays": {name: {"dtype": a.dtype, "shape": list(a.shape), "element_bits": DTYPE_BITS[a.dtype],
                              "local": a.local}
                       for name, a in kernel.arrays.items()},
            "statements": [s.text for s in kernel.statements],
            "golden": golden_loop_nest(kernel),
        },
        "design": {k: v for k, v in design.to_json().items() if k != "params"},
        "parameters": [p.to_json() for p in design.params if p.role != "data_packing"]
                      + [_packing(p) for p in arch.packing],
        **_hardware(arch),
        "compute": {**arch.compute, "simd_lanes": str(arch.simd), **_statements(space),
                    "several_statements": runs_several_statements(space.kernel, space.band)},
        "local_arrays": [a.to_json() for a in arch.local_arrays],
    }
    if passes:
        # designs that revisit an output block run passes (architecture/passes.py): the hardware as
        # one pass sees it, for the simulator and the model
        info = architecture_passes(design, arch.groups)
        descriptor["passes"] = {"loops": list(info.loops), "reductions": list(info.reductions),
                                "initialised": info.initialised,
                                **{name: _hardware(a) for name, a in passes.items()}}
    return descriptor


def _hardware(arch: Architecture) -> dict:
    """The I/O groups and the topology of an architecture."""
    return {
        "io_groups": [{"name": g.name, "array": g.array, "kind": g.kind, "exterior_loop": g.exterior_loop,
                       "invariant_loops": list(g.invariant), "element_bits": g.element_bits,
                       "load_events": str(g.loads), "reload_events": str(g.reloads),
                       "initialised_on_chip": g.initialised_on_chip,
                       "subscripts": [str(e) for e in g.access.index],
                       # an output several PEs hold: which PE writes each element last (drains it)
                       **({"last_writer": arch.last_writers[g.name]} if g.name in arch.last_writers else {}),
                       # since 1.9: the PEs its I/O network reaches where fewer than those held (io_reach.py)
                       "pe_reach": arch.io_reach.get(g.name)}
                      for g in arch.groups],
        "topology": {
            "space_loops": list(arch.space_loops),
            "pe_grid": [str(e) for e in arch.pe_grid],
            # since 1.8: the PEs the array holds where not the whole grid (architecture/pe_set.py)
            "pe_set": arch.pe_set,
            "simd": str(arch.simd),
            "modules": [_module(m, arch) for m in arch.modules],
            "fifos": [_fifo(f) for f in arch.fifos],
        },
    }


def _statements(space: DesignSpace) -> dict:
    """The compute statement and the statements around it (initialisations), as C text over the band
    loops, so that a back end can emit the computation without reading compiler internals."""
    full = set(space.band.compute_statements)
    as_json = lambda s: {"name": s.name, "target": str(s.target), "expression": str(s.expr),  # noqa: E731
                         "guards": [guard_text(g) for g in s.guards], "bounds": loop_bounds(s)}
    first = min(space.kernel.statement(n).position for n in full)
    others = [s for s in space.kernel.statements if s.name not in full]
    return {"update": [as_json(s) for s in space.kernel.statements if s.name in full],
            "before": [as_json(s) for s in others if s.position < first],
            "after": [as_json(s) for s in others if s.position > first]}


def _packing(p: PackingParameter) -> dict:
    return {"name": p.name, "role": "data_packing", "group": p.group, "level": p.level, "bounds": [1, p.upper],
            "constraints": [{"kind": "power_of_two"}, {"kind": "divides_expression", "of": str(p.innermost)},
                            *({"kind": "divides_expression", "of": str(s)} for s in p.steps)],
            "tunable": True, "inferred_unless_given": True,
            "rate": str(p.rate) if p.rate is not None else None,
            "minimum": str(p.minimum) if p.minimum is not None else None}


def _phase(p: Phase) -> dict:
    return {"name": p.name, "body": p.body, "ii": str(p.ii),
            "loops": [{"name": l.name, "trip": str(l.trip), "role": l.role} for l in p.loops],
            "iterations": str(p.iterations),
            "elements": str(p.elements) if p.elements is not None else None}


def _buffer(b: Buffer) -> dict:
    return {"name": b.name, "array": b.array, "elements": str(b.elements), "pack": str(b.pack),
            "element_bits": b.element_bits, "width_bits": str(b.width_bits), "depth": str(b.depth),
            "double_buffered": b.double_buffered, "storage": b.storage}


def _module(m: Module, arch: Architecture) -> dict:
    module = {"name": m.name, "kind": m.kind, "array": m.array, "level": m.level, "dram": m.dram,
              "count": str(m.count), "grid": [str(g) for g in m.grid], "overlapped": m.overlapped,
              "embedded_l1": m.embedded_l1, "pipeline_depth": m.depth,
              "phases": [_phase(p) for p in m.phases], "buffers": [_buffer(b) for b in m.buffers]}
    if m.dram:
        module["dram_runs"] = {layout: str(run) for layout, run in dram_runs(arch, m).items()}
        module["in_row_order"] = in_row_order(arch, m)
    return module


def _fifo(f: Fifo) -> dict:
    return {"source": f.source, "target": f.target, "array": f.array, "count": str(f.count),
            "element_bits": f.element_bits, "pack": str(f.pack), "width_bits": str(f.width_bits),
            "pattern": f.pattern, "along": f.along, "reversed": f.reversed}
