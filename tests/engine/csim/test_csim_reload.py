"""Designs that revisit an output block (a reduction tile loop outside one that changes the block:
MM <[i,k],j>-type, CNN <[o,i,p,q],[h,w]>) at configurations with more than one reduction tile: the
export runs sequential passes (engine/compiler/architecture/passes.py), reads partial results back
through the descriptor's reload modules and writes whole words; it never reads DRAM where it writes
it (no read-modify-write of the written array), and every such design passes C simulation."""
from __future__ import annotations

import functools
import re
from dataclasses import replace

import pytest
from csim_cases import Case, _space, cnn_cases, configuration, mm_cases

from engine.compiler.architecture.passes import descriptor_passes, descriptor_tiles
from engine.compiler.architecture.build import build_architecture
from engine.compiler.descriptor import build_descriptor


def _descriptor(case: Case) -> dict:
    return _design_descriptor(case.kernel, case.defines, case.design)


@functools.cache  # asked twice per reload case while the module is collected (_reloads, _with_passes)
def _design_descriptor(kernel: str, defines, design_id: str) -> dict:
    space = _space(kernel, defines)
    design = space.design(design_id)
    return build_descriptor(space, design, build_architecture(space, design))


def _reloads(case: Case) -> bool:
    acc = next(g for g in _descriptor(case)["io_groups"] if g["kind"] == "acc")
    return acc["reload_events"] != "0"


def _with_passes(case: Case) -> Case:
    """The case at a seed whose configuration has more than one reduction tile among the pass loops."""
    descriptor = _descriptor(case)
    passes = descriptor_passes(descriptor)
    for seed in range(case.seed, case.seed + 200):
        candidate = replace(case, seed=seed)
        if passes.active(descriptor_tiles(descriptor, configuration(candidate))):
            return candidate
    raise AssertionError(f"no configuration of {case.id} revisits an output block")


RELOAD_MM = tuple(_with_passes(c) for c in mm_cases() if _reloads(c))
RELOAD_CNN = tuple(_with_passes(c) for c in cnn_cases() if c.design in ("o-h__o-i-p-q.h-w", "o-i__h-w-i-p-q.o"))
CASES = RELOAD_MM + RELOAD_CNN


def test_every_mm_design_that_reloads_is_covered():
    assert len(RELOAD_MM) == 18  # 12, and the 6 SIMD-on-k variants of the k-space ones


@pytest.fixture(scope="module")
def results(simulated):
    """The same exports and simulations as test_csim_designs.py's (every reload case is one of its
    cases: simulated once a session, conftest.py)."""
    return simulated(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reload_design_passes_c_simulation(results, case):
    result = results[case.id]
    if isinstance(result, Exception):
        raise result
    assert result.passed, f"{result.summary}\n{result.command}\n{result.log[-2000:]}"


def _functions(source: str) -> dict[str, tuple[str, str]]:
    """name -> (parameter list, body) of every top-level function of a generated kernel."""
    out = {}
    for m in re.finditer(r"^(?:static void|extern \"C\" void) (\w+)\((.*)\) \{$", source, re.MULTILINE):
        depth, k = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(source[k], 0)
            k += 1
        out[m.group(1)] = (m.group(2), source[m.end():k])
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_no_read_modify_write_of_the_written_array(simulated, case):
    """The written array's DRAM port is read only by the reload loader (a `const` pointer) and written
    only by the storer, which reads nothing from it; the region runs once per pass."""
    project = simulated.project(case)
    source = (project / "src" / "kernel_kernel.cpp").read_text()
    array = next(g for g in _descriptor(case)["io_groups"] if g["kind"] == "acc")["array"]
    word = f"{array}_word"
    readers, writers = [], []
    for name, (params, body) in _functions(source).items():
        if re.search(rf"\bconst {word} \*{array}\b", params):
            readers.append(name)
            assert not re.search(rf"\b{array}\[[^\]]*\]\s*=[^=]", body), name
        elif re.search(rf"\b{word} \*{array}\b", params) and name not in ("kernel0", "kernel0_pass"):
            writers.append(name)
            assert not re.search(rf"=\s*{array}\[", body), f"{name} reads the port it writes"
            assert re.search(rf"\b{array}\[[^\]]*\]\s*=[^=]", body), name
    assert readers and writers and not set(readers) & set(writers)
    assert "kernel0_pass" in source and "#pragma HLS dataflow" in _functions(source)["kernel0_pass"][1]
    assert "#pragma HLS dataflow" not in _functions(source)["kernel0"][1]
