"""export_project: the project layout and design.json, validation through the models (constraints,
device budget), and how it treats the output directory (non-empty refused unless forced, forced
replaces only its own files, a failure leaves nothing behind, odd names refused)."""
from __future__ import annotations

import json
import re

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export import project
from engine.export.build_files import DEFAULT_PLATFORM
from engine.export.hls_kernel import kernel_sources
from engine.export.interface import ExportError
from engine.export.project import export_project, safe_directory_name
from engine.errors import DesignError, EngineError
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

FILES = {"design.json", "README.md", "Makefile", "connectivity.cfg", "hls_script.tcl", "src/kernel_kernel.cpp",
         "src/kernel_kernel.h", "src/kernel_host.cpp", "src/kernel_tb.cpp"}
CONFIG = {"i_t1": 16, "j_t1": 12, "k_t1": 16, "i_t2": 4, "j_t2": 3, "k_t2": 4}  # j_t1 does not divide 64
OVER_BUDGET = {"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 1, "j_t2": 1, "k_t2": 8}  # 4096 PEs x 8 lanes


@pytest.fixture(scope="module")
def mm():
    space = compile_kernel(KERNELS / "mm.c", defines=["I=64", "J=64", "K=64"])
    return space, space.design("i-j__i-j.k")


@pytest.fixture
def stand_in_kernel(monkeypatch):
    """Kernel sources that say where they come from: the directory handling does not depend on them."""
    monkeypatch.setattr(project, "kernel_export", lambda descriptor, values, report=None, **_: ({
        "kernel_kernel.cpp": "// stand-in kernel\n", "kernel_kernel.h": "// stand-in header\n"}, {}))


@pytest.fixture
def real_kernel(mm):
    space, design = mm
    model = shared_model(space, design, load_device())
    try:
        kernel_sources(build_descriptor(space, design, model.architecture),
                       evaluate_configuration(model, CONFIG)["params"])
    except ExportError as exc:
        if "not written yet" in str(exc):
            pytest.skip("needs the HLS kernel generator (engine.export.hls_kernel.kernel_sources)")


def _listing(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _no_staging_left(parent):
    return not [p for p in parent.iterdir() if p.name.endswith(".export")]


def test_layout_and_design_json(mm, real_kernel, tmp_path):
    space, design = mm
    out = export_project(space, design, CONFIG, tmp_path / "mm-export", floorplan="none")
    assert {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} == FILES
    data = json.loads((out / "design.json").read_text())
    assert set(data) == {"descriptor", "values", "platform", "over_budget", "layout", "axi", "dram", "host_repack",
                         "report"}
    assert data["layout"] == "serialized" and set(data["dram"]) == {"A", "B", "C"}
    assert data["platform"] == DEFAULT_PLATFORM and data["over_budget"] is False
    assert data["descriptor"]["design"]["id"] == design.id
    packing = [p["name"] for p in data["descriptor"]["parameters"] if p["role"] == "data_packing"]
    assert set(data["values"]) == set(CONFIG) | set(packing)
    assert all(data["values"][k] == v for k, v in CONFIG.items())
    assert data["report"]["fits"] is True and data["report"]["params"] == data["values"]
    readme = (out / "README.md").read_text()
    assert design.id in readme and "Over the device budget" not in readme
    assert "4 x 4 = 16 PEs" in readme and "4 lanes per PE along loop `k`" in readme  # 16/4 x 12/3, k_t2
    assert "| `j_t1` | array partitioning | 12 |" in readme and "300 MHz" in readme
    for port in ("A", "B", "C"):
        assert f"| `{port}` | {port} |" in readme and f"`gmem_{port}`" in readme
    assert "systolic csim ." in readme
    for name in ("kernel_kernel.cpp", "kernel_kernel.h"):
        assert (out / "src" / name).read_text().strip()
    assert _no_staging_left(tmp_path)


def test_platform_goes_to_the_makefile_and_design_json(mm, stand_in_kernel, tmp_path):
    space, design = mm
    out = export_project(space, design, CONFIG, tmp_path / "p", platform="xilinx_u250_xdma_201830_2", floorplan="none")
    assert re.search(r"^PLATFORM \?= xilinx_u250_xdma_201830_2$", (out / "Makefile").read_text(), re.MULTILINE)
    assert json.loads((out / "design.json").read_text())["platform"] == "xilinx_u250_xdma_201830_2"
    with pytest.raises(EngineError, match="platform"):
        export_project(space, design, CONFIG, tmp_path / "q", platform="u250; rm -rf /", floorplan="none")


def test_non_empty_directory_is_refused_and_untouched(mm, stand_in_kernel, tmp_path):
    space, design = mm
    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "Makefile").write_text("all:\n\techo mine\n")
    before = _listing(out)
    with pytest.raises(EngineError, match="not empty.*--force"):
        export_project(space, design, CONFIG, out, floorplan="none")
    assert _listing(out) == before
    assert _no_staging_left(tmp_path)


def test_force_replaces_only_the_exported_files(mm, stand_in_kernel, tmp_path):
    space, design = mm
    out = tmp_path / "taken"
    (out / "src").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "src" / "extra.cpp").write_text("// mine")
    (out / "Makefile").write_text("stale")
    export_project(space, design, CONFIG, out, force=True, floorplan="none")
    assert (out / "notes.txt").read_text() == "mine" and (out / "src" / "extra.cpp").read_text() == "// mine"
    assert "PLATFORM ?=" in (out / "Makefile").read_text()
    assert FILES <= set(_listing(out))
    assert _no_staging_left(tmp_path)


