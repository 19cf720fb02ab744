"""AutoSA's four large U250 arrays (MM fp32 13x16x8, MTTKRP and TTMc 16x8x8, MM int8): a floorplan
with every SLR within the cap and every boundary within capacity, and the clock rule placing the
plain build below 250 MHz and the floorplanned one at or above, as the published builds behave
(146 / 184 / 201 / 136 MHz plain, 300 floorplanned). Slow (a minute or two): run with -m slow."""
from __future__ import annotations

import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import select
from engine.floorplan import build_netlist, estimate_clock, floorplan
from engine.models.device import RESOURCE_NAMES, load_device
from engine.models.evaluate import PerformanceModel

# kernel, -D, design (or an AutoSA --sa-sizes string), parameters, cap (MM, MTTKRP and TTMc use more
# than 70% of the DSPs the SLRs offer the kernel: 0.85, AutoBridge's highest per-slot cap in AutoSA's runs)
CONFIGURATIONS = {
    "mm-13x16x8": ("mm", ["I=1040"], "{kernel[]->space_time[3];kernel[]->array_part[260,256,512];"
                   "kernel[]->latency[20,16];kernel[]->simd[8]}", None, 0.85),
    "mttkrp-16x8x8": ("mttkrp", [], "i-j__i-j.k-l",
                      dict(i_t1=128, j_t1=128, k_t1=2, l_t1=64, i_t2=16, j_t2=8, l_t2=8), 0.85),
    "ttmc-16x8x8": ("ttmc", [], "i-j__i-j-k.l-m",
                    dict(i_t1=16, j_t1=64, k_t1=16, l_t1=32, m_t1=128, i_t2=1, j_t2=8, k_t2=8, m_t2=8), 0.85),
    "mm-int8": ("mm", ["DATA_T=int8_t"], "{kernel[]->space_time[3];kernel[]->array_part[264,256,64];"
                "kernel[]->latency[11,32];kernel[]->simd[64]}", None, 0.7),
}


def configuration_netlist(name: str, kernel_path: str):
    """A configuration of CONFIGURATIONS -> (its model, tuning parameters, values with inferred packing,
    descriptor, netlist, device, cap), as the test and bench/bench_floorplan.py floorplan it."""
    _, defines, design, params, cap = CONFIGURATIONS[name]
    space = compile_kernel(kernel_path, defines=defines)
    if params is None:
        chosen = select(space, design)
        design, params = chosen.design, chosen.params
    else:
        design = space.design(design)
    device = load_device()
    model = PerformanceModel(space, design, device)
    packs = model.inferred_packing({k: [v] for k, v in params.items()})
    values = params | {k: int(v[0]) for k, v in packs.items()}
    descriptor = build_descriptor(space, design, model.architecture, model.pass_architectures)
    return model, params, values, descriptor, build_netlist(descriptor, values, device), device, cap


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_floorplan_within_cap_and_clocks_as_published(bundled, name):
    _, _, values, descriptor, net, device, cap = configuration_netlist(name, str(bundled(CONFIGURATIONS[name][0])))
    plan = floorplan(net, device, cap=cap)
    for s in range(len(device.slrs)):
        for r in RESOURCE_NAMES:
            assert plan.used[s][r] <= cap * device.slrs[s].resources[r] + 1e-6
    assert all(b.wires <= b.capacity for b in plan.boundaries)
    clock = estimate_clock(descriptor, values, device, cap=cap, plan=plan, net=net)
    assert clock.unfloorplanned_mhz < 250 <= clock.floorplanned_mhz
