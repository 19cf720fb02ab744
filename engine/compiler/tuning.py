"""Band + dependences + dataflow -> PE optimisation choices and the design's tuning parameters.

- array partitioning: every band loop l is tiled by `l_t1` in 1..N_l (any integer; a non-divisor pads
  the problem with zeros, Odyssey sec. 2.3);
- latency hiding: parallel loops (no flow/anti/output/reduction dependence carried) are strip-mined
  again by `l_t2`, a divisor of `l_t1`, and the point loops move innermost (AutoSA sec. 5.3);
- data packing: per I/O level, defined with the I/O network (architecture/io_network.py);
- SIMD: one time loop that is parallel or a reduction loop and along which every reference of the
  compute statements is stride-0 or stride-1, after moving one array dimension last where needed
  (AutoSA sec. 5.4). Its factor `l_t2` divides `l_t1`, is a power of two and fills at most one
  512-bit word of the widest element the SIMD loop walks (`max_simd`: 16 float, 32 int16, 64 int8,
  AutoSA's `simd[64]` int8 design).
  When several loops qualify we take a reduction loop first (an adder tree in the PE, as AutoSA and
  Odyssey do for MM and CNN), then the loop that allows the widest SIMD, then the one needing fewest
  layout changes, then the innermost.
- SIMD on a space loop (AutoSA's --simd-touch-space --local-reduce): a space loop that is a
  reduction loop with stride-0/1 references is strip-mined by `l_t2` as well; the array has
  `l_t1/l_t2` PEs along it and each PE reduces its `l_t2` lanes locally before passing the partial
  result on. Every dataflow with such a space loop gets this variant beside its time-loop SIMD
  design (MM [k], [i,k], [j,k] and CNN [i], [o,i], [h,i], [w,i]: Odyssey's designs, which all
  vectorise k / i).
- SIMD on a parallel space loop (AutoSA's --simd-touch-space alone, opt-in: `touch_space`): a
  parallel space loop along which every compute reference is stride-0/1 is strip-mined by `l_t2`;
  the array has `l_t1/l_t2` PEs along it and each PE computes `l_t2` outputs side by side, one per
  lane (AutoSA's depth-wise convolution, SIMD on the channel loop o of its [o,c] array). Off by
  default, as in AutoSA, so no design list changes unless asked; with it, each dataflow with such a
  loop gets one more variant (the loop `choose_simd` prefers: widest, fewest layout changes, innermost).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.compiler.band import Band, runs_several_statements
from engine.compiler.dependences import Dependences
from engine.compiler.ir import Kernel

WORD_BITS = 512  # the widest bus word (architecture/io_network.py AXI_BITS): a SIMD vector fills at most one
DTYPE_BITS = {"float": 32, "double": 64, "int64": 64, "int32": 32, "uint32": 32, "int16": 16, "uint16": 16,
              "int8": 8, "uint8": 8}


@dataclass(frozen=True)
class Constraint:
    kind: str  # "divides" (this parameter divides `other`), "power_of_two"
    other: str | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "of": self.other} if self.other else {"kind": self.kind}

    def __str__(self) -> str:
        return f"divides {self.other}" if self.kind == "divides" else self.kind.replace("_", " ")


@dataclass(frozen=True)
class TuningParameter:
    name: str
    role: str  # array_partition, latency_hiding, simd, data_packing
    lower: int
    upper: int
    loop: str | None = None
    array: str | None = None
    constraints: tuple[Constraint, ...] = ()
    tunable: bool = True  # data-packing factors are inferred unless the user gives them

    def to_json(self) -> dict:
        data = {"name": self.name, "role": self.role, "bounds": [self.lower, self.upper],
                "constraints": [c.to_json() for c in self.constraints], "tunable": self.tunable}
        data.update({k: v for k, v in (("loop", self.loop), ("array", self.array)) if v})
        return data


@dataclass(frozen=True)
class SimdChoice:
    loop: str
    is_reduction: bool
    layout: dict[str, tuple[int, ...]] = field(default_factory=dict)  # array -> new dimension order


def parallel_loops(band: Band, deps: Dependences) -> list[str]:
    ranges = [band.distance_ranges(dep) for dep in deps.validity + deps.reduction]  # once per dependence
    return [loop for d, loop in enumerate(band.loops) if all(r[d] == (0, 0) for r in ranges)]


def reduction_loops(band: Band, deps: Dependences) -> list[str]:
    parallel = set(parallel_loops(band, deps))
    ranges = [band.distance_ranges(dep) for dep in deps.validity]
    return [loop for d, loop in enumerate(band.loops) if loop not in parallel
            and all(r[d] == (0, 0) for r in ranges)]


def simd_candidates(kernel: Kernel, band: Band, deps: Dependences, space: tuple[str, ...]) -> list[SimdChoice]:
    parallel, reductions = set(parallel_loops(band, deps)), set(reduction_loops(band, deps))
    choices = []
    for loop in band.loops:
        if loop in space or band.extents[band.index(loop)] < 2 or loop not in parallel | reductions:
            continue
        layout = _stride_one_layout(kernel, band, loop)
        if layout is not None:
            choices.append(SimdChoice(loop, loop in reductions, layout))
    return choices


def max_simd(kernel: Kernel, band: Band, loop: str) -> int:
    """Lanes of a SIMD vector along `loop`: one WORD_BITS word of the widest element among the
    compute statements' references that move along it (the stride-1 ones; 512 / 32 = 16 for float)."""
    bits = [DTYPE_BITS[kernel.arrays[access.array].dtype]
            for stmt in (kernel.statement(name) for name in band.full_statements)
            for access in (stmt.target, *stmt.reads()) if any(index.coeff(loop) for index in access.index)]
    return WORD_BITS // max(bits, default=WORD_BITS)


