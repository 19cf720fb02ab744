"""Design descriptor + concrete parameter values -> the kernel's external interface (`KernelInterface`).

What the host program, the build files and the C-simulation harness need to know about `kernel0`
without reading the generated C++: one m_axi port per array, its element type, direction, the padded
row-major layout the kernel reads and writes, and the packed word it moves per bus beat.

Layout: an array is stored with its dimensions in the order the design's SIMD layout gives
(`design.simd_layout`: the SIMD loop's dimension last, so that one bus word holds consecutive SIMD
lanes, e.g. B[k][j] stored as [j][k] when k is vectorised), otherwise in declaration order.
Padding: every band loop is padded to a multiple of its array-partitioning factor (the kernel runs
whole tiles), so an array dimension indexed by `h + p` spans `padded(h) + padded(p) - 1`; the last
stored dimension is then rounded up to a whole number of words. Host code zero-pads into this layout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import sympy

from engine.compiler.expressions import evaluate
from engine.errors import EngineError
from engine.models.dram import port_arrays, port_directions

C_TYPES = {"float": "float", "double": "double", "int64": "int64_t", "int32": "int32_t", "uint32": "uint32_t",
           "int16": "int16_t", "uint16": "uint16_t", "int8": "int8_t", "uint8": "uint8_t"}  # tuning.DTYPE_BITS


class ExportError(EngineError):
    """A design cannot be exported as asked (missing parameter value, unsupported statement form)."""


@dataclass(frozen=True)
class Port:
    name: str
    array: str
    c_type: str
    direction: str  # "in" | "out" | "inout"
    shape: tuple[int, ...]          # declaration order
    padded_shape: tuple[int, ...]   # stored order (`layout`), padded
    layout: tuple[int, ...]         # stored dimension s holds the array's dimension layout[s]
    word_elements: int
    word_type: str
    bundle: str

    def strides(self) -> tuple[int, ...]:
        """Elements between neighbours along each array dimension (declaration order) in the padded layout."""
        stored = [math.prod(self.padded_shape[s + 1:]) for s in range(len(self.padded_shape))]
        return tuple(stored[self.layout.index(d)] for d in range(len(self.layout)))

    def stored_index(self, names: list[str]) -> list[str]:
        """The array's subscripts (declaration order) in stored order."""
        return [names[d] for d in self.layout]

    @property
    def padded_elements(self) -> int:
        return math.prod(self.padded_shape)

    @property
    def words(self) -> int:
        return self.padded_elements // self.word_elements


@dataclass(frozen=True)
class KernelInterface:
    top: str
    ports: tuple[Port, ...]

    def port(self, array: str) -> Port:
        return next(p for p in self.ports if p.array == array)


def element_bytes(c_type: str) -> int:
    """Bytes of one element of a port's C type (`C_TYPES`' values)."""
    return {"double": 8, "int64_t": 8, "float": 4, "int32_t": 4, "uint32_t": 4, "int16_t": 2, "uint16_t": 2,
            "int8_t": 1, "uint8_t": 1}[c_type]


def c_type(dtype: str) -> str:
    if dtype not in C_TYPES:
        raise ExportError(f"element type {dtype!r} has no C type for export")
    return C_TYPES[dtype]


def padded_extents(descriptor: dict, values: dict[str, int]) -> dict[str, int]:
    """Each band loop's extent after padding to whole array-partitioning tiles."""
    design = descriptor["design"]
    out = {}
    for loop, n in design["problem_size"].items():
        t1 = _value(values, f"{loop}_t1")
        out[loop] = -(-n // t1) * t1
    return out


def _value(values: dict[str, int], name: str) -> int:
    if name not in values:
        raise ExportError(f"no value for parameter {name}")
    return int(values[name])


def affine(text: str, loops) -> tuple[dict[str, int], int]:
    """An affine subscript as ({loop: coefficient}, constant)."""
    expr = sympy.expand(sympy.sympify(text, locals={name: sympy.Symbol(name) for name in loops}))
    coeffs = {loop: int(expr.coeff(sympy.Symbol(loop))) for loop in loops}
    constant = int(expr.subs({sympy.Symbol(loop): 0 for loop in loops}))
    return {k: v for k, v in coeffs.items() if v}, constant


def _span(subscript: str, extents: dict[str, int]) -> int:
    """Number of values `subscript` takes as each loop runs over [0, extent)."""
    coeffs, constant = affine(subscript, list(extents))
    high = constant + sum(c * (extents[l] - 1) for l, c in coeffs.items() if c > 0)
    return high + 1


def dram_module(descriptor: dict, array: str, kind: str) -> dict | None:
    """The DRAM-facing module of `array` moving data towards the PEs (`io`) or out of them (`drain`)."""
    return next((m for m in descriptor["topology"]["modules"]
                 if m["array"] == array and m["kind"] == kind and m["dram"]), None)


def word_elements(descriptor: dict, values: dict[str, int], group: str, direction: str, level: int) -> int:
    name = f"{group}_{direction}_pack_l{level}"
    return int(values.get(name, 1))


def _port(descriptor: dict, values: dict[str, int], array: str, groups: list[dict]) -> Port:
    info = descriptor["kernel"]["arrays"][array]
    direction = port_directions((g["array"], g["kind"], g["reload_events"] != "0", g["initialised_on_chip"])
                                for g in groups)[array]
    out_kind = "io" if direction == "in" else "drain"
    module = dram_module(descriptor, array, out_kind)
    group = groups[0]["name"] if module is None else next(
        (g["name"] for g in groups if module["name"].startswith(g["name"] + "_L")), groups[0]["name"])
    level = module["level"] if module else 1
    words = word_elements(descriptor, values, group, "in" if direction == "in" else "out", level)
    extents = padded_extents(descriptor, values)
    shape = tuple(int(n) for n in info["shape"])
    padded = list(shape)
    for g in groups:
        for d, subscript in enumerate(g["subscripts"]):
            padded[d] = max(padded[d], _span(subscript, extents))
    layout = stored_layout(descriptor, array)
    padded = [padded[d] for d in layout]
    if padded:
        padded[-1] = -(-padded[-1] // words) * words
    ctype = c_type(info["dtype"])
    return Port(name=array, array=array, c_type=ctype, direction=direction, shape=shape,
                padded_shape=tuple(padded), layout=layout, word_elements=words, word_type=f"{array}_word",
                bundle=f"gmem_{array}")


def stored_layout(descriptor: dict, array: str) -> tuple[int, ...]:
    """The order in which an array's dimensions are stored (its SIMD layout, or declaration order)."""
    dims = len(descriptor["kernel"]["arrays"][array]["shape"])
    order = descriptor["design"].get("simd_layout", {}).get(array)
    return tuple(order) if order else tuple(range(dims))


def kernel_interface(descriptor: dict, values: dict[str, int]) -> KernelInterface:
    """`values` holds every tuning parameter, data-packing factors included. Ports come inputs first,
    then the arrays the kernel writes, each in the order of the descriptor's I/O groups."""
    by_array: dict[str, list[dict]] = {}
    for g in descriptor["io_groups"]:
        by_array.setdefault(g["array"], []).append(g)
    order = port_arrays((g["array"], g["kind"]) for g in descriptor["io_groups"])  # the models' port order
    return KernelInterface(top="kernel0",
                           ports=tuple(_port(descriptor, values, a, by_array[a]) for a in order))


def evaluated(descriptor_expression: str, values: dict[str, int]) -> int:
    """A descriptor expression that must be an integer at these values."""
    return round(evaluate(descriptor_expression, values))
