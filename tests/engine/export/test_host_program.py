"""The XRT host program is valid C++ against the XRT API surface it uses (a stub of the headers in
xrt_stub/), for bundled kernels and one written here; the testbench, linked with a reference kernel0
built by this test from the golden loop nest, passes and reports the first mismatch, and it passes the
generated HLS kernel (built with the C-simulation hls_stream shim), as Vitis HLS csim would run it."""
from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export.hls_kernel import kernel_export
from engine.export.host import hls_testbench, host_program
from engine.export.interface import kernel_interface
from engine.csim import include_dir
from engine.models.device import load_device
from engine.models.dram import LAYOUTS
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.models.sampling import random_configuration
from engine.resources import KERNELS

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

XRT_STUB = Path(__file__).parent / "xrt_stub"

# Not a bundled kernel: matrix-vector product with a bias read through a shifted subscript.
MATVEC = """
#define N 21
#define M 13
float x[N][M];
float w[M + 2];
float y[N];
void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int j = 0; j < M; j++)
      y[i] += x[i][j] * w[j + 2];
  }
#pragma endscop
}
"""


def _configured(path, defines, design_index, seed):
    space = compile_kernel(path, defines=defines)
    design = space.designs[design_index % len(space.designs)]
    model = shared_model(space, design, load_device())
    config = random_configuration(design, np.random.default_rng(seed), max_t1={l: 12 for l in design.band_loops})
    values = evaluate_configuration(model, config)["params"]
    descriptor = build_descriptor(space, design, model.architecture)
    return descriptor, kernel_interface(descriptor, values), values


@pytest.fixture(scope="module")
def matvec_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("matvec") / "matvec.c"
    path.write_text(MATVEC)
    return path


CASES = {
    "mm-odd": lambda _: _configured(KERNELS / "mm.c", ["I=60", "J=50", "K=70"], 9, 1),
    "cnn-small": lambda _: _configured(KERNELS / "cnn.c", ["O=16", "I=16", "H=16", "W=16", "P=3", "Q=3"], 4, 2),
    "matvec": lambda path: _configured(path, [], 2, 3),
}


@pytest.fixture(scope="module", params=list(CASES))
def exported(request, matvec_path):
    return CASES[request.param](matvec_path)


