"""Model, cycle simulator and timed C simulation of the exported code, side by side.

    python bench/bench_fidelity.py [--cases test|full|reload|all|designs|searched] [--only TEXT] [--out DIR]
                                   [--layout serialized|natural] [--samples N] [--problems K ...]
    python bench/bench_fidelity.py --config KERNEL DESIGN NAME=VALUE ...   # one case: sizes (upper case:
                                   I=64, DATA_T=int8_t) and tuning parameters (lower case: i_t1=8)

For each case (kernel, design, sizes, configuration) it exports the project, runs the timed C
simulation (`engine.csim.timed.run_timed_csim`: the generated C++ run once, each dataflow process's
trace replayed cycle by cycle), `systolic simulate`'s simulator and the model, and prints their
cycles and the relative differences; the exported code is the referee. The cases are in
tests/engine/csim/fidelity_cases.py: `--cases test` the sample the tests check (float, int16, int8,
non-divisor factors; designs that run sequential passes included), `--cases reload` only those,
`--cases full` device-filling configurations run on a slice of the problem, `--cases designs` every
design of MM and CNN and designs of MTTKRP, TTM and TTMc at test sizes with the random legal
configurations of the C-simulation tests (tests/engine/csim/csim_cases.py), `--cases searched` the
configuration a seeded search (hybrid, --samples per design) finds best for every design of MM at
64^3 and 128^3 and of CNN at two small layers: the configurations a user exports, which tend to sit
where the model is least tested (the corners of the budget, tiny tiles); and a summary line: how many
are within 5%. `--layout` is the export's DRAM layout, charged alike by the three (AXI bursts,
engine/models/dram.py). `--floorplan auto` (default) exports each case with its SLR floorplan (at the
smallest cap that has one when the default cap has none, the export's own rule; unfloorplanned when no cap up to
1 has one): the FIFOs that cross SLRs are deeper and the
timed C simulation and the simulator (`systolic simulate --project`'s reading of design.json) delay
their words by the crossing's pipeline latency, and the model adds the sum of crossing
latencies along the path that sets the design's end (engine/models/crossings.py): column `SLR x` counts
the crossings, `+model` is the model's charge for them and `+sim` what they add to the simulator (its
cycles with them less without; the simulator adds what the timed C simulation adds).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cli.simulate import project_crossings  # noqa: E402
from engine.compiler.design_space import compile_kernel  # noqa: E402
from engine.models.dram import DEFAULT_LAYOUT, LAYOUTS  # noqa: E402
from engine.search.explore import Budget, explore  # noqa: E402
from engine.sim.dram import DramModel  # noqa: E402
from engine.csim.timed import run_timed_csim  # noqa: E402
from engine.export import export_project  # noqa: E402
from engine.floorplan import FloorplanError  # noqa: E402
from engine.models.crossings import crossing_cycles, model_fills  # noqa: E402
from engine.models.device import load_device  # noqa: E402
from engine.models.evaluate import PerformanceModel  # noqa: E402
from engine.models.report import evaluate_configuration  # noqa: E402
from engine.resources import KERNELS  # noqa: E402
from engine.sim.simulate import simulate  # noqa: E402


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # design_strata, which csim_cases reads
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine" / "csim"))
from csim_cases import cnn_cases, configuration, mm_cases, tensor_cases  # noqa: E402
from fidelity_cases import FULL_SIZE, RELOAD, SAMPLE, FidelityCase  # noqa: E402


def every_design() -> tuple[FidelityCase, ...]:
    """The C-simulation tests' cases (every MM and CNN design, tensor kernels) as fidelity cases."""
    return tuple(FidelityCase(c.kernel, c.design, c.defines, tuple(configuration(c).items()))
                 for c in (*mm_cases(), *cnn_cases(), *tensor_cases()))


SEARCHED_SIZES = (("mm", {"I": 64, "J": 64, "K": 64}), ("mm", {"I": 128, "J": 128, "K": 128}),
                  ("cnn", {"O": 16, "I": 16, "H": 14, "W": 14, "P": 3, "Q": 3}),
                  ("cnn", {"O": 32, "I": 16, "H": 28, "W": 28, "P": 3, "Q": 3}))


