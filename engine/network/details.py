"""A pair's best configuration -> its model report: latency split and module terms, the bottleneck,
DSP, BRAM per array, PEs and MAC lanes and the DSP efficiency (MACs / (lanes x latency)): what the
architecture studies (Odyssey Tables 6-7) put next to the throughput."""
from __future__ import annotations

from engine.compiler.architecture.symbols import symbol
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.network.task import Job, sized_space


def pair_details(job: Job, sizes: dict[str, int], design: str, params: dict[str, int]) -> dict:
    space = sized_space(job, sizes)
    model = PerformanceModel(space, space.design(design), job.load_device())
    report = evaluate_configuration(model, params)
    values = {symbol(k): v for k, v in params.items()}
    arch = model.architecture
    pes = float(arch.module("PE").count.subs(values))
    lanes = float((arch.module("PE").count * arch.simd).subs(values))
    report["pes"] = pes
    report["mac_lanes"] = lanes
    report["macs"] = int(model.symbolic.macs)
    report["dsp_efficiency"] = model.symbolic.macs / (lanes * report["latency_cycles"])
    report["simd"] = model.design.simd_loop
    return report