def _simd_key(choice: SimdChoice, kernel: Kernel, band: Band) -> tuple:
    width = min(max_simd(kernel, band, choice.loop), _power_of_two_floor(band.extents[band.index(choice.loop)]))
    return (not choice.is_reduction, -width, len(choice.layout), -band.index(choice.loop))


def choose_simd(choices: list[SimdChoice], kernel: Kernel, band: Band) -> SimdChoice | None:
    return min(choices, key=lambda c: _simd_key(c, kernel, band)) if choices else None


def space_simd_choices(kernel: Kernel, band: Band, deps: Dependences, space: tuple[str, ...], *,
                       touch_space: bool = False) -> list[SimdChoice]:
    """The space loops to vectorise: the reduction space loop (AutoSA --simd-touch-space
    --local-reduce), if any (at most one space loop is a reduction loop, space_time.py); with
    `touch_space` also the preferred parallel space loop (AutoSA --simd-touch-space), if any."""
    candidates = [c for c in simd_candidates(kernel, band, deps, ()) if c.loop in space]
    reduction = choose_simd([c for c in candidates if c.is_reduction], kernel, band)
    parallel = choose_simd([c for c in candidates if not c.is_reduction], kernel, band) if touch_space else None
    return [c for c in (reduction, parallel) if c is not None]


def _stride_one_layout(kernel: Kernel, band: Band, loop: str) -> dict[str, tuple[int, ...]] | None:
    """The dimension orders that make every compute reference stride-0/1 along `loop`, or None."""
    layout: dict[str, tuple[int, ...]] = {}
    for stmt in (kernel.statement(name) for name in band.full_statements):
        if loop not in stmt.iterators:
            return None
        for access in (stmt.target, *stmt.reads()):
            dims = [(d, index.coeff(loop)) for d, index in enumerate(access.index) if index.coeff(loop)]
            if not dims:
                continue
            if len(dims) > 1 or dims[0][1] != 1:
                return None
            moved = dims[0][0]
            rank = len(access.index)
            order = tuple(d for d in range(rank) if d != moved) + (moved,)
            if moved == rank - 1:
                order = tuple(range(rank))
            if layout.get(access.array, order) != order:
                return None
            layout[access.array] = order
    return {array: order for array, order in layout.items() if order != tuple(range(len(order)))}


def _power_of_two_floor(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


def tuning_parameters(kernel: Kernel, band: Band, latency_hiding: list[str],
                      simd: SimdChoice | None) -> tuple[TuningParameter, ...]:
    """Tiling parameters. Data-packing factors belong to the I/O network (one per group and level,
    `<array>_<in|out>_pack_l<level>`), so the architecture defines them (descriptor `parameters`).
    A PE that runs several statements takes one tile per loop (band.runs_several_statements)."""
    whole = runs_several_statements(kernel, band)
    params = [TuningParameter(f"{loop}_t1", "array_partition", extent if whole else 1, extent, loop=loop)
              for loop, extent in zip(band.loops, band.extents)]
    for loop in latency_hiding:
        params.append(TuningParameter(f"{loop}_t2", "latency_hiding", 1, band.extents[band.index(loop)],
                                      loop=loop, constraints=(Constraint("divides", f"{loop}_t1"),)))
    if simd is not None:
        upper = min(max_simd(kernel, band, simd.loop), band.extents[band.index(simd.loop)])
        params.append(TuningParameter(f"{simd.loop}_t2", "simd", 1, upper, loop=simd.loop,
                                      constraints=(Constraint("divides", f"{simd.loop}_t1"),
                                                   Constraint("power_of_two"))))
    return tuple(params)