def searched(samples: int, layout: str, problems: list[int] | None = None) -> tuple[FidelityCase, ...]:
    """Every design's best configuration from a seeded hybrid search of `samples` samples, for the
    problems of SEARCHED_SIZES numbered in `problems` (all if None)."""
    cases = []
    for kernel, sizes in (SEARCHED_SIZES[k] for k in (problems or range(len(SEARCHED_SIZES)))):
        space = compile_kernel(KERNELS / f"{kernel}.c", defines={k: str(v) for k, v in sizes.items()})
        found = explore(space, load_device(), method="hybrid", budget=Budget(samples=samples * len(space.designs)),
                        seed=0, layout=layout)
        cases += [FidelityCase(kernel, r.design, tuple(sizes.items()), tuple(sorted(r.best.params.items())))
                  for r in found.designs if r.best is not None]
    return tuple(cases)


def config_case(words: list[str]) -> FidelityCase:
    """`--config KERNEL DESIGN NAME=VALUE ...` -> the case: upper-case names are the kernel's defines
    (sizes, DATA_T), lower-case ones tuning parameters (integers). ValueError: one line saying what."""
    if len(words) < 3:
        raise ValueError("--config: expected KERNEL DESIGN NAME=VALUE ..., e.g. mm k__i-k.j I=64 J=64 K=64 i_t1=8")
    kernel, design, *pairs = words
    defines, params = [], []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"--config: {pair!r} is not NAME=VALUE")
        if name.isupper() or name == "DATA_T":
            defines.append((name, int(value) if value.lstrip("-").isdigit() else value))
        elif value.lstrip("-").isdigit():
            params.append((name, int(value)))
        else:
            raise ValueError(f"--config: tuning parameter {name} must be an integer, not {value!r}")
    return FidelityCase(kernel, design, tuple(defines), tuple(params))


