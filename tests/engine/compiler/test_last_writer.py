"""The last writer of each output element (engine/compiler/last_writer.py) against running the loop
nest: for every LU design whose outputs miss a space loop, the descriptor's last-writer map sends
each element to the space point of the last statement instance that writes it, found by executing
the band's statements in order (band loops lexicographically, then textual order) under their
bounds and guards; elements nothing writes belong to no PE."""
from __future__ import annotations

import itertools
import re

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.last_writer import owned_elements
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS


def _holds(condition: str, point: dict) -> bool:
    return eval(condition.replace("&&", " and ").replace("||", " or "), {}, dict(point))


def _brute_force(descriptor: dict, array: str) -> dict[tuple[int, ...], tuple[int, ...]]:
    band = descriptor["design"]["band_loops"]
    space = descriptor["topology"]["space_loops"]
    sizes = descriptor["design"]["problem_size"]
    last = {}
    for values in itertools.product(*(range(sizes[l]) for l in band)):
        point = dict(zip(band, values))
        for st in descriptor["compute"]["update"]:
            target = re.fullmatch(r"(\w+)((?:\[[^\]]+\])+)", st["target"])
            if target.group(1) != array:
                continue
            if all(_holds(c, point) for c in st["bounds"] + st["guards"]):
                element = tuple(eval(s, {}, dict(point)) for s in re.findall(r"\[([^\]]+)\]", target.group(2)))
                last[element] = tuple(point[l] for l in space)
    return last


@pytest.mark.parametrize("design", ["k__k-j-i", "k-j__k-j-i", "k-i__k-j-i"])
def test_last_writer_matches_running_the_loop_nest(design):
    n = 5
    space = compile_kernel(KERNELS / "lu.c", defines=[f"N={n}"])
    chosen = space.design(design)
    model = PerformanceModel(space, chosen, load_device("u250"))
    descriptor = build_descriptor(space, chosen, model.architecture)
    values = {f"{l}_t1": n for l in "kji"}
    shared = [g for g in descriptor["io_groups"] if g.get("last_writer")]
    assert sorted(g["array"] for g in shared) == ["L", "U"]  # neither uses k
    for g in shared:
        owners = owned_elements(g, descriptor["design"]["problem_size"], descriptor["topology"]["space_loops"],
                                [n] * len(chosen.space_loops), values)
        found = {element: pe for pe, elements in owners.items() for element in elements}
        assert found == _brute_force(descriptor, g["array"])
        assert all(elements == sorted(elements) for elements in owners.values())  # row major, as the drain sends


def test_designs_whose_outputs_use_every_space_loop_have_no_last_writer_map():
    space = compile_kernel(KERNELS / "lu.c", defines=["N=5"])
    chosen = space.design("j-i__k-j-i")
    model = PerformanceModel(space, chosen, load_device("u250"))
    descriptor = build_descriptor(space, chosen, model.architecture)
    assert not any("last_writer" in g for g in descriptor["io_groups"])


def test_tiled_configurations_keep_the_box_drain():
    space = compile_kernel(KERNELS / "lu.c", defines=["N=6"])
    chosen = space.design("k-j__k-j-i")
    model = PerformanceModel(space, chosen, load_device("u250"))
    descriptor = build_descriptor(space, chosen, model.architecture)
    group = next(g for g in descriptor["io_groups"] if g["array"] == "U")
    assert owned_elements(group, descriptor["design"]["problem_size"], ["k", "j"], [3, 6],
                          {"k_t1": 3, "j_t1": 6, "i_t1": 6}) is None
