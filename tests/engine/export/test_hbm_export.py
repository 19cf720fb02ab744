"""HBM boards (resources/devices/u280.json, u55c.json): the device files load, every --device
subcommand takes them, and an export links each port to HBM pseudo-channels of its own, as many as
its buffer needs (engine/export/memory_banks.py)."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.export.interface import ExportError
from engine.export.memory_banks import port_memories
from engine.export.project import export_project
from engine.models.device import RESOURCE_NAMES, load_device
from engine.resources import KERNELS

MM = ["-D", "I=16", "-D", "J=16", "-D", "K=16"]
CONFIG = ["--design", "i-j__i-j.k", *(f"--param={p}={v}" for p, v in
                                      dict(i_t1=4, j_t1=4, k_t1=4, i_t2=2, j_t2=2, k_t2=2).items())]


@pytest.mark.parametrize("name, gbytes", [("u280", 8), ("u55c", 16)])
def test_the_hbm_boards_load_with_32_pseudo_channels_in_slr0(name, gbytes):
    device = load_device(name)
    assert device.memory_kind == "HBM2" and device.banks == 32
    assert device.banks * device.bank_bytes == gbytes * 2**30
    assert device.banks * device.bank_bytes_per_s == pytest.approx(460e9)  # the data sheets' 460 GB/s
    assert [device.slr_of_bank(b) for b in range(32)] == [0] * 32 and len(device.slrs) == 3
    for r in RESOURCE_NAMES:  # the validator's rule: the SLRs offer at most the device's totals
        assert sum(s.resources[r] for s in device.slrs) <= device.resources[r]
    assert device.platform.startswith(f"xilinx_{name}_")


@pytest.mark.parametrize("command", [["model"], ["simulate"], ["floorplan"]])
def test_device_u280_works_where_device_does(capsys, command):
    assert main([*command, str(KERNELS / "mm.c"), *MM, *CONFIG, "--device", "u280"]) == 0
    out = capsys.readouterr().out
    if command == ["model"]:
        assert "of Xilinx Alveo U280" in out


def test_search_on_u280(capsys):
    assert main(["search", str(KERNELS / "mm.c"), *MM, "--design", "i-j__i-j.k", "--samples", "8", "--no-store",
                 "--device", "u280"]) == 0
    assert "GOP/s" in capsys.readouterr().out


def test_an_hbm_export_links_each_port_to_its_own_pseudo_channels(tmp_path):
    space = compile_kernel(KERNELS / "mm.c", defines=["I=16", "J=16", "K=16"])
    design = space.design("i-j__i-j.k")
    values = dict(i_t1=4, j_t1=4, k_t1=4, i_t2=2, j_t2=2, k_t2=2)
    out = export_project(space, design, values, tmp_path / "p", device=load_device("u280"), floorplan="none")
    links = re.findall(r"^sp=kernel0_1\.(\w+):HBM\[(\d+)\]$", (out / "connectivity.cfg").read_text(), re.M)
    assert sorted(a for a, _ in links) == ["A", "B", "C"] and sorted(int(c) for _, c in links) == [0, 1, 2]
    assert "xilinx_u280_" in (out / "Makefile").read_text()
    assert "set_part {xcu280-fsvh2892-2L-e}" in (out / "hls_script.tcl").read_text()


def _ports(*names):
    return SimpleNamespace(ports=[SimpleNamespace(name=n) for n in names])


def test_a_buffer_larger_than_a_pseudo_channel_takes_a_run_of_them():
    device = load_device("u280")  # 256 MiB a pseudo-channel
    dram = {"A": {"words": 5 * 2**22, "word_bytes": 64}, "B": {"words": 16, "word_bytes": 64},  # A: 1.25 GiB
            "C": {"words": 2**22, "word_bytes": 64}}  # exactly one pseudo-channel
    assert port_memories(device, _ports("A", "B", "C"), dram) == {"A": "HBM[0:4]", "B": "HBM[5]", "C": "HBM[6]"}
    assert port_memories(load_device("u55c"), _ports("A", "B", "C"), dram) == {"A": "HBM[0:2]", "B": "HBM[3]",
                                                                               "C": "HBM[4]"}


def test_buffers_beyond_the_board_are_one_line():
    dram = {"A": {"words": 31 * 2**22, "word_bytes": 64}, "B": {"words": 2 * 2**22, "word_bytes": 64}}
    with pytest.raises(ExportError) as caught:
        port_memories(load_device("u280"), _ports("A", "B"), dram)
    assert str(caught.value) == "the ports' buffers need 33 HBM pseudo-channels of 256 MiB; the Xilinx Alveo U280 has 32"
