"""The PE of a design whose band runs several statements (descriptor 1.3 `compute.update`, each
under its `guards`), e.g. LU's nine over its local arrays: a mixin of `VitisHLSTarget`.

At each point of its pipelined loop nest the PE
- reads one word of every input group (the feed sends one per PE iteration, as for one statement);
- receives, where `receive_when` holds, the value of a local array its neighbour sends along a
  space loop (`local_arrays[].channels`; the first PE of the line receives nothing, and a guard
  never reads there);
- runs the statements in textual order, each under its guards evaluated on the global loop
  indices: a local array is kept in the PE (`store_<name>`, a box over the PE's points of every
  reference, one tile being the whole problem) and an output goes to its box (`local_<name>`);
- sends, where `send_when` holds, the element its neighbour will read (none from the last PE).
Then it drains each output's box on its stream, as a one-statement PE drains its one output (an
output several PEs hold: only the elements it writes last, engine/export/owned_drain.py).
build_plan (`_check_statements`) refuses what this does not cover, in one line.
"""
from __future__ import annotations

import re

import islpy as isl

from engine.compiler.architecture.local_arrays import c_condition
from engine.export.cpp import product, total
from engine.export.interface import ExportError, affine
from engine.export.plan import Instance

_REF = re.compile(r"\b([A-Za-z_]\w*)((?:\[[^\[\]]+\])+)")