def _gxx(*args, cwd):
    return subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_host_program_compiles_against_the_xrt_api(exported, tmp_path, layout):
    descriptor, interface, values = exported
    files, dram = kernel_export(descriptor, values, layout=layout)
    text = host_program(descriptor, interface, dram)
    (tmp_path / "kernel_host.cpp").write_text(text)
    (tmp_path / "kernel_kernel.h").write_text(files["kernel_kernel.h"])
    result = _gxx("-fsyntax-only", f"-I{XRT_STUB}", "kernel_host.cpp", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for header in ("xrt/xrt_device.h", "xrt/xrt_kernel.h", "xrt/xrt_bo.h"):
        assert f"#include <{header}>" in text
    assert f'xrt::kernel kernel(device, uuid, "{interface.top}");' in text
    for k, port in enumerate(interface.ports):
        assert f"xrt::bo {port.name}_bo(device, sizeof({port.name}_DRAM_WORD) * {port.name}_DRAM_WORDS, " \
               f"kernel.group_id({k}));" in text
        assert f"#define {port.name}_DRAM_WORDS {dram[port.name]['words']}L" in files["kernel_kernel.h"]
        # the DRAM word: a serialized output's full bus word (dram_layout.py), else the port's own
        bus = f"{port.name}_bus_word" if "store_words" in dram[port.name] else port.word_type
        assert f"#define {port.name}_DRAM_WORD {bus}" in files["kernel_kernel.h"]
        serialized = dram[port.name]["layout"] == "serialized"
        # a port whose partial results come back stays natural only when its loader and storer
        # visit the words in different orders (design.json says why)
        assert serialized == (layout == "serialized" and "reason" not in dram[port.name])
        if port.direction != "out":  # gathered before the kernel
            assert (f"serialize_{port.name}(" in text) == serialized
        if port.direction != "in":  # scattered after it
            assert (f"deserialize_{port.name}(" in text) == serialized
        assert f"{port.name}_ELEMENTS = {math.prod(port.padded_shape)}L;" in text
    call = re.search(r"auto run = kernel\((.*)\);", text).group(1)
    assert call == ", ".join(f"{p.name}_bo" for p in interface.ports)
    assert descriptor["kernel"]["golden"] in text
    for timed in ("serialize time", "kernel time", "deserialize time"):
        assert f'std::printf("{timed}: ' in text


def _copy_loop(port, assignment: str) -> str:
    """`for (...) ...` over the port's array, `assignment` written with ELEMENT and PADDED."""
    loops = "".join(f"for (int i{d} = 0; i{d} < {n}; i{d}++) " for d, n in enumerate(port.shape))
    element = port.array + "".join(f"[i{d}]" for d in range(len(port.shape)))
    flat = "0"
    for d, n in enumerate(port.padded_shape):
        flat = f"({flat}) * {n} + i{d}"
    padded = f"reinterpret_cast<{port.c_type}*>({port.name}_words)[{flat}]"
    return "  " + loops + assignment.replace("ELEMENT", element).replace("PADDED", padded)


def _reference_kernel(descriptor: dict, interface, *, wrong_first_output: bool = False) -> tuple[str, str]:
    """kernel_kernel.h and a kernel0 that unpads its inputs, runs the golden loop nest and pads the
    results: what a correct generated kernel does, seen from outside."""
    arrays = descriptor["kernel"]["arrays"]
    types = {p.array: p.c_type for p in interface.ports}
    params = ", ".join(f"{p.word_type}* {p.name}_words" for p in interface.ports)
    header = ["#pragma once"]
    header += [f"struct {p.word_type} {{ {p.c_type} element[{p.word_elements}]; }};" for p in interface.ports]
    header.append(f'extern "C" void {interface.top}({params});')
    body = ['#include "kernel_kernel.h"', f"void {interface.top}({params}) {{"]
    body += [f"  static {types[a]} {a}{''.join(f'[{n}]' for n in arrays[a]['shape'])};" for a in arrays]
    body += [_copy_loop(p, "ELEMENT = PADDED;") for p in interface.ports if p.direction != "out"]
    body.append(descriptor["kernel"]["golden"])
    body += [_copy_loop(p, "PADDED = ELEMENT;") for p in interface.ports if p.direction != "in"]
    if wrong_first_output:
        first = next(p for p in interface.ports if p.direction != "in")
        body.append(f"  reinterpret_cast<{first.c_type}*>({first.name}_words)[0] += 1;")
    body.append("}")
    return "\n".join(header) + "\n", "\n".join(body) + "\n"


def _run_testbench(descriptor, interface, folder: Path, **kw) -> subprocess.CompletedProcess:
    header, kernel = _reference_kernel(descriptor, interface, **kw)
    (folder / "kernel_kernel.h").write_text(header)
    (folder / "kernel_kernel.cpp").write_text(kernel)
    (folder / "kernel_tb.cpp").write_text(hls_testbench(descriptor, interface))
    build = _gxx("-O1", "-o", "tb", "kernel_tb.cpp", "kernel_kernel.cpp", cwd=folder)
    assert build.returncode == 0, build.stderr
    return subprocess.run([str(folder / "tb")], capture_output=True, text=True, timeout=120)


def test_testbench_passes_a_correct_kernel_and_reports_the_first_mismatch(matvec_path, tmp_path):
    descriptor, interface, _ = CASES["matvec"](matvec_path)
    outputs = sum(math.prod(p.shape) for p in interface.ports if p.direction != "in")
    run = _run_testbench(descriptor, interface, tmp_path)
    assert run.returncode == 0, run.stdout
    assert run.stdout.strip() == f"PASS: all {outputs} output elements match the loop nest"
    run = _run_testbench(descriptor, interface, tmp_path, wrong_first_output=True)
    first = next(p for p in interface.ports if p.direction != "in")
    assert run.returncode == 1
    index = "[0]" * len(first.shape)
    assert re.search(rf"first mismatch: {first.array}{re.escape(index)}: expected \S+, got \S+", run.stdout)
    assert "FAIL: 1 of" in run.stdout


@pytest.mark.parametrize("layout", LAYOUTS)
def test_testbench_passes_the_generated_kernel(exported, tmp_path, layout):
    descriptor, interface, values = exported
    files, dram = kernel_export(descriptor, values, layout=layout)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "kernel_tb.cpp").write_text(hls_testbench(descriptor, interface, dram))
    build = _gxx("-O1", "-Wno-unknown-pragmas", "-Wno-unused-label", "-Wno-unused-parameter",
                 "-Wno-unused-variable", "-Wno-error", f"-I{include_dir()}", "-o", "tb", "kernel_tb.cpp",
                 "kernel_kernel.cpp", cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(tmp_path / "tb")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("PASS"), run.stdout
