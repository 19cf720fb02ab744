import re
import shutil
import subprocess

import numpy as np
import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export import ExportError, kernel_interface, kernel_sources
from engine.export.interface import evaluated
from engine.compiler.fifo_depths import fifo_depth
from engine.csim import include_dir
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS


def _design(kernel, defines, design_id, params):
    space = compile_kernel(KERNELS / kernel, defines=defines)
    design = space.design(design_id)
    model = shared_model(space, design, load_device("u250"))
    values = dict(params)
    values.update({k: int(np.asarray(v)) for k, v in model.inferred_packing(params).items()})
    return build_descriptor(space, design, model.architecture), values, model


MM = ("mm.c", {"I": "60", "J": "50", "K": "70"})
MM_2D = (*MM, "i-j__i-j.k", {"i_t1": 16, "j_t1": 12, "k_t1": 16, "i_t2": 4, "j_t2": 3, "k_t2": 4})
MM_RELOAD = (*MM, "i-j__i-k.j", {"i_t1": 8, "j_t1": 25, "k_t1": 32, "i_t2": 4, "j_t2": 5, "k_t2": 2})
MM_CHAIN = (*MM, "k__i-j.k", {"i_t1": 7, "j_t1": 8, "k_t1": 5, "i_t2": 7, "j_t2": 4})
CNN = ("cnn.c", {"O": "8", "I": "6", "H": "9", "W": "10", "P": "3", "Q": "3"}, "o-w__o-h-w.i-p-q",
       {"o_t1": 4, "h_t1": 5, "w_t1": 4, "i_t1": 6, "p_t1": 3, "q_t1": 2, "o_t2": 2, "h_t2": 5, "w_t2": 2, "i_t2": 2})


@pytest.fixture(scope="module", params=[MM_2D, MM_RELOAD, MM_CHAIN, CNN], ids=["mm-2d", "mm-reload", "mm-chain", "cnn"])
def generated(request):
    kernel, defines, design_id, params = request.param
    descriptor, values, model = _design(kernel, defines, design_id, params)
    return descriptor, values, kernel_sources(descriptor, values, report=evaluate_configuration(model, params))


def _functions(cpp: str) -> set[str]:
    return set(re.findall(r"^static void (\w+)\(", cpp, re.MULTILINE))