class StatementsPE:
    """Mixin: `_pe_statements(inst)` writes the body of the PE function."""

    def _pe_statements(self, inst: Instance) -> None:
        plan, c = self.plan, self.code
        d = plan.descriptor
        band = list(plan.loops)
        local = {a["name"]: a for a in d.get("local_arrays", [])}
        update = d["compute"]["update"]
        outs = [g for g in plan.groups if g.kind == "out"]
        ins = [g for g in plan.groups if g.kind == "in"]
        boxes = {g.array: g.reference.box(plan.pe_extents()) for g in outs}
        for g in outs:
            # elements no statement writes leave as 0 (the whole box is drained)
            c.line(f"{g.array}_t local_{g.array}{''.join(f'[{n}]' for n in boxes[g.array])} = {{}};")
        stores = self._local_stores(update, local, band)
        for name, (low, extents) in stores.items():
            c.line(f"{name}_t store_{name}{''.join(f'[{n}]' for n in extents)};  /* kept in the PE */")
        received = {(r["statement"], r["reference"]): f"{name}_from_{ch['along']}"
                    for name, a in local.items() for ch in a["channels"] for r in ch["reads"]}

        def stored(text: str, array: str, subscripts: list[str]) -> str:
            if array in local:
                low = stores[array][0]
                coords = []
                for dim, s in enumerate(subscripts):
                    coeffs, constant = affine(s, band)
                    terms = [product([str(k), f"({self.local(l)})"]) for l, k in coeffs.items() if self.local(l) != "0"]
                    coords.append(total(terms + [str(constant - low[dim])]))
                return f"store_{array}" + "".join(f"[{x}]" for x in coords)
            group = next((g for g in outs if g.array == array), None)
            if group is None:
                raise ExportError(f"{text} is neither an input, an output nor a local array of the PE")
            return f"local_{array}" + "".join(f"[{x}]" for x in self.box_coords(group, plan.space))

        with c.loops(self._point_loops("compute"), pipeline=True, ii=self._compute_ii()):
            words = {}
            for g in ins:
                stream = plan.streams[inst.streams[f"{g.array}_in"]]
                if g.reach is not None:
                    # only the PEs its network reaches read it (io_reach.py); the others' guards never use it
                    c.line(f"{g.array}_x{stream.pack} {g.array}_data;")
                    with c.block(f"if ({self._reach_condition(g)})"):
                        c.line(f"{g.array}_data = {g.array}_in.read();")
                else:
                    c.line(f"const {g.array}_x{stream.pack} {g.array}_data = {g.array}_in.read();")
                if f"{g.array}_out" in inst.streams:
                    c.line(f"{g.array}_out.write({g.array}_data);")
                words[g.array] = f"{g.array}_data.lane[0]"
            for loop in band:
                c.line(f"const int {loop} = {_tidy(self.global_index(loop))};")
            for name, a in local.items():
                for ch in a["channels"]:
                    var = f"{name}_from_{ch['along']}"
                    c.line(f"{name}_t {var} = 0;")
                    if f"{name}_in" in inst.streams:
                        with c.block(f"if ({ch['receive_when']})"):
                            c.line(f"{var} = {name}_in.read().lane[0];")
            for st in update:
                def value(m: re.Match, st=st) -> str:
                    text, array = m.group(0), m.group(1)
                    if array in words:
                        return words[array]
                    if (st["name"], text) in received:
                        return received[(st["name"], text)]
                    return stored(text, array, _subscripts(m))
                m = _REF.fullmatch(st["target"])
                target = stored(st["target"], m.group(1), _subscripts(m))
                line = f"{target} = ({m.group(1)}_t)({_REF.sub(value, st['expression'])});"
                guards = " && ".join(f"({g})" for g in st.get("bounds", []) + st["guards"])
                c.line(f"if ({guards}) {line}  /* {st['name']} */" if guards else f"{line}  /* {st['name']} */")
            for name, a in local.items():
                for ch in a["channels"]:
                    if f"{name}_out" not in inst.streams:
                        continue
                    sent = stored(ch["value"], name, _subscripts(_REF.fullmatch(ch["value"])))
                    with c.block(f"if ({ch['send_when']})"):
                        c.line(f"{name}_x1 word;")
                        c.line(f"word.lane[0] = {sent};")
                        c.line(f"{name}_out.write(word);")
        for g in outs:
            if g.owners is not None:  # several PEs hold the box: each element from its last writer
                self._pe_owned_drain(inst, g, boxes[g.array])
                continue
            out = plan.streams[inst.streams[f"{g.array}_out"]]
            box = boxes[g.array]
            c.line(f"/* pass the finished {g.array} box on */")
            c.line(f"chunk_writer<{g.array}_t, {out.pack}, 1> {g.array}_result;")
            with c.loops(self._box_loops(f"drain_{g.array}", box), pipeline=True):
                c.line(f"{g.array}_result.put({g.array}_out, local_{g.array}{''.join(f'[d{k}]' for k in range(len(box)))});")
            c.line(f"{g.array}_result.flush({g.array}_out);")

    def _reach_condition(self, g) -> str:
        """The PEs a group's network reaches (descriptor io_groups[].pe_reach), as a C condition over
        this PE's grid indices (one tile per loop: a PE index is the space loop's value)."""
        text = next(d["pe_reach"] for d in self.plan.descriptor["io_groups"] if d["name"] == g.name)
        pes = isl.Set(text)
        loops = [pes.get_dim_name(isl.dim_type.set, d) for d in range(pes.dim(isl.dim_type.set))]
        grid = isl.Set(f"{{ PE[{', '.join(loops)}] : " + " and ".join(
            f"0 <= {l} < {self.plan.loops[l].pes}" for l in loops) + " }")
        # the grid's bounds go without saying: A at k = 0 in LU [k,j] reads `k_pe == 0`
        condition = c_condition(pes.gist(grid), tuple(f"{l}_pe" for l in loops))
        if condition is None:
            raise ExportError(f"the PEs {g.array}'s I/O network reaches ({text}) need a division to describe")
        return condition

    def _local_stores(self, update: list[dict], local: dict, band: list[str]) -> dict:
        """Per local array: (lowest subscript value per dimension, extent per dimension) over the
        PE's points of every reference to it."""
        extents = self.plan.pe_extents()
        spans: dict[str, list[tuple[int, int]]] = {}
        for st in update:
            for m in _REF.finditer(st["target"] + " " + st["expression"]):
                if m.group(1) not in local:
                    continue
                for dim, s in enumerate(_subscripts(m)):
                    coeffs, constant = affine(s, band)
                    low = constant + sum(min(0, k * (extents[l] - 1)) for l, k in coeffs.items())
                    high = constant + sum(max(0, k * (extents[l] - 1)) for l, k in coeffs.items())
                    spans.setdefault(m.group(1), [])
                    if dim == len(spans[m.group(1)]):
                        spans[m.group(1)].append((low, high))
                    else:
                        lo, hi = spans[m.group(1)][dim]
                        spans[m.group(1)][dim] = (min(lo, low), max(hi, high))
        return {name: ([lo for lo, _ in s], [hi - lo + 1 for lo, hi in s]) for name, s in spans.items()}


def _subscripts(m: re.Match) -> list[str]:
    return re.findall(r"\[([^\[\]]+)\]", m.group(2))


def _tidy(text: str) -> str:
    return text.replace("+ -(", "- (")
