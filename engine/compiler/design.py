"""One candidate systolic array: a dataflow, a permutation class and the PE optimisations, with the
tuning parameters it leaves open. `Design.to_json()` is what `systolic designs --json` prints.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from engine.compiler.permutation import PermutationClass
from engine.compiler.space_time import Dataflow
from engine.compiler.tuning import SimdChoice, TuningParameter


@dataclass(frozen=True)
class Design:
    kernel: str
    band_loops: tuple[str, ...]
    problem_size: tuple[int, ...]  # extent of each band loop
    dataflow: Dataflow
    permutation: PermutationClass
    latency_hiding_loops: tuple[str, ...]
    simd: SimdChoice | None
    params: tuple[TuningParameter, ...]

    @property
    def space_loops(self) -> tuple[str, ...]:
        return self.dataflow.space_loops

    @property
    def time_loops(self) -> tuple[str, ...]:
        return tuple(loop for loop in self.band_loops if loop not in self.space_loops)

    @property
    def simd_loop(self) -> str | None:
        return self.simd.loop if self.simd else None

    @property
    def simd_on_space(self) -> bool:
        """SIMD on a space loop (AutoSA --simd-touch-space): each PE along it holds `l_t2` lanes, which
        reduce locally (a reduction loop, --local-reduce) or compute `l_t2` outputs (a parallel loop)."""
        return self.simd_loop is not None and self.simd_loop in self.space_loops

    @property
    def split_space_loops(self) -> tuple[str, ...]:
        """Space loops strip-mined by `l_t2` inside the PE (latency hiding or SIMD): `l_t1/l_t2` PEs."""
        return tuple(loop for loop in self.space_loops
                     if loop in self.latency_hiding_loops or loop == self.simd_loop)

    @cached_property  # looked up by id often (DesignSpace.design, the window's views): made once
    def id(self) -> str:
        """Stable and shell-safe: space loops, then the permutation groups, e.g. `i-j__i-j.k`; a
        design with SIMD on a space loop ends in `__simd-<loop>`, e.g. `k__i-j.k__simd-k`."""
        groups = ".".join("-".join(group) for group in self.permutation.groups)
        suffix = f"__simd-{self.simd_loop}" if self.simd_on_space else ""
        return f"{'-'.join(self.space_loops)}__{groups}{suffix}"

    @property
    def name(self) -> str:
        suffix = f" simd({self.simd_loop})" if self.simd_on_space else ""
        return f"{self.kernel} {self.dataflow} {self.permutation}{suffix}"

    @property
    def array_shape(self) -> tuple[str, ...]:
        """PEs along each space loop, in terms of the tuning parameters."""
        return tuple(f"{loop}_t1/{loop}_t2" if loop in self.split_space_loops else f"{loop}_t1"
                     for loop in self.space_loops)

    def param(self, name: str) -> TuningParameter:
        return next(p for p in self.params if p.name == name)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "kernel": self.kernel,
            "band_loops": list(self.band_loops),
            "problem_size": dict(zip(self.band_loops, self.problem_size)),
            "space_loops": list(self.space_loops),
            "time_loops": list(self.time_loops),
            "permutation": [list(group) for group in self.permutation.groups],
            "permutation_name": str(self.permutation),
            "loop_order": list(self.permutation.order),
            "array_shape": list(self.array_shape),
            "latency_hiding_loops": list(self.latency_hiding_loops),
            "simd_loop": self.simd_loop,
            "simd_on_space": self.simd_on_space,
            "split_space_loops": list(self.split_space_loops),
            "simd_layout": {a: list(order) for a, order in (self.simd.layout if self.simd else {}).items()},
            "params": [p.to_json() for p in self.params],
        }
