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
from csim_cases import Case, _space, cnn_cases, configuration, default_cases, design_cases, mm_cases, params, strata

from engine.compiler.architecture.passes import descriptor_passes, descriptor_tiles
from engine.compiler.architecture.build import build_architecture
from engine.compiler.descriptor import build_descriptor


@functools.cache
def _descriptor(case: Case) -> dict:
    space = _space(case.kernel, case.defines)
    design = space.design(case.design)
    return build_descriptor(space, design, build_architecture(space, design))


def _reloads(case: Case) -> bool:
    """The design reads its partial results back (the architecture's output group reloads): what the
    descriptor's acc group states as reload_events, without building the descriptor while collecting."""
    space = _space(case.kernel, case.defines)
    acc = next(g for g in build_architecture(space, space.design(case.design)).groups if g.kind != "in")
    return str(acc.reloads) != "0"


@functools.cache
def _with_passes(case: Case) -> Case:
    """The case at a seed whose configuration has more than one reduction tile among the pass loops
    (asked when a test runs, not while collecting)."""
    descriptor = _descriptor(case)
    passes = descriptor_passes(descriptor)
    for seed in range(case.seed, case.seed + 200):
        candidate = replace(case, seed=seed)
        if passes.active(descriptor_tiles(descriptor, configuration(candidate))):
            return candidate
    raise AssertionError(f"no configuration of {case.id} revisits an output block")


RELOAD_MM = tuple(c for c in mm_cases() if _reloads(c))
RELOAD_CNN = tuple(c for c in cnn_cases() if c.design in ("o-h__o-i-p-q.h-w", "o-i__h-w-i-p-q.o"))
CASES = RELOAD_MM + RELOAD_CNN
# the default suite: every space loop set, array shape and permutation class, SIMD variant and element
# type of the reload designs (csim_cases.strata), preferring cases test_csim_designs simulates anyway
DEFAULT = default_cases(CASES, prefer=default_cases(design_cases()))


def test_every_mm_design_that_reloads_is_covered():
    assert len(RELOAD_MM) == 18  # 12, and the 6 SIMD-on-k variants of the k-space ones
    assert all(_reloads(c) for c in RELOAD_CNN)
    assert set().union(*map(strata, DEFAULT)) == set().union(*map(strata, CASES)) and len(DEFAULT) < len(CASES) / 2


@pytest.fixture(scope="module")
def results(simulated, request):
    """The same exports and simulations as test_csim_designs.py's (every reload case is one of its
    cases: simulated once a session, conftest.py), of the cases this session runs."""
    chosen = simulated.selected(request)
    done = simulated([_with_passes(c) for c in chosen])
    return {c.id: done[_with_passes(c).id] for c in chosen}


# the cases outside DEFAULT are slow: DEFAULT covers their strata (test_every_mm_design_that_reloads_is_covered)
@pytest.mark.parametrize("case", params(CASES, DEFAULT))
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


# the cases outside DEFAULT are slow, as above
@pytest.mark.parametrize("case", params(CASES, DEFAULT))
def test_no_read_modify_write_of_the_written_array(results, simulated, case):
    """The written array's DRAM port is read only by the reload loader (a `const` pointer) and written
    only by the storer, which reads nothing from it; the region runs once per pass."""
    project = simulated.project(_with_passes(case))
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
