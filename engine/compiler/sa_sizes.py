"""AutoSA's `--sa-sizes` string -> a design of the design space and its tuning parameters (and back).

    {kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8,8];kernel[]->simd[2]}

- `space_time[n]`: the n-th space-time candidate in AutoSA's order (Algorithm 1 of the AutoSA paper):
  the legal 1-D choices in band-loop order, then the legal 2-D pairs in lexicographic order of the
  band loops. The order is computed from the dataflows of the design space, not from a table.
- AutoSA permutes the space loops outermost (sec. 5.1), so its loop order is the space loops, then
  the other band loops in band order. `array_part` gives one factor per band loop in that order
  (`<loop>_t1`; -1 means "not partitioned", the loop's extent), `latency` one per latency-hiding
  loop in that order (`<loop>_t2`), `simd` the factor of the SIMD loop (`<loop>_t2`).
- AutoSA has no loop permutation: its tile loops run in its loop order, which belongs to at most
  one permutation class (Odyssey Thm. 3.1). That class's design is chosen unless the caller names
  a design (of the same dataflow) for the permutation.
- A dataflow with a reduction space loop has two designs per class: SIMD on a time loop, and SIMD
  on that space loop (AutoSA's --simd-touch-space --local-reduce, id suffix `__simd-<loop>`). The
  string does not say which loop `simd` vectorises; the number of `latency` factors does when the
  two designs hide latency on different loops (MM [k]: latency[i] is SIMD on j, latency[i,j] SIMD
  on k). Otherwise (or without `latency`) the space-loop variant is chosen, as AutoSA's MM and CNN
  scripts use --simd-touch-space; `--design` picks the other.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.compiler.design import Design
from engine.compiler.design_space import DesignSpace
from engine.errors import DesignError

FIELDS = ("space_time", "array_part", "latency", "simd")
_ENTRY = re.compile(r"^\s*(\w+)\s*\[\s*\]\s*->\s*(\w+)\s*\[([^\]]*)\]\s*$")
EXAMPLE = "{kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8,8];kernel[]->simd[2]}"


@dataclass(frozen=True)
class SaSizes:
    space_time: int
    array_part: tuple[int, ...] | None = None
    latency: tuple[int, ...] | None = None
    simd: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SaSelection:
    design: Design
    params: dict[str, int]
    note: str = ""  # how the permutation class was chosen, when AutoSA's order did not fix it

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
        if name not in FIELDS:
            raise DesignError(f"--sa-sizes entry '{name}' is not known: expected {', '.join(FIELDS)}")
        if name in values:
            raise DesignError(f"--sa-sizes gives {name} twice")
        try:
            values[name] = tuple(int(v) for v in items.split(",")) if items else ()
        except ValueError:
            raise DesignError(f"--sa-sizes {name}[{items}] does not parse: expected integers separated "
                              f"by commas") from None
    if "space_time" not in values or len(values["space_time"]) != 1:
        raise DesignError(f"--sa-sizes needs kernel[]->space_time[n] with one index, e.g. \"{EXAMPLE}\"")
    return SaSizes(values["space_time"][0], values.get("array_part"), values.get("latency"), values.get("simd"))


def space_time_order(space: DesignSpace) -> list[tuple[str, ...]]:
    """The dataflows of the design space in AutoSA's space_time order."""
    dataflows = dict.fromkeys(d.space_loops for d in space.designs)
    return sorted(dataflows, key=lambda loops: (len(loops), [space.band.index(l) for l in loops]))


def autosa_space_time(space: DesignSpace, design: Design) -> int:
    return space_time_order(space).index(design.space_loops)


def autosa_loop_order(space: DesignSpace, space_loops: tuple[str, ...]) -> tuple[str, ...]:
    return space_loops + tuple(loop for loop in space.band.loops if loop not in space_loops)