def run(case: FidelityCase, out: Path, layout: str = DEFAULT_LAYOUT, floorplan: str = "auto") -> dict:
    # --simd-touch-space only adds designs (SIMD on a parallel space loop), so every case's id is found
    space = compile_kernel(KERNELS / f"{case.kernel}.c", defines={k: str(v) for k, v in case.defines},
                           simd_touch_space=True)
    design = space.design(case.design)
    params = dict(case.params)
    device = load_device()
    model = PerformanceModel(space, design, device, layout=layout)
    evaluate_configuration(model, params)  # refuses a broken configuration before the export
    values = {**params, **{k: int(v) for k, v in model.inferred_packing(params).items()}}
    folder = out / case.label.replace(" ", "_")
    try:
        project = export_project(space, design, params, folder, force=True, allow_over_budget=True, layout=layout,
                                 floorplan=floorplan)
    except FloorplanError:  # the export already relaxes to the smallest cap that works: none does up to 1
        project = export_project(space, design, params, folder, force=True, allow_over_budget=True, layout=layout,
                                 floorplan="none")
    design_json = json.loads((project / "design.json").read_text())
    crossing = (design_json.get("floorplan") or {}).get("crossing_fifos", [])
    crossings = project_crossings(design_json)
    charged = crossing_cycles(design_json["descriptor"], values, crossings, model_fills(model, values))
    report = evaluate_configuration(model, params, crossing_cycles=charged)
    start = time.perf_counter()
    timed = run_timed_csim(project)
    csim_seconds = time.perf_counter() - start
    sim = simulate(design_json["descriptor"], values, dram=DramModel(device.dram_ports(layout)),
                   crossings=crossings)
    # what the crossings add to the simulator (which adds what the timed C simulation adds, docs/sim.md)
    uncrossed = simulate(design_json["descriptor"], values, dram=DramModel(device.dram_ports(layout))).cycles \
        if crossings else sim.cycles
    return {"label": case.label, "model": report["latency_cycles"], "sim": sim.cycles, "timed": timed.cycles,
            "passed": timed.passed, "slowest": timed.slowest, "bottleneck": report.get("bottleneck"),
            "csim_s": csim_seconds, "crossings": len(crossing),
            "crossing_cycles": sum(c["latency"] for c in crossing), "model_crossing": charged,
            "sim_crossing": sim.cycles - uncrossed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", choices=["test", "full", "reload", "all", "designs", "searched"], default="test")
    parser.add_argument("--layout", choices=LAYOUTS, default=DEFAULT_LAYOUT)
    parser.add_argument("--samples", type=int, default=3000, help="--cases searched: samples per design")
    parser.add_argument("--problems", type=int, nargs="*", metavar="K",
                        help="--cases searched: only these problems (0: MM 64^3, 1: MM 128^3, 2, 3: CNN layers)")
    parser.add_argument("--config", nargs="+", metavar="WORD",
                        help="one case: KERNEL DESIGN then NAME=VALUE sizes (upper case) and parameters (lower case)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", metavar="TEXT", nargs="+", help="run only the cases whose label contains a TEXT")
    parser.add_argument("--floorplan", choices=["auto", "none"], default="auto",
                        help="export with the SLR floorplan (default; its crossing FIFOs are deeper and the timed "
                             "C simulation charges their pipeline latency) or without")
    args = parser.parse_args()
    if args.config:
        try:
            cases = (config_case(args.config),)
        except ValueError as error:
            parser.exit(2, f"bench_fidelity.py: {error}\n")
    elif args.cases == "searched":
        cases = searched(args.samples, args.layout, args.problems)
    else:
        cases = every_design() if args.cases == "designs" else {
            "test": SAMPLE, "full": FULL_SIZE, "reload": RELOAD, "all": SAMPLE + FULL_SIZE}[args.cases]
    if args.only:
        cases = tuple(c for c in cases if any(text in c.label for text in args.only))
    out = args.out or Path(tempfile.mkdtemp(prefix="fidelity-"))
    print(f"{'case':46} {'model':>11} {'simulated':>11} {'timed csim':>11} {'model/csim':>10} {'sim/csim':>9}  "
          f"{'values':6} {'csim s':>6} {'SLR x':>5} {'+model':>6} {'+sim':>5}  bottleneck (model / csim)")
    within = {"model": 0, "sim": 0}
    misses = []
    for case in cases:
        try:
            r = run(case, out, args.layout, args.floorplan)
        except Exception as error:  # noqa: BLE001 (one failing case must not hide the others' rows)
            print(f"{case.label} {dict(case.params)}: {type(error).__name__}: {error}", flush=True)
            continue
        within["model"] += abs(r["model"] / r["timed"] - 1) <= 0.05
        within["sim"] += abs(r["sim"] / r["timed"] - 1) <= 0.05
        if max(abs(r["model"] / r["timed"] - 1), abs(r["sim"] / r["timed"] - 1)) > 0.05:
            misses.append(case)
        print(f"{r['label']:46} {r['model']:>11,.0f} {r['sim']:>11,} {r['timed']:>11,} "
              f"{r['model'] / r['timed'] - 1:>+10.1%} {r['sim'] / r['timed'] - 1:>+9.1%}  "
              f"{'PASS' if r['passed'] else 'FAIL':6} {r['csim_s']:>6.1f} {r['crossings']:>5} {r['model_crossing']:>6} "
              f"{r['sim_crossing']:>5}  "
              f"{r['bottleneck']} / {r['slowest']}",
              flush=True)
    print(f"\nwithin 5% of the timed C simulation: model {within['model']}/{len(cases)}, "
          f"simulator {within['sim']}/{len(cases)}")
    if misses:  # each outside 5% as a command that runs it alone (searched configurations are found, not listed)
        print("outside 5%, one case each:")
        for case in misses:
            print(f"  python bench/bench_fidelity.py --floorplan {args.floorplan} --layout {args.layout} "
                  f"--config {config_words(case)}")


def project_descriptor(project: Path) -> dict:
    return json.loads((project / "design.json").read_text())["descriptor"]


def config_words(case: FidelityCase) -> str:
    """The case as `--config` words (config_case's inverse)."""
    return " ".join([case.kernel, case.design, *(f"{k}={v}" for k, v in (*case.defines, *case.params))])


if __name__ == "__main__":
    main()
