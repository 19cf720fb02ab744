"""Narrow index types in the exported kernel (issue 13, II=1 that holds): every loop counter whose
bound is known at export time is `ap_uint<b>` with b the bits of its trip count (its exit value), a
counter whose bound is an argument is as wide as its `loop_tripcount max`, and every named index
derived from counters (a chunk's position, a PE's global point, a block's tile) holds its largest
value, so no address is silently cut. Read from the generated C++ (engine/export/cpp.py index_bits)."""
import re

import numpy as np
import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export import kernel_sources
from engine.export.plan import build_plan
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.resources import KERNELS

MM = {"I": "60", "J": "50", "K": "70"}
MM64 = {"I": "64", "J": "64", "K": "64"}
CNN = {"O": "16", "I": "16", "H": "14", "W": "14", "P": "3", "Q": "3"}
DESIGNS = {
    "mm-2d-non-divisor": ("mm.c", MM, "i-j__i-j.k", {"i_t1": 16, "j_t1": 12, "k_t1": 16, "i_t2": 4, "j_t2": 3,
                                                    "k_t2": 4}),
    "mm-passes": ("mm.c", MM, "i-j__i-k.j", {"i_t1": 8, "j_t1": 25, "k_t1": 32, "i_t2": 4, "j_t2": 5, "k_t2": 2}),
    "mm-k-chain": ("mm.c", MM, "k__i-j.k", {"i_t1": 7, "j_t1": 8, "k_t1": 5, "i_t2": 7, "j_t2": 4}),
    "mm-simd-on-space": ("mm.c", MM64, "k__i-j.k__simd-k", {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 4,
                                                           "j_t2": 4, "k_t2": 4}),
    "cnn-reload": ("cnn.c", CNN, "o-h__o-i-p-q.h-w", {"o_t1": 8, "h_t1": 7, "w_t1": 14, "i_t1": 8, "p_t1": 3,
                                                      "q_t1": 3, "o_t2": 2, "h_t2": 1, "w_t2": 2, "i_t2": 4}),
    # issue 13's device-filling configuration: wide tiles, long DRAM rows
    "mm-full-size": ("mm.c", {"I": "520", "J": "512", "K": "1024"}, "i-j__i-j.k",
                     {"i_t1": 260, "j_t1": 256, "k_t1": 512, "i_t2": 20, "j_t2": 16, "k_t2": 8}),
}

_COUNTER = re.compile(r"\bfor \((\w+(?:<[^>]*(?:\([^)]*\))?>)?) (\w+) = ([^;]+); ([^;]+); ([^)]+)\)")
_FUNCTION = re.compile(r"^(?:static void|extern \"C\" void) (\w+)\((.*)\) \{$", re.MULTILINE)
_NAMED = re.compile(r"\bconst ap_uint<(\d+)> (\w+) = ([^;]+);")


def bits(n: int) -> int:
    return max(1, n.bit_length())


@pytest.fixture(scope="module", params=list(DESIGNS), ids=list(DESIGNS))
def exported(request):
    kernel, defines, design_id, params = DESIGNS[request.param]
    space = compile_kernel(KERNELS / kernel, defines=defines)
    design = space.design(design_id)
    model = shared_model(space, design, load_device("u250"))
    values = dict(params)
    values.update({k: int(np.asarray(v)) for k, v in model.inferred_packing(params).items()})
    descriptor = build_descriptor(space, design, model.architecture)
    return build_plan(descriptor, values), kernel_sources(descriptor, values)["kernel_kernel.cpp"]


def _functions(cpp: str):
    """(name, parameter text, body) of every function."""
    heads = list(_FUNCTION.finditer(cpp))
    for n, m in enumerate(heads):
        end = cpp.index("\n}\n", m.end())
        yield m.group(1), m.group(2), cpp[m.end():end]


def test_no_int_loop_counter_and_every_width_is_its_trip_count(exported):
    plan, cpp = exported
    counters = _COUNTER.findall(cpp)
    assert counters
    assert not [c for c in counters if not c[0].startswith("ap_uint<")], "int loop counters left"
    lines = cpp.splitlines()
    for ctype, var, start, test, step in counters:
        assert step == f"{var}++" or (var == "width" and step == "width /= 2"), (var, step)
        known = re.fullmatch(rf"{var} < (\d+)", test)
        if known:  # a bound known at export time
            assert ctype == f"ap_uint<{bits(int(known.group(1)))}>", (var, test, ctype)
        elif "index_bits" in ctype:  # chunk_writer / chunk_reader: the template's bound
            bound = re.fullmatch(r"ap_uint<index_bits\((\w)\)>", ctype).group(1)
            assert test == f"{var} < {bound}", (var, test, ctype)
        elif var == "segment":  # a drain instance's share: the counter of the largest share
            at = next(n for n, line in enumerate(lines) if f"for ({ctype} segment = 0; {test};" in line)
            most = int(re.search(r"loop_tripcount max=(\d+)", lines[at + 1]).group(1))
            assert ctype == f"ap_uint<{bits(most)}>"
        else:  # the lanes' reduction tree: halving widths below the SIMD factor
            assert var in ("width", "lane") and plan.lanes > 1, (var, test)
            assert ctype == f"ap_uint<{bits(plan.lanes // 2)}>"


def test_index_arguments_have_the_type_of_the_counter_that_produces_them(exported):
    plan, cpp = exported
    seen = 0
    for name, params, _ in _functions(cpp):
        for ctype, var in re.findall(r"(\w+(?:<\d+>)?) (?:/\* )?(\w+_pe|\w+_tile|block)\b", params):
            seen += 1
            loop = var.rsplit("_", 1)[0]
            if var.endswith("_pe"):
                assert ctype == f"ap_uint<{bits(plan.loops[loop].pes)}>", (name, var, ctype)
            elif var.endswith("_tile"):
                assert ctype == f"ap_uint<{bits(plan.loops[loop].tiles)}>", (name, var, ctype)
            else:
                assert ctype.startswith("ap_uint<"), (name, var, ctype)
        assert not re.search(r"\bint (?!reload\b|/\* reload \*/)", params), (name, params)
    assert seen


def test_named_indices_hold_their_largest_value(exported):
    """Every `const ap_uint<b> x = expression;` evaluated at the largest value of each counter and
    argument it reads fits in b bits, and b is no wider than that value needs."""
    plan, cpp = exported
    checked = 0
    for name, params, body in _functions(cpp):
        largest = {}
        for loop, b in plan.loops.items():
            largest[f"{loop}_pe"], largest[f"{loop}_tile"] = b.pes - 1, b.tiles - 1
        for ctype, var, start, test, step in _COUNTER.findall(body):
            known = re.fullmatch(rf"{var} < (\d+)", test)
            if known:
                largest[var] = max(largest.get(var, 0), int(known.group(1)) - 1)
        for width, var, expression in _NAMED.findall(body):
            width = int(width)
            modulo = re.fullmatch(r"\(block / \d+\) % (\d+)", expression)
            if modulo:  # a block's tile: the type of the tile loop's counter
                assert width == bits(int(modulo.group(1))), (name, var, expression)
                continue
            assert re.fullmatch(r"[\w\s*+()]+", expression), (name, expression)  # sums of products
            value = eval(expression, {}, largest)  # monotonic: every term non-negative
            assert value < 2 ** width and width == bits(value), (name, var, expression, value, width)
            largest[var] = value
            checked += 1
    assert checked
