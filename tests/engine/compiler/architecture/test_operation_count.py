"""compute.operations: the arithmetic of the band's statements times their executions, the numerator
of every throughput (descriptor, model, search, CLI, exported host program)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli.main import main
from engine.compiler.architecture.build import build_architecture, kernel_operations
from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.resources import KERNELS
from engine.search.space import SearchSpace


@pytest.mark.parametrize("kernel, defines, per_point", [
    ("mm.c", ["I=8", "J=6", "K=4"], 2),  # C += A * B; the init C = 0 has no arithmetic
    ("mttkrp.c", ["I=4", "J=6", "K=2", "L=3"], 3),  # D += A * B * C: two multiplies and the add
    ("ttmc.c", ["I=2", "J=3", "K=4", "L=2", "M=3"], 3),
])
def test_operations_per_iteration_are_the_statements_arithmetic(kernel, defines, per_point):
    space = compile_kernel(KERNELS / kernel, defines=defines)
    points = int(np.prod(space.band.extents))
    assert kernel_operations(space) == {"total": per_point * points, "per_iteration": per_point}
    design = space.designs[0]
    descriptor = build_descriptor(space, design, build_architecture(space, design))
    assert descriptor["version"] == "1.9"
    assert descriptor["compute"]["operations"] == {"total": per_point * points, "per_iteration": per_point}


def test_lu_counts_the_operations_of_its_triangle():
    n = 6
    space = compile_kernel(KERNELS / "lu.c", defines=[f"N={n}"])
    # a division per (k, j > k) at i = k, a multiply and a subtract per (k, j > k, i > k)
    expected = sum(n - 1 - k for k in range(n)) + 2 * sum((n - 1 - k) ** 2 for k in range(n))
    operations = kernel_operations(space)
    assert operations["total"] == expected
    assert operations["per_iteration"] < 3  # ops over the pyramid's points: not a whole number here


def test_throughput_divides_the_operations_by_the_time():
    space = compile_kernel(KERNELS / "mttkrp.c", defines=["I=4", "J=4", "K=4", "L=4"])
    design = space.designs[0]
    model = PerformanceModel(space, design, load_device("u250"))
    config = {p.name: np.array([p.lower]) for p in design.params if p.tunable}
    values = model.evaluate(config)
    seconds = values["latency_cycles"][0] / (model.device.clock_mhz * 1e6)
    assert model.symbolic.operations == 3 * 4 ** 4
    assert values["throughput_gops"][0] == pytest.approx(3 * 4 ** 4 / seconds / 1e9)
    assert SearchSpace(model).throughput(values["latency_cycles"][0]) == pytest.approx(values["throughput_gops"][0])


def test_the_cli_says_what_gops_counts(capsys):
    kernel = str(KERNELS / "mttkrp.c")
    defines = ["-D", "I=4", "-D", "J=4", "-D", "K=4", "-D", "L=4"]
    space = compile_kernel(kernel, defines=["I=4", "J=4", "K=4", "L=4"])
    design = space.designs[0]
    params = [f"--param={p.name}={p.lower}" for p in design.params if p.tunable]
    assert main(["model", kernel, *defines, "--design", design.id, *params]) == 0
    assert "GOP/s (3 ops per iteration)" in capsys.readouterr().out
    assert main(["model", kernel, *defines, "--design", design.id, *params, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["operations"] == {"total": 3 * 4 ** 4, "per_iteration": 3}
