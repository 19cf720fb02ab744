"""Issue 13 item 7: the XRT host times kernel0 like AutoSA's host (launch to the end of `run.wait()`),
refuses a run whose state is not COMPLETED, and prints the wall time and the achieved GOP/s with the
models' operation count (2 per point of the problem); issue 27 item 7: the serialization and
deserialization of the DRAM layout are timed apart from the kernel. Checked against the XRT stub
headers."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export.hls_kernel import kernel_export
from engine.export.host import host_program
from engine.export.interface import kernel_interface
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

XRT_STUB = Path(__file__).parent / "xrt_stub"


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_host_checks_the_run_state_and_prints_time_and_throughput(tmp_path):
    space = compile_kernel(KERNELS / "mm.c", defines=["I=60", "J=50", "K=70"])
    design = space.design("i-j__i-j.k")
    model = shared_model(space, design, load_device())
    values = evaluate_configuration(model, {"i_t1": 12, "j_t1": 10, "k_t1": 14, "i_t2": 6, "j_t2": 5, "k_t2": 2})
    descriptor = build_descriptor(space, design, model.architecture)
    files, dram = kernel_export(descriptor, values["params"])
    text = host_program(descriptor, kernel_interface(descriptor, values["params"]), dram)
    lines = text.splitlines()
    launch = next(k for k, l in enumerate(lines) if "auto run = kernel(" in l)
    assert "kernel_start = std::chrono::steady_clock::now()" in lines[launch - 1]
    assert lines[launch + 1].strip() == "const auto state = run.wait();"
    check = next(k for k, l in enumerate(lines) if "if (state != ERT_CMD_STATE_COMPLETED) {" in l)
    assert check > launch and any("return 2;" in l for l in lines[check + 1:check + 5])
    assert f"({2 * 60 * 50 * 70} operations)" in text and f"{2 * 60 * 50 * 70}.0 / kernel_seconds / 1e9" in text
    # the host's repacking is timed apart: serialize before the launch, deserialize after the results came back
    assert text.index("serialize_start =") < text.index("auto run = kernel(") < text.index("_bo.sync(XCL_BO_SYNC_BO_FROM_DEVICE)") \
        < text.index("deserialize_start =") < text.index('std::printf("serialize time:')
    (tmp_path / "kernel_host.cpp").write_text(text)
    (tmp_path / "kernel_kernel.h").write_text(files["kernel_kernel.h"])
    checked = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{XRT_STUB}",
                              "kernel_host.cpp"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
