"""The search's feasibility is the model's `fits` (every resource of the device budget, LUT and FF
included) and the configuration's constraints: one notion of fitting the device."""
import numpy as np

from engine.compiler.design_space import compile_kernel
from engine.models.constraints import feasible_mask
from engine.models.device import RESOURCE_NAMES, load_device
from engine.models.evaluate import PerformanceModel
from engine.models.sampling import random_configuration
from engine.resources import KERNELS
from engine.search.space import SearchSpace


def test_search_feasibility_is_the_models_fits_including_lut_and_ff():
    space = compile_kernel(KERNELS / "mm.c")
    model = PerformanceModel(space, space.design("i-j__i-k.j"), load_device())
    search = SearchSpace(model)
    rng = np.random.default_rng(3)
    # (2,000: with SIMD up to 16 lanes, 400 samples held none within DSP and BRAM that LUT or FF rule out)
    configs = [random_configuration(model.design, rng) for _ in range(2000)]
    batch = search.evaluate(configs)
    columns = {k: np.array([c[k] for c in configs]) for k in search.names}
    full = model.evaluate(columns)
    assert np.array_equal(batch.feasible, feasible_mask(model.design, columns) & full["fits"])
    # the sample has configurations within the DSP and BRAM budgets that only LUT or FF rule out
    dsp_bram_only = (full["DSP"] <= model.device.budget("DSP")) & (full["BRAM18K"] <= model.device.budget("BRAM18K"))
    assert np.any(dsp_bram_only & ~full["fits"]), "no configuration over LUT/FF alone: the test shows nothing"
    assert not np.any(batch.feasible & ~full["fits"])
    assert set(RESOURCE_NAMES) == {"DSP", "BRAM18K", "URAM", "LUT", "FF"}
