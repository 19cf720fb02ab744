"""Makefile, connectivity.cfg and hls_script.tcl read their names, banks and clock from the descriptor
and the kernel interface."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export.build_files import DEFAULT_PLATFORM, PART, connectivity_cfg, hls_script, makefile
from engine.export.interface import kernel_interface
from engine.export.memory_banks import port_memories
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.models.sampling import random_configuration
from engine.resources import KERNELS

FIVE_ARRAYS = """
#define N 6
float a[N][N]; float b[N][N]; float c[N][N]; float d[N][N]; float e[N][N];
void kernel(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        e[i][j] += a[i][k] * b[k][j] + c[i][k] * d[k][j];
#pragma endscop
}
"""


def _exported(path, defines=(), seed=0):
    space = compile_kernel(path, defines=list(defines))
    design = space.designs[seed % len(space.designs)]
    model = shared_model(space, design, load_device())
    values = evaluate_configuration(model, random_configuration(design, np.random.default_rng(seed)))["params"]
    descriptor = build_descriptor(space, design, model.architecture)
    return descriptor, kernel_interface(descriptor, values)


@pytest.fixture(scope="module")
def mm():
    return _exported(KERNELS / "mm.c", ["I=64", "J=64", "K=64"])


def test_connectivity_puts_each_port_on_a_bank(mm):
    descriptor, interface = mm
    text = connectivity_cfg(descriptor, interface, port_memories(load_device(), interface, {}))
    lines = text.splitlines()
    assert "[connectivity]" in lines
    assert "nk=kernel0:1:kernel0_1" in lines
    banks = dict(re.findall(r"^sp=kernel0_1\.(\w+):DDR\[(\d)\]$", text, re.M))
    assert list(banks) == [p.name for p in interface.ports]
    assert len(set(banks.values())) == len(interface.ports)  # three ports, four banks: all distinct


def test_more_ports_than_banks_wrap_around(tmp_path):
    path = tmp_path / "five.c"
    path.write_text(FIVE_ARRAYS)
    descriptor, interface = _exported(path)
    assert len(interface.ports) == 5
    text = connectivity_cfg(descriptor, interface, port_memories(load_device(), interface, {}))
    banks = re.findall(r"^sp=kernel0_1\.(\w+):DDR\[(\d)\]$", text, re.M)
    assert [int(b) for _, b in banks] == [k % load_device().banks for k in range(5)]


def test_makefile_platform_default_and_override(mm):
    descriptor, interface = mm
    default = makefile(descriptor, interface, None)
    assert re.search(rf"^PLATFORM \?= {DEFAULT_PLATFORM}$", default, re.M)
    assert DEFAULT_PLATFORM == "xilinx_u250_gen3x16_xdma_4_1_202210_1"
    other = makefile(descriptor, interface, "xilinx_u250_xdma_201830_2")
    assert re.search(r"^PLATFORM \?= xilinx_u250_xdma_201830_2$", other, re.M)


def test_makefile_targets_and_flow(mm):
    descriptor, interface = mm
    text = makefile(descriptor, interface, None, clock_mhz=250)
    targets = set(re.findall(r"^([\w.$()/-]+):", text, re.M))
    assert {"all", "check", "clean"} <= targets
    assert "TARGET ?= hw" in text
    assert re.search(r"^\t\$\(VPP\) -c -k \$\(KERNEL\) .*src/kernel_kernel\.cpp$", text, re.M)
    assert re.search(r"^\t\$\(VPP\) -l .*--config connectivity\.cfg", text, re.M)
    assert "-lxrt_coreutil" in text and "$(XILINX_XRT)/include" in text
    assert "emconfigutil --platform $(PLATFORM)" in text
    assert "FREQ_MHZ ?= 250" in text
    assert f"KERNEL := {interface.top}" in text
    # recipes are indented with tabs, as make requires
    recipe_lines = [line for line in text.splitlines() if line.startswith((" ", "\t")) and line.strip()]
    assert all(line.startswith("\t") or line.startswith("             ") for line in recipe_lines)


@pytest.mark.parametrize("mhz, period", [(300, "3.33"), (250, "4.00")])
def test_hls_script_part_clock_and_steps(mm, mhz, period):
    descriptor, interface = mm
    text = hls_script(descriptor, interface, mhz)
    assert f"set_top {interface.top}" in text
    assert f"set_part {{{PART}}}" in text and PART == "xcu250-figd2104-2L-e"
    assert f"create_clock -period {period} " in text
    assert "add_files src/kernel_kernel.cpp" in text and "add_files -tb src/kernel_tb.cpp" in text
    for step in ("csim_design", "csynth_design", "cosim_design"):
        assert step in text
    assert text.count("{") == text.count("}")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("target", ["hw", "sw_emu"])
def test_make_reads_the_makefile(mm, tmp_path, target):
    descriptor, interface = mm
    (tmp_path / "Makefile").write_text(makefile(descriptor, interface, None))
    (tmp_path / "src").mkdir()
    for name in ("src/kernel_kernel.cpp", "src/kernel_kernel.h", "src/kernel_host.cpp", "connectivity.cfg"):
        (tmp_path / name).write_text("")
    run = subprocess.run(["make", "-n", "check", f"TARGET={target}", "PLATFORM=my_platform", "XILINX_XRT=/xrt"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    commands = run.stdout.splitlines()
    assert any(c.startswith("v++ -c -k kernel0 --platform my_platform -t " + target) for c in commands)
    assert any(c.startswith("v++ -l ") and "--config connectivity.cfg" in c for c in commands)
    assert any(c.startswith("g++ ") and "-I/xrt/include" in c for c in commands)
    assert ("emconfigutil --platform my_platform --od ." in commands) == (target != "hw")
    assert commands[-1].endswith(f"./host build_dir.{target}.my_platform/kernel0.xclbin")
