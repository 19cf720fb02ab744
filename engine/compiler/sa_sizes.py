"""AutoSA's `--sa-sizes` string -> a design of the design space and its tuning parameters (and back).

    {kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8,8];kernel[]->simd[2]}

- AutoSA's band (`autosa_band`) is the outermost permutable band isl finds with AutoSA's dependences,
  which do not tell a reduction from any other flow dependence: the longest prefix of the band loops
  along which every dependence of the compute statements (reductions included) has a non-negative
  distance. A reduction over several loops ends it after the first of them (the last writer of
  D[i][j] before (k, 0) is (k-1, L-1), distance -(L-1) along l): MM (i,j,k), MTTKRP (i,j,k), TTMc
  (i,j,k,l), CNN (o,h,w,i); the loops after it are not partitioned, hidden or space loops in AutoSA.
- `space_time[n]`: the n-th space-time candidate in AutoSA's order (Algorithm 1 of the AutoSA paper):
  the legal 1-D choices in band-loop order, then the legal 2-D pairs in lexicographic order of the
  band loops, over AutoSA's band. The order is computed from the dataflows of the design space, not
  from a table.
- AutoSA permutes the space loops outermost (sec. 5.1), so its loop order is the space loops, then
  the other loops of its band in band order. `array_part` gives one factor per loop in that order
  (`<loop>_t1`; -1 means "not partitioned", the loop's extent; loops after AutoSA's band take their
  extent), `latency` one per latency-hiding loop in that order (`<loop>_t2`), `simd` one factor per
  SIMD candidate AutoSA found, at most one of them above 1: the factor of the design's SIMD loop
  (`<loop>_t2`; no `simd` entry: 1, as AutoSA without SIMD candidates).
- `array_part_L2` (AutoSA's two-level partitioning, a larger DRAM tile of array_part tiles kept by the
  I/O modules) is read and checked (one positive factor per array_part factor) but not built: the
  PE array is array_part's; the note says so. `hbm_<array>[n]` / `hbm_<array>_drain[n]` (AutoSA
  splits the array over n HBM ports) are read and checked against the kernel's arrays (and, in the
  CLI, against the device's pseudo-channels); the export links each array through one port to its
  own run of pseudo-channels (engine/export/memory_banks.py), which the note says.
- AutoSA has no loop permutation: its tile loops run in its loop order, which belongs to at most
  one permutation class (Odyssey Thm. 3.1). That class's design is chosen unless the caller names
  a design (of the same dataflow) for the permutation.
- A dataflow with a reduction space loop has two designs per class: SIMD on a time loop, and SIMD
  on that space loop (AutoSA's --simd-touch-space --local-reduce, id suffix `__simd-<loop>`). The
  string does not say which loop `simd` vectorises; the number of `latency` factors does when the
  two designs hide latency on different loops (MM [k]: latency[i] is SIMD on j, latency[i,j] SIMD
  on k). Otherwise (or without `latency`) the space-loop variant is chosen, as AutoSA's MM and CNN
  scripts use --simd-touch-space; `--design` picks the other.
- With --simd-touch-space (compile_kernel's `simd_touch_space`) a dataflow may also have a design with
  SIMD on a parallel space loop (AutoSA's DC: o in [o,c]). AutoSA hides latency on every parallel
  loop, this one included, and then splits its remaining point loop into SIMD lanes: PEs along it are
  array_part / latency / simd. Here that loop's `l_t2` is its SIMD factor, so its `latency` entry
  (kept in the list, `autosa_latency_loops`) must be 1. AutoSA prefers a reduction SIMD loop, so the
  string selects that design only when the one chosen above cannot take it (DC: simd factor 2 does
  not divide q_t1=3) and it can.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.errors import DesignError

FIELDS = ("space_time", "array_part", "array_part_L2", "latency", "simd")
_ENTRY = re.compile(r"^\s*(\w+)\s*\[\s*\]\s*->\s*(\w+)\s*\[([^\]]*)\]\s*$")
_HBM = re.compile(r"hbm_(\w+?)(_drain)?")
EXAMPLE = "{kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8,8];kernel[]->simd[2]}"


class SimdFactorError(DesignError):
    """The `simd` factor does not divide the tile of the design's SIMD loop."""


@dataclass(frozen=True)
class SaSizes:
    space_time: int
    array_part: tuple[int, ...] | None = None
    latency: tuple[int, ...] | None = None
    simd: tuple[int, ...] | None = None
    array_part_l2: tuple[int, ...] | None = None
    hbm: tuple[tuple[str, int], ...] = ()  # (hbm_ entry's array, its channels), as written


