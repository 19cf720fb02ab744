"""Every MM and CNN design and designs of MTTKRP, TTM and TTMc export and pass C simulation against
the golden loop nest (random legal configurations with non-divisor partitioning factors; float,
int16 and int8 spread across the cases). The default suite simulates a stratified subset of the
cases (csim_cases.default_cases), `pytest -m slow` all of them."""
import pytest
from csim_cases import cnn_cases, default_cases, design_cases, mm_cases, params, space_simd_cases, strata

CASES = design_cases()
DEFAULT = default_cases(CASES)


@pytest.fixture(scope="module")
def results(simulated, request):
    return simulated(simulated.selected(request))


def test_the_cases_cover_every_mm_and_cnn_design_and_the_tensor_kernels():
    kernels = [c.kernel for c in CASES]
    # 18 + 9 MM and 30 + 12 CNN designs with SIMD on a space loop (k, i)
    assert len(mm_cases()) == 27 and len(cnn_cases()) == 42
    # SIMD on the space loop with 4 and 8 lanes (random draws mostly give 1 or 2)
    assert {dict(c.params)[("k" if c.kernel == "mm" else "i") + "_t2"] for c in space_simd_cases()} == {4, 8}
    assert {"mttkrp", "ttm", "ttmc"} <= set(kernels)
    assert {dict(c.defines).get("DATA_T") for c in CASES} == {"float", "int16_t", "int8_t"}


def test_the_default_cases_cover_every_stratum():
    """What the slow cases stand for is simulated by default: every kernel, every space loop set,
    array dimension x permutation class and SIMD variant of each kernel, every element type of each
    kernel, every size set and both SIMD lane counts."""
    assert set().union(*map(strata, DEFAULT)) == set().union(*map(strata, CASES))
    assert {("space", "mm", s) for s in ("i", "j", "k", "i-j", "i-k", "j-k")} <= set().union(*map(strata, DEFAULT))
    assert {("type", k, t) for k in ("mm", "cnn") for t in ("float", "int16_t", "int8_t")} \
        <= set().union(*map(strata, DEFAULT))
    assert len(DEFAULT) < len(CASES) / 2


# the cases outside DEFAULT are slow: DEFAULT covers their strata (test_the_default_cases_cover_every_stratum)
@pytest.mark.parametrize("case", params(CASES, DEFAULT))
def test_design_passes_c_simulation(results, case):
    result = results[case.id]
    if isinstance(result, Exception):
        raise result
    assert result.passed, f"{result.summary}\n{result.command}\n{result.log[-2000:]}"
    assert result.summary.startswith("PASS")