def autosa_design(space: DesignSpace, space_loops: tuple[str, ...], simd_on_space: bool | None = None
                  ) -> Design | None:
    """The design whose permutation class contains AutoSA's tile-loop order, if there is one
    (`simd_on_space`: of the SIMD-on-a-space-loop variants, or not; None: the first listed)."""
    order = autosa_loop_order(space, space_loops)
    for design in space.designs:
        if design.space_loops != space_loops or simd_on_space not in (None, design.simd_on_space):
            continue
        start, fits = 0, True
        for group in design.permutation.groups:
            fits = fits and set(order[start:start + len(group)]) == set(group)
            start += len(group)
        if fits:
            return design
    return None


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
        chosen = autosa_design(space, space_loops, on_space)
        if chosen is None:
            chosen = next(d for d in space.designs if d.space_loops == space_loops and d.simd_on_space == on_space)
            note = (f"AutoSA's loop order ({','.join(autosa_loop_order(space, space_loops))}) is in no "
                    f"permutation class; chose {chosen.id}, pick another with --design")
        twin = _twin(space, chosen)
        if twin is not None and len(twin.latency_hiding_loops) == len(chosen.latency_hiding_loops) and sizes.simd:
            note = "; ".join(filter(None, [note, f"SIMD on {chosen.simd_loop} as with --simd-touch-space; "
                                                 f"--design {twin.id} puts it on {twin.simd_loop}"]))
    return SaSelection(chosen, _params(space, chosen, sizes), note)


def _twin(space: DesignSpace, design: Design) -> Design | None:
    """The design of the same dataflow and class with SIMD on the other kind of loop, if any."""
    return next((d for d in space.designs if d.space_loops == design.space_loops
                 and d.permutation == design.permutation and d.simd_on_space != design.simd_on_space), None)


def _simd_variant(space: DesignSpace, space_loops: tuple[str, ...], sizes: SaSizes) -> bool:
    """Does the string mean the design with SIMD on a space loop (see the module docstring)?"""
    variants = {d.simd_on_space: d for d in space.designs if d.space_loops == space_loops}
    if True not in variants:
        return False
    if False not in variants:
        return True
    if sizes.simd is not None and all(v == 1 for v in sizes.simd) and not variants[False].simd_loop:
        return False
    if sizes.latency is not None:
        counts = {flag: len(d.latency_hiding_loops) for flag, d in variants.items()}
        if counts[True] != counts[False] and len(sizes.latency) in counts.values():
            return len(sizes.latency) == counts[True]
    return True


def _params(space: DesignSpace, design: Design, sizes: SaSizes) -> dict[str, int]:
    order = autosa_loop_order(space, design.space_loops)
    params: dict[str, int] = {}
    if sizes.array_part is not None:
        if len(sizes.array_part) != len(order):
            raise DesignError(f"--sa-sizes array_part has {len(sizes.array_part)} factors; expected "
                              f"{len(order)}, one per loop in AutoSA's order ({','.join(order)})")
        for loop, value in zip(order, sizes.array_part):
            if value == 0 or value < -1:
                raise DesignError(f"--sa-sizes array_part factor {value} for loop {loop}: expected a "
                                  f"positive integer or -1 (no partitioning)")
            params[f"{loop}_t1"] = space.band.extents[space.band.index(loop)] if value == -1 else value
    hiding = [loop for loop in order if loop in design.latency_hiding_loops]
    latency = sizes.latency or ()
    if sizes.latency is not None and len(latency) != len(hiding):
        _wrong_latency(space, design, latency, hiding)
    for loop, value in zip(hiding, latency):
        if value < 1:
            raise DesignError(f"--sa-sizes latency factor {value} for loop {loop}: expected a positive integer")
        params[f"{loop}_t2"] = value
    if sizes.simd is not None:
        if design.simd_loop is not None and len(sizes.simd) == 1:
            if sizes.simd[0] < 1:
                raise DesignError(f"--sa-sizes simd factor {sizes.simd[0]}: expected a positive power of two")
            params[f"{design.simd_loop}_t2"] = sizes.simd[0]
        elif any(v != 1 for v in sizes.simd):
            expected = f"one factor, for loop {design.simd_loop}" if design.simd_loop else "no SIMD factor"
            raise DesignError(f"--sa-sizes simd has {len(sizes.simd)} factor(s); design {design.id} takes "
                              f"{expected}")
    return params


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
    entries = [f"kernel[]->space_time[{autosa_space_time(space, design)}]",
               f"kernel[]->array_part[{','.join(str(params[f'{loop}_t1']) for loop in order)}]",
               f"kernel[]->latency[{','.join(str(params[f'{l}_t2']) for l in order if l in design.latency_hiding_loops)}]"]
    if design.simd_loop:
        entries.append(f"kernel[]->simd[{params[f'{design.simd_loop}_t2']}]")
    return "{" + ";".join(entries) + "}"