def test_one_function_per_module_kind_and_every_instance_called_in_kernel0(generated):
    descriptor, values, sources = generated
    cpp = sources["kernel_kernel.cpp"]
    functions = _functions(cpp)
    # the dataflow region: kernel0, or the function it calls once per pass
    region = "static void kernel0_pass(" if "kernel0_pass" in functions else 'extern "C" void kernel0('
    top = cpp[cpp.index(region):]
    calls = re.findall(r"^  (\w+)\(", top, re.MULTILINE)
    for module in descriptor["topology"]["modules"]:
        # (a storer's serialize stage, `C_L3_out_serialize`, is a process of its own: dram_layout.py)
        variants = {f for f in functions if f == module["name"] or f.startswith(module["name"] + "_")
                    and not f.endswith("_serialize")}
        # partial results' input modules exist where some are read back at these values
        idle = module["kind"] == "io" and any(
            g["array"] == module["array"] and g["kind"] != "in" and evaluated(g["reload_events"], values) == 0
            for g in descriptor["io_groups"])
        assert bool(variants) != idle, module["name"]
        grid = 1
        for g in module["grid"]:
            grid *= round(eval(g, {}, {**values, "ceiling": lambda x: -(-x // 1)}))
        if not idle:
            assert sum(c in variants for c in calls) == grid, module["name"]
    assert "#pragma HLS dataflow" in top and set(calls) <= functions


def test_streams_have_the_depths_of_fifo_depths(generated):
    descriptor, values, sources = generated
    cpp = sources["kernel_kernel.cpp"]
    declared = re.findall(r"hls::stream<\w+> (\w+)\(\"\1\"\);\n#pragma HLS stream variable=\1 depth=(\d+)", cpp)
    assert declared
    expected = {fifo_depth(f, values, descriptor) for f in descriptor["topology"]["fifos"]}
    # a storer's FIFO to its serialize stage holds two bus words' worth of its words (dram_layout.py)
    stages = {int(d) for name, d in declared if name.endswith("_to_bus")}
    assert {int(d) for name, d in declared if not name.endswith("_to_bus")} <= expected | {2}
    assert all(d % 2 == 0 and d > 2 for d in stages)


def test_header_declares_the_interface_and_describes_the_array(generated):
    descriptor, values, sources = generated
    header = sources["kernel_kernel.h"]
    interface = kernel_interface(descriptor, values)
    # each port in its DRAM word: `<port>_DRAM_WORD`, a serialized output's full bus word or the port's own
    words = {p.name: re.search(rf"#define {p.name}_DRAM_WORD (\w+)", header).group(1) for p in interface.ports}
    assert all(words[p.name] in (p.word_type, f"{p.array}_bus_word") for p in interface.ports)
    ports = ", ".join(f"{'const ' if p.direction == 'in' else ''}{words[p.name]} *{p.name}" for p in interface.ports)
    assert f'extern "C" void kernel0({ports});' in header
    for p in interface.ports:
        assert f"typedef packed<{p.array}_t, {p.word_elements}> {p.word_type};" in header
    assert descriptor["design"]["id"] in header and "predicted latency" in header and "DSP" in header
    assert "PE array: " in header


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_generated_code_compiles_without_warnings(generated, tmp_path):
    *_, sources = generated
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
    # HLS pragmas and loop labels are for Vitis; g++ would only say it does not use them
    built = subprocess.run(["g++", "-std=c++14", "-fsyntax-only", "-Wall", "-Wextra", "-Wno-unknown-pragmas",
                            "-Wno-unused-label", f"-I{include_dir()}", str(tmp_path / "kernel_kernel.cpp")],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0 and built.stderr == "", built.stderr


def test_partial_results_are_read_back_pass_by_pass_and_never_combined_on_dram():
    descriptor, values, _ = _design(*MM_RELOAD)
    cpp = kernel_sources(descriptor, values)["kernel_kernel.cpp"]
    assert {"C_L3_in", "kernel0_pass"} <= _functions(cpp)
    # k revisits C: the tile loops i and k run as passes, reloading from the second k tile on
    kernel0 = cpp[cpp.index('extern "C" void kernel0('):]
    assert "const int reload = k_tile > 0;" in kernel0
    assert re.search(r"kernel0_pass\(A, B, C, i_tile, k_tile, reload\);", kernel0)
    storer = cpp[cpp.index("static void C_L3_out("):cpp.index("static void kernel0_pass(")]
    assert not re.search(r"=\s*C\[", storer) and "slot" not in storer
    # the PE's compute helper reads the partial results into the accumulators it is given; the PE
    # passes its pass's `reload` on to it beside the drain of the previous event
    compute = cpp[cpp.index("static void PE_compute("):cpp.index("static void PE_drain(")]
    assert "if (reload) {" in compute and "const bool first = !reload && " in compute
    pe = cpp[cpp.index("static void PE("):]
    assert re.search(r"PE_compute\(i_pe, j_pe, i_tile, k_tile, reload, j_tile, ping, .*\);\n\s*PE_drain\(pong, C_out, event > 0\);", pe)


def test_padded_iterations_are_guarded_by_the_original_domain():
    descriptor, values, _ = _design(*MM_2D)
    cpp = kernel_sources(descriptor, values)["kernel_kernel.cpp"]
    # the SIMD lanes reduce k: a padded lane contributes the identity to the tree
    assert "term[lane] = (i < 60 && j < 50 && k < 70) ? " in cpp


def test_statements_the_generator_cannot_place_are_refused_in_one_line():
    descriptor, values, _ = _design(*MM_2D)
    descriptor["compute"]["after"] = [{"name": "S2", "target": "C[i][j]", "expression": "relu(C[i][j])"}]
    with pytest.raises(ExportError) as info:
        kernel_sources(descriptor, values)
    assert "\n" not in str(info.value)


def _bodies(cpp: str) -> dict[str, str]:
    """Each `static void` function's text, from its header to its closing brace at column 0."""
    starts = [(m.group(1), m.start()) for m in re.finditer(r"^static void (\w+)\(", cpp, re.MULTILINE)]
    return {name: cpp[start:cpp.index("\n}\n", start)] for name, start in starts}


def test_a_helper_called_from_several_sites_is_one_instance(generated):
    """Ping-pong callers (PEs, double-buffered I/O modules) call their helpers from both branches:
    each such helper is limited to one hardware instance, or HLS may build one per call site (the
    PE's multipliers twice over, which the models do not count)."""
    _, _, sources = generated
    cpp = sources["kernel_kernel.cpp"]
    functions = _functions(cpp)
    shared = 0
    for caller, body in _bodies(cpp).items():
        if "#pragma HLS dataflow" in body:
            continue  # a dataflow region: one instance per call is the array itself
        for callee in functions - {caller}:
            sites = len(re.findall(rf"^\s+{callee}\(", body, re.MULTILINE))
            if sites > 1:
                assert f"#pragma HLS allocation function instances={callee} limit=1" in body, (caller, callee)
                shared += 1
    assert shared > 0  # every design here double-buffers something


def test_a_double_buffered_input_loads_the_next_block_beside_all_tiles_of_this_one():
    """k__i-k.j at 16^3: A[i][k] is one block per i tile, reused over both j tiles. The module's
    loop steps once per block (one load || feed pair each) and the feed helper serves both tiles,
    so the next block's load overlaps all of them (pairs joined per tile held the second tile
    back behind the load: issue 27)."""
    params = {"i_t1": 4, "i_t2": 4, "j_t1": 8, "j_t2": 8, "k_t1": 16}
    descriptor, values, model = _design("mm.c", {"I": "16", "J": "16", "K": "16"}, "k__i-k.j", params)
    bodies = _bodies(kernel_sources(descriptor, values, report=evaluate_configuration(model, params))
                     ["kernel_kernel.cpp"])
    module, feed = bodies["A_L1_in"], bodies["A_L1_in_feed"]
    assert "i_tiles:" in module and "j_tiles:" not in module
    assert "j_tiles:" in feed and "j_tile < 2" in feed
    assert module.count("A_L1_in_feed(") == 2 and "block + 1 < 4" in module
