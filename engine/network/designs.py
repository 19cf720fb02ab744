"""Kernel + Network -> the network's designs, and each layer's version of them.

A network is tuned over one set of designs: those of the kernel at the network's envelope (the
largest size of every define over the layers), as Odyssey evaluates the same 30 CNN designs on every
VGG16 layer. Compiling each layer alone would not give the same set: a 1x1 layer (P = Q = 1) has more
legal dataflows, and CONV1's I = 3 moves the SIMD loop from i to q. So a layer's design is the
envelope design's hardware choices (dataflow, permutation class, latency-hiding loops, SIMD loop)
applied to the layer's own polyhedral model: tuning bounds and the performance model are the layer's.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.compiler.band import find_band
from engine.compiler.dependences import analyze_dependences
from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace, explore_designs
from engine.compiler.frontend import parse_kernel
from engine.compiler.legality import check_space_loops, check_uniform
from engine.compiler.polyhedral import build_model
from engine.compiler.tuning import tuning_parameters
from engine.network.workload import Network, check_against_kernel


@dataclass(frozen=True)
class NetworkDesigns:
    """The designs every layer is tuned with, compiled at the envelope sizes."""

    kernel_path: str
    envelope: dict[str, int]
    space: DesignSpace

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.space.designs]


def envelope_sizes(network: Network) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for layer in network.layers:
        for name, value in layer.sizes.items():
            sizes[name] = max(sizes.get(name, 0), value)
    return sizes


def network_designs(kernel_path: str | Path, network: Network, *, defines=()) -> NetworkDesigns:
    """Check the workload against the kernel, then compile the kernel at the network's envelope.
    `defines` are other -D overrides (e.g. DATA_T); the layers' sizes win over them."""
    check_against_kernel(network, parse_kernel(kernel_path, defines=list(defines)))
    envelope = envelope_sizes(network)
    return NetworkDesigns(str(kernel_path), envelope, envelope_space(kernel_path, envelope, defines=defines))


def envelope_space(kernel_path: str | Path, envelope: dict[str, int], *, defines=()) -> DesignSpace:
    return explore_designs(parse_kernel(kernel_path, defines=_defines(defines, envelope)))


def layer_space(kernel_path: str | Path, reference: DesignSpace, sizes: dict[str, int], *,
                defines=()) -> DesignSpace:
    """The kernel at one layer's sizes, holding the reference designs remade for those sizes."""
    kernel = parse_kernel(kernel_path, defines=_defines(defines, sizes))
    model = build_model(kernel)
    deps = analyze_dependences(model)
    band = find_band(model, deps)
    check_uniform(kernel, band, deps)
    check_space_loops(kernel, band, deps)
    designs = []
    for design in reference.designs:
        hiding = tuple(loop for loop in design.latency_hiding_loops if band.extents[band.index(loop)] > 1)
        params = tuning_parameters(kernel, band, list(hiding), design.simd)
        designs.append(Design(kernel.name, band.loops, band.extents, design.dataflow, design.permutation,
                              hiding, design.simd, params))
    return DesignSpace(kernel, model, deps, band, tuple(designs))


def _defines(defines, sizes: dict[str, int]) -> list[str]:
    return [d for d in defines if d.partition("=")[0].strip() not in sizes] + [f"{k}={v}" for k, v in sizes.items()]


def loop_defines(kernel_path: str | Path, sizes: dict[str, int], *, defines=()) -> dict[str, str]:
    """Which define is each band loop's extent: the loop whose extent grows by one, alone, when the
    define does (probed from these sizes). Loops bound otherwise are left out (never padded)."""
    base = _band_extents(kernel_path, _defines(defines, sizes))
    found: dict[str, str] = {}
    for name in sizes:
        grown = _band_extents(kernel_path, _defines(defines, {**sizes, name: sizes[name] + 1}))
        changed = [loop for loop in base if grown.get(loop) != base[loop]]
        if len(changed) == 1 and grown[changed[0]] == base[changed[0]] + 1:
            found[changed[0]] = name
    return found


def _band_extents(kernel_path: str | Path, defines: list[str]) -> dict[str, int]:
    model = build_model(parse_kernel(kernel_path, defines=defines))
    band = find_band(model, analyze_dependences(model))
    return dict(zip(band.loops, band.extents))
