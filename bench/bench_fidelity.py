"""Model, cycle simulator and timed C simulation of the exported code, side by side.

    python bench/bench_fidelity.py [--cases test|full] [--out DIR]

For each case (kernel, design, sizes, configuration) it exports the project, runs the timed C
simulation (`engine.csim.timed.run_timed_csim`: the generated C++ run once, each dataflow process's
trace replayed cycle by cycle), `systolic simulate`'s simulator and the model, and prints their
cycles and the relative differences; the exported code is the referee. `--cases test` are small
problems of every kernel (float, int16, int8, non-divisor factors); `--cases full` the device-filling
configurations of issue 13 run on a slice of the problem.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.compiler.design_space import compile_kernel  # noqa: E402
from engine.csim.timed import run_timed_csim  # noqa: E402
from engine.export import export_project  # noqa: E402
from engine.models.device import load_device  # noqa: E402
from engine.models.evaluate import PerformanceModel  # noqa: E402
from engine.models.report import evaluate_configuration  # noqa: E402
from engine.resources import KERNELS  # noqa: E402
from engine.sim.simulate import simulate  # noqa: E402


@dataclass(frozen=True)
class Case:
    kernel: str
    design: str
    defines: dict
    params: dict

    @property
    def label(self) -> str:
        sizes = "x".join(str(v) for k, v in self.defines.items() if k != "DATA_T")
        return f"{self.kernel} {self.design} {sizes} {self.defines.get('DATA_T', 'float')}"


MM64 = {"I": 64, "J": 64, "K": 64}
TEST_CASES = [
    Case("mm", "i-j__i-j.k", MM64, dict(i_t1=16, j_t1=12, k_t1=16, i_t2=4, j_t2=3, k_t2=4)),
    Case("mm", "i-j__i-j.k", {**MM64, "DATA_T": "int8_t"}, dict(i_t1=16, j_t1=16, k_t1=32, i_t2=4, j_t2=4, k_t2=8)),
    Case("mm", "i__i-j.k", {"I": 60, "J": 50, "K": 70}, dict(i_t1=20, j_t1=25, k_t1=14, i_t2=2, j_t2=5, k_t2=2)),
    Case("mm", "k__i-j.k", MM64, dict(i_t1=16, j_t1=16, k_t1=8, i_t2=4, j_t2=4)),
    Case("mm", "j-k__i-j.k", {**MM64, "DATA_T": "int16_t"}, dict(i_t1=16, j_t1=16, k_t1=4, j_t2=4, i_t2=4)),
    Case("cnn", "o-h__o-h-w.i-p-q", {"O": 16, "I": 16, "H": 14, "W": 14, "P": 3, "Q": 3},
         dict(o_t1=8, h_t1=7, w_t1=14, i_t1=16, p_t1=3, q_t1=3, o_t2=2, h_t2=1, w_t2=2, i_t2=4)),
]
FULL_CASES = [
    # issue 13's device-filling MM configuration on a 520x512x1024 slice
    Case("mm", "i-j__i-j.k", {"I": 520, "J": 512, "K": 1024},
         dict(i_t1=260, j_t1=256, k_t1=512, i_t2=20, j_t2=16, k_t2=8)),
]


def run(case: Case, out: Path) -> dict:
    space = compile_kernel(KERNELS / f"{case.kernel}.c", defines={k: str(v) for k, v in case.defines.items()})
    design = space.design(case.design)
    model = PerformanceModel(space, design, load_device())
    report = evaluate_configuration(model, case.params)
    values = {**case.params, **{k: int(v) for k, v in model.inferred_packing(case.params).items()}}
    project = export_project(space, design, case.params, out / case.label.replace(" ", "_"), force=True,
                             allow_over_budget=True)
    start = time.perf_counter()
    timed = run_timed_csim(project)
    csim_seconds = time.perf_counter() - start
    sim = simulate(project_descriptor(project), values)
    return {"label": case.label, "model": report["latency_cycles"], "sim": sim.cycles, "timed": timed.cycles,
            "passed": timed.passed, "slowest": timed.slowest, "bottleneck": report.get("bottleneck"),
            "csim_s": csim_seconds}


def project_descriptor(project: Path) -> dict:
    import json
    return json.loads((project / "design.json").read_text())["descriptor"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", choices=["test", "full", "all"], default="test")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cases = {"test": TEST_CASES, "full": FULL_CASES, "all": TEST_CASES + FULL_CASES}[args.cases]
    out = args.out or Path(tempfile.mkdtemp(prefix="fidelity-"))
    print(f"{'case':46} {'model':>11} {'simulated':>11} {'timed csim':>11} {'model/csim':>10} {'sim/csim':>9}  "
          f"{'values':6} {'csim s':>6}  bottleneck (model / csim)")
    for case in cases:
        r = run(case, out)
        print(f"{r['label']:46} {r['model']:>11,.0f} {r['sim']:>11,} {r['timed']:>11,} "
              f"{r['model'] / r['timed'] - 1:>+10.1%} {r['sim'] / r['timed'] - 1:>+9.1%}  "
              f"{'PASS' if r['passed'] else 'FAIL':6} {r['csim_s']:>6.1f}  {r['bottleneck']} / {r['slowest']}",
              flush=True)


if __name__ == "__main__":
    main()