def test_an_empty_directory_is_used(mm, stand_in_kernel, tmp_path):
    space, design = mm
    (tmp_path / "empty").mkdir()
    export_project(space, design, CONFIG, tmp_path / "empty", floorplan="none")
    assert FILES == set(_listing(tmp_path / "empty"))


def test_over_budget_needs_permission_and_the_readme_says_so(mm, stand_in_kernel, tmp_path):
    space, design = mm
    with pytest.raises(EngineError, match=r"over the device budget with these parameters \(DSP .*--allow-over-budget"):
        export_project(space, design, OVER_BUDGET, tmp_path / "big", floorplan="none")
    assert not (tmp_path / "big").exists()
    out = export_project(space, design, OVER_BUDGET, tmp_path / "big", allow_over_budget=True, floorplan="none")
    readme = (out / "README.md").read_text()
    assert "Over the device budget" in readme and "DSP" in readme.split("Over the device budget")[1].split("\n")[0]
    data = json.loads((out / "design.json").read_text())
    assert data["over_budget"] is True and data["report"]["fits"] is False


def test_constraint_violations_name_the_constraint(mm, stand_in_kernel, tmp_path):
    space, design = mm
    with pytest.raises(DesignError, match="i_t2=3 must divide i_t1=16"):
        export_project(space, design, {**CONFIG, "i_t2": 3}, tmp_path / "bad", floorplan="none")
    with pytest.raises(DesignError, match="k_t2 is missing"):
        export_project(space, design, {k: v for k, v in CONFIG.items() if k != "k_t2"}, tmp_path / "bad",
                       floorplan="none")
    assert not (tmp_path / "bad").exists()


def test_a_failing_generator_leaves_nothing(mm, monkeypatch, tmp_path):
    space, design = mm

    def broken(descriptor, values, report=None, **_):
        raise ExportError("unsupported statement form")

    monkeypatch.setattr(project, "kernel_export", broken)
    with pytest.raises(ExportError, match="unsupported statement form"):
        export_project(space, design, CONFIG, tmp_path / "out", floorplan="none")
    assert list(tmp_path.iterdir()) == []


def test_odd_directory_names_are_refused(mm, stand_in_kernel, tmp_path):
    space, design = mm
    for name in ("my project", "a$b", "x;y", "-flag"):
        with pytest.raises(EngineError, match="characters make or Vitis cannot handle"):
            export_project(space, design, CONFIG, tmp_path / name, floorplan="none")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["mm-i-j__i-j.k", "my kernel (v2)-i__i.k", "../../etc/passwd", "$(rm -rf)", "  "])
def test_safe_directory_name(text):
    name = safe_directory_name(text)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name)
    assert safe_directory_name(name) == name
    assert "/" not in name and ".." not in name