@dataclass(frozen=True)
class SaSelection:
    design: Design
    params: dict[str, int]
    note: str = ""  # how the permutation class was chosen, when AutoSA's order did not fix it
    hbm: dict[str, int] = field(default_factory=dict)  # array -> the HBM channels AutoSA splits it over

    def equivalent(self) -> str:
        """The same configuration as `--design ID --param ...` options."""
        return f"--design {self.design.id} " + " ".join(f"--param {k}={v}" for k, v in self.params.items())


def parse_sa_sizes(text: str) -> SaSizes:
    """Parse the string; every malformed part is a one-line DesignError saying what was expected."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise DesignError(f"--sa-sizes '{text}' does not parse: expected {{...}} around ';'-separated "
                          f"entries, e.g. \"{EXAMPLE}\"")
    values: dict[str, tuple[int, ...]] = {}
    for entry in filter(str.strip, body[1:-1].split(";")):
        match = _ENTRY.match(entry)
        if not match:
            raise DesignError(f"--sa-sizes entry '{entry.strip()}' does not parse: expected "
                              f"kernel[]->NAME[n,...] with NAME one of {', '.join(FIELDS)}")
        name, items = match.group(2), match.group(3).strip()
        if name not in FIELDS and not _HBM.fullmatch(name):
            raise DesignError(f"--sa-sizes entry '{name}' is not known: expected {', '.join(FIELDS)} or "
                              f"hbm_<array>[n]")
        if name in values:
            raise DesignError(f"--sa-sizes gives {name} twice")
        try:
            values[name] = tuple(int(v) for v in items.split(",")) if items else ()
        except ValueError:
            raise DesignError(f"--sa-sizes {name}[{items}] does not parse: expected integers separated "
                              f"by commas") from None
    hbm = []
    for name, channels in values.items():
        if _HBM.fullmatch(name):
            if len(channels) != 1 or channels[0] < 1:
                raise DesignError(f"--sa-sizes {name}[{','.join(map(str, channels))}]: expected one positive "
                                  f"number of HBM channels")
            hbm.append((_HBM.fullmatch(name).group(1), channels[0]))
    if "space_time" not in values or len(values["space_time"]) != 1:
        raise DesignError(f"--sa-sizes needs kernel[]->space_time[n] with one index, e.g. \"{EXAMPLE}\"")
    return SaSizes(values["space_time"][0], values.get("array_part"), values.get("latency"), values.get("simd"),
                   values.get("array_part_L2"), tuple(hbm))


def autosa_band(space: DesignSpace) -> tuple[str, ...]:
    """AutoSA's outermost permutable band (see the module docstring): the longest prefix of the band
    loops along which no dependence among the compute statements, reductions included, goes back."""
    compute = set(space.band.compute_statements)
    deps = [d for d in space.dependences.validity + space.dependences.reduction
            if d.source in compute and d.sink in compute]
    ranges = [space.band.distance_ranges(d) for d in deps]
    n = 0
    while n < len(space.band.loops) and all(r[n][0] >= 0 for r in ranges):
        n += 1
    return space.band.loops[:max(n, 1)]


def space_time_order(space: DesignSpace) -> list[tuple[str, ...]]:
    """The dataflows of the design space in AutoSA's space_time order."""
    band = autosa_band(space)
    dataflows = dict.fromkeys(d.space_loops for d in space.designs if set(d.space_loops) <= set(band))
    return sorted(dataflows, key=lambda loops: (len(loops), [space.band.index(l) for l in loops]))


def autosa_space_time(space: DesignSpace, design: Design) -> int | None:
    """The design's index in AutoSA's space_time list; None for a dataflow AutoSA does not list (a
    space loop after its band)."""
    order = space_time_order(space)
    return order.index(design.space_loops) if design.space_loops in order else None


def autosa_loop_order(space: DesignSpace, space_loops: tuple[str, ...]) -> tuple[str, ...]:
    """AutoSA's band with the space loops first: the loops array_part and latency follow."""
    return space_loops + tuple(loop for loop in autosa_band(space) if loop not in space_loops)


def _simd_parallel(design: Design) -> bool:
    """SIMD on a parallel space loop (--simd-touch-space without --local-reduce): each lane its own output."""
    return design.simd_on_space and not design.simd.is_reduction


