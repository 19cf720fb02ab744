"""Every MM and CNN design and designs of MTTKRP, TTM and TTMc export and pass C simulation against
the golden loop nest (random legal configurations with non-divisor partitioning factors; float,
int16 and int8 spread across the cases)."""
import pytest
from csim_cases import cnn_cases, mm_cases, space_simd_cases, tensor_cases

CASES = (*mm_cases(), *cnn_cases(), *tensor_cases(), *space_simd_cases())


@pytest.fixture(scope="module")
def results(simulated):
    return simulated(CASES)


def test_the_cases_cover_every_mm_and_cnn_design_and_the_tensor_kernels():
    kernels = [c.kernel for c in CASES]
    # 18 + 9 MM and 30 + 12 CNN designs with SIMD on a space loop (k, i)
    assert len(mm_cases()) == 27 and len(cnn_cases()) == 42
    # SIMD on the space loop with 4 and 8 lanes (random draws mostly give 1 or 2)
    assert {dict(c.params)[("k" if c.kernel == "mm" else "i") + "_t2"] for c in space_simd_cases()} == {4, 8}
    assert {"mttkrp", "ttm", "ttmc"} <= set(kernels)
    assert {dict(c.defines).get("DATA_T") for c in CASES} == {"float", "int16_t", "int8_t"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_design_passes_c_simulation(results, case):
    result = results[case.id]
    if isinstance(result, Exception):
        raise result
    assert result.passed, f"{result.summary}\n{result.command}\n{result.log[-2000:]}"
    assert result.summary.startswith("PASS")