def autosa_design(space: DesignSpace, space_loops: tuple[str, ...], simd_on_space: bool | None = None,
                  simd_parallel: bool | None = None) -> Design | None:
    """The design whose permutation class contains AutoSA's tile-loop order, if there is one
    (`simd_on_space`: of the SIMD-on-a-space-loop variants, or not; `simd_parallel`: with SIMD on a
    parallel space loop, or not; None: the first listed)."""
    order = _tile_order(space, space_loops)
    for design in space.designs:
        if (design.space_loops != space_loops or simd_on_space not in (None, design.simd_on_space)
                or simd_parallel not in (None, _simd_parallel(design))):
            continue
        start, fits = 0, True
        for group in design.permutation.groups:
            fits = fits and set(order[start:start + len(group)]) == set(group)
            start += len(group)
        if fits:
            return design
    return None


def _tile_order(space: DesignSpace, space_loops: tuple[str, ...]) -> tuple[str, ...]:
    """AutoSA's tile loops: its band (space loops first), then the loops after its band."""
    order = autosa_loop_order(space, space_loops)
    return order + tuple(loop for loop in space.band.loops if loop not in order)


def select(space: DesignSpace, text: str, *, design: str | None = None) -> SaSelection:
    """The design and parameters an AutoSA string means. `design` (an id or name) picks the
    permutation class; it must have the dataflow the string names."""
    sizes = parse_sa_sizes(text)
    order = space_time_order(space)
    if not 0 <= sizes.space_time < len(order):
        listed = ", ".join(f"{n}: [{','.join(loops)}]" for n, loops in enumerate(order))
        raise DesignError(f"--sa-sizes space_time[{sizes.space_time}] does not exist for {space.kernel.name}: "
                          f"expected 0..{len(order) - 1} ({listed})")
    space_loops = order[sizes.space_time]
    note = ""
    if design is not None:
        chosen = space.design(design)
        if chosen.space_loops != space_loops:
            raise DesignError(f"--design {chosen.id} has space loops [{','.join(chosen.space_loops)}] but "
                              f"--sa-sizes space_time[{sizes.space_time}] is [{','.join(space_loops)}]")
    else:
        on_space = _simd_variant(space, space_loops, sizes)
        chosen, note = _in_autosas_class(space, space_loops, on_space, False)
        failure = _failure(space, chosen, sizes)
        if failure is not None and any(_simd_parallel(d) for d in space.designs if d.space_loops == space_loops):
            # AutoSA prefers a reduction SIMD loop; a parallel space loop's lanes only where the string needs
            # them: where they take it, or where their SIMD factor fits and only another entry is wrong
            parallel = _in_autosas_class(space, space_loops, True, True)
            other = _failure(space, parallel[0], sizes)
            if other is None or (isinstance(failure, SimdFactorError) and not isinstance(other, SimdFactorError)):
                chosen, note = parallel
        twin = _twin(space, chosen)
        if twin is not None and len(twin.latency_hiding_loops) == len(chosen.latency_hiding_loops) and sizes.simd:
            note = "; ".join(filter(None, [note, f"SIMD on {chosen.simd_loop} as with --simd-touch-space; "
                                                 f"--design {twin.id} puts it on {twin.simd_loop}" if twin.simd_loop else
                                                 f"--design {twin.id} has no SIMD loop"]))
    params, notes = _params(space, chosen, sizes)
    hbm = _hbm(space, sizes)
    if hbm:
        notes.append(", ".join(f"hbm_{a}[{n}]" for a, n in hbm.items()) + ": the export links each array through "
                     "one m_axi port to its own run of that many HBM pseudo-channels, not AutoSA's split into that many ports")
    return SaSelection(chosen, params, "; ".join(filter(None, [note, *notes])), hbm)


def _in_autosas_class(space: DesignSpace, space_loops: tuple[str, ...], on_space: bool, parallel: bool
                      ) -> tuple[Design, str]:
    """The variant's design in AutoSA's permutation class, else its first design and a note saying so."""
    chosen = autosa_design(space, space_loops, on_space, parallel)
    if chosen is not None:
        return chosen, ""
    chosen = next(d for d in space.designs if d.space_loops == space_loops and d.simd_on_space == on_space
                  and _simd_parallel(d) == parallel)
    return chosen, (f"AutoSA's loop order ({','.join(_tile_order(space, space_loops))}) is in no "
                    f"permutation class; chose {chosen.id}, pick another with --design")


def _failure(space: DesignSpace, design: Design, sizes: SaSizes) -> DesignError | None:
    """Why the string does not fit the design, or None."""
    try:
        _params(space, design, sizes)
    except DesignError as exc:
        return exc
    return None


def autosa_latency_loops(space: DesignSpace, design: Design) -> list[str]:
    """The loops AutoSA's `latency` list gives a factor to, in its order: the design's latency-hiding
    loops, and a parallel space loop that carries the SIMD lanes (AutoSA hides latency on it too)."""
    simd_parallel = design.simd_on_space and not design.simd.is_reduction
    return [loop for loop in autosa_loop_order(space, design.space_loops)
            if loop in design.latency_hiding_loops or (simd_parallel and loop == design.simd_loop)]


def _hbm(space: DesignSpace, sizes: SaSizes) -> dict[str, int]:
    """hbm_<array>[n] entries -> array -> n; an array the kernel does not have is one line."""
    out: dict[str, int] = {}
    for array, channels in sizes.hbm:
        if array not in space.kernel.arrays or space.kernel.arrays[array].local:
            known = ", ".join(a for a, d in space.kernel.arrays.items() if not d.local)
            raise DesignError(f"--sa-sizes hbm_{array}[{channels}]: {space.kernel.name} has no array {array} "
                              f"in DRAM; expected hbm_<array> for one of {known}")
        if array in out:
            raise DesignError(f"--sa-sizes gives hbm_{array} twice")
        out[array] = channels
    return out


def _twin(space: DesignSpace, design: Design) -> Design | None:
    """The design of the same dataflow and class with SIMD on the other kind of loop, if any."""
    return next((d for d in space.designs if d.space_loops == design.space_loops
                 and d.permutation == design.permutation and d.simd_on_space != design.simd_on_space), None)


def _simd_variant(space: DesignSpace, space_loops: tuple[str, ...], sizes: SaSizes) -> bool:
    """Does the string mean the design with SIMD on a space loop (see the module docstring)?"""
    variants: dict[bool, Design] = {}  # the first of each kind; SIMD on a parallel space loop is select's fallback
    for d in space.designs:
        if d.space_loops == space_loops and not _simd_parallel(d):
            variants.setdefault(d.simd_on_space, d)
    if True not in variants:
        return False
    if False not in variants:
        return True
    if sizes.simd is not None and all(v == 1 for v in sizes.simd) and not variants[False].simd_loop:
        return False
    if sizes.latency is not None:
        counts = {flag: len(autosa_latency_loops(space, d)) for flag, d in variants.items()}
        if counts[True] != counts[False] and len(sizes.latency) in counts.values():
            return len(sizes.latency) == counts[True]
    return True


def _params(space: DesignSpace, design: Design, sizes: SaSizes) -> tuple[dict[str, int], list[str]]:
    """The design's parameters the string sets, and notes on what it read but does not build."""
    order = autosa_loop_order(space, design.space_loops)
    band = autosa_band(space)
    params: dict[str, int] = {}
    notes: list[str] = []
    if sizes.array_part is not None:
        if len(sizes.array_part) != len(order):
            raise DesignError(f"--sa-sizes array_part has {len(sizes.array_part)} factors; expected "
                              f"{len(order)}, one per loop of AutoSA's band in its order ({','.join(order)})")
        for loop, value in zip(order, sizes.array_part):
            if value == 0 or value < -1:
                raise DesignError(f"--sa-sizes array_part factor {value} for loop {loop}: expected a "
                                  f"positive integer or -1 (no partitioning)")
            params[f"{loop}_t1"] = space.band.extents[space.band.index(loop)] if value == -1 else value
        for loop, extent in zip(space.band.loops, space.band.extents):
            if loop not in band:  # after AutoSA's band: not partitioned
                params[f"{loop}_t1"] = extent
    if sizes.array_part_l2 is not None:
        if sizes.array_part is None or len(sizes.array_part_l2) != len(sizes.array_part) or any(
                v < 1 for v in sizes.array_part_l2):
            raise DesignError(f"--sa-sizes array_part_L2[{','.join(map(str, sizes.array_part_l2))}]: expected "
                              f"one positive factor per array_part factor ({len(order)}: {','.join(order)})")
        notes.append(f"array_part_L2[{','.join(map(str, sizes.array_part_l2))}] (AutoSA's second-level DRAM tile) "
                     f"is not built: the I/O modules buffer one array_part tile; the PE array is the same")
    hiding = autosa_latency_loops(space, design)
    latency = sizes.latency or ()
    if sizes.latency is not None and len(latency) != len(hiding):
        _wrong_latency(space, design, latency, hiding)
    for loop, value in zip(hiding, latency):
        if value < 1:
            raise DesignError(f"--sa-sizes latency factor {value} for loop {loop}: expected a positive integer")
        if loop == design.simd_loop:  # a parallel space loop with SIMD lanes: l_t2 is the SIMD factor
            if value != 1:
                raise DesignError(f"--sa-sizes latency[{','.join(map(str, latency))}]: factor {value} for {loop}, "
                                  f"which {design.id} vectorises; expected 1 there (latency hiding and SIMD lanes on "
                                  f"one space loop are not built)")
            continue
        params[f"{loop}_t2"] = value
    if sizes.latency is not None:
        for loop in design.latency_hiding_loops:
            if loop not in band:  # AutoSA hides latency on its band's loops only
                params[f"{loop}_t2"] = 1
    simd = sizes.simd if sizes.simd is not None else (1,)
    above = [(n, v) for n, v in enumerate(simd) if v != 1]
    if any(v < 1 for v in simd):
        raise DesignError(f"--sa-sizes simd[{','.join(map(str, simd))}]: expected positive factors, "
                          f"a power of two on at most one loop")
    if len(above) > 1:
        raise DesignError(f"--sa-sizes simd[{','.join(map(str, simd))}] vectorises {len(above)} loops; "
                          f"AutoSA vectorises one: expected at most one factor above 1")
    if design.simd_loop is not None:
        params[f"{design.simd_loop}_t2"] = above[0][1] if above else 1
        tile = params.get(f"{design.simd_loop}_t1")
        if above and tile is not None and tile % above[0][1]:
            loops = sorted({d.simd_loop for d in space.designs if d.space_loops == design.space_loops and d.simd_loop})
            raise SimdFactorError(f"--sa-sizes simd[{','.join(map(str, simd))}]: factor {above[0][1]} does not divide "
                              f"{design.simd_loop}_t1={tile}, and the [{','.join(design.space_loops)}] designs here "
                              f"vectorise only {', '.join(loops)}; AutoSA's array vectorises another of its "
                              f"candidate loops" + ("" if space.simd_touch_space else
                              " (with --simd-touch-space, which lists the designs with SIMD on a parallel space "
                              "loop, each lane its own output)"))
        if len(simd) > 1:
            notes.append(f"simd[{','.join(map(str, simd))}]: AutoSA's SIMD candidate "
                         f"{above[0][0] if above else 0} as the factor of {design.simd_loop}")
    elif above:
        raise DesignError(f"--sa-sizes simd[{','.join(map(str, simd))}]: design {design.id} has no SIMD loop; "
                          f"expected factors of 1")
    return params, notes


def _wrong_latency(space: DesignSpace, design: Design, latency, hiding) -> None:
    names = ",".join(hiding) if hiding else "none"
    twin = _twin(space, design)
    hint = (f" ({twin.id} takes {len(latency)}: SIMD on {twin.simd_loop})"
            if twin is not None and len(twin.latency_hiding_loops) == len(latency) else "")
    raise DesignError(f"--sa-sizes latency has {len(latency)} factors; expected {len(hiding)}, one per "
                      f"latency-hiding loop of {design.id} in AutoSA's order ({names}){hint}")


def to_sa_sizes(space: DesignSpace, design: Design, params: dict[str, int]) -> str:
    """The AutoSA string of a design at a configuration (the permutation class is not in it)."""
    order = autosa_loop_order(space, design.space_loops)
    if autosa_space_time(space, design) is None:
        raise DesignError(f"design {design.id} has space loops [{','.join(design.space_loops)}] outside AutoSA's "
                          f"band ({','.join(autosa_band(space))}): AutoSA has no string for it")
    latency = (1 if l == design.simd_loop else params[f"{l}_t2"] for l in autosa_latency_loops(space, design))
    entries = [f"kernel[]->space_time[{autosa_space_time(space, design)}]",
               f"kernel[]->array_part[{','.join(str(params[f'{loop}_t1']) for loop in order)}]",
               f"kernel[]->latency[{','.join(map(str, latency))}]"]
    if design.simd_loop:
        entries.append(f"kernel[]->simd[{params[f'{design.simd_loop}_t2']}]")
    return "{" + ";".join(entries) + "}"
