"""Studies of the Odyssey paper's claims (sec. 1, 4.2, 5.2, 6): each runs searches on a kernel's designs
and writes `<name>.csv`, `<name>.png` and `summary.txt` (the measured numbers next to the paper's) into
an output folder. `STUDIES` is what `systolic study NAME` offers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engine.studies.latency_model import run_latency_model
from engine.studies.methods import DEFAULT_METHODS, run_methods
from engine.studies.model_accuracy import run_model_accuracy
from engine.studies.mp_vs_hybrid import run_mp_vs_hybrid
from engine.studies.mm_architectures import run_mm_architectures
from engine.studies.mutation import run_mutation
from engine.studies.networks import run_networks
from engine.studies.traffic_pruning import run_traffic_pruning
from engine.studies.vgg16_conv12 import run_vgg16_conv12

MM_DESIGNS = 27  # mm.c's designs: 18 with SIMD on a time loop, 9 with SIMD on the space loop k
MODEL_SECONDS = 0.3  # building one design's model (before its runs; not charged to them)
SIMULATION_SECONDS = 1.5  # model-accuracy: one configuration on the cycle-level simulator, MM 64^3 / CNN 16^4
PAIR_WORKERS = 2  # the network studies' local Dask workers


@dataclass(frozen=True)
class Study:
    name: str
    run: Callable
    seconds: float  # default budget per design per method (per pair for the network studies)
    runs: int  # searches per design and seed (for time estimates)
    what: str
    kind: str = "search"  # how its time grows: "search" (designs x runs x seconds x seeds), "simulate"
    #                       (designs x configurations x seeds), "pairs" (layers x designs x seconds / workers)
    default_designs: int = MM_DESIGNS  # the designs (or pairs' designs) of its default problem
    layers: int = 1  # "pairs": the distinct layers searched

    def estimate(self, *, designs: int | None = None, seconds: float | None = None, samples: int | None = None,
                 seeds: int = 1, runs: int | None = None) -> str:
        """How long a run with these options takes, in words ("about 2.7 min"), from the options given
        (defaults where None); a budget in samples only cannot be timed in advance."""
        designs = designs or self.default_designs
        runs = runs or self.runs
        if self.kind == "simulate":
            configurations = samples or 5
            total = designs * configurations * seeds * SIMULATION_SECONDS
            what = f"{designs} designs x {configurations} simulated configurations x {seeds} seed(s)"
        else:
            if seconds is None and samples is not None:
                return f"a budget of {samples:,} samples per run: its time depends on the machine"
            seconds = self.seconds if seconds is None else seconds
            if self.kind == "pairs":
                total = self.layers * designs * seconds / PAIR_WORKERS
                what = f"{self.layers} layers x {designs} designs x {seconds:g} s on {PAIR_WORKERS} workers"
            else:
                total = designs * (runs * seconds * seeds + MODEL_SECONDS)
                what = f"{designs} designs x {runs} runs x {seconds:g} s x {seeds} seed(s)"
        return f"{what}: about {total / 60:.1f} min" if total >= 60 else f"{what}: about {total:.0f} s"

    def help_duration(self) -> str:
        return self.estimate()


STUDIES = {s.name: s for s in (
    Study("methods", run_methods, 1.0, len(DEFAULT_METHODS),
          "(a) every tuning method on every design, normalised to the best known (Figs. 7-9)"),
    Study("mutation", run_mutation, 2.0, 3, "(b) divisor-only vs hybrid mutation (Table 3, Fig. 15): paper 39% loss"),
    Study("latency-model", run_latency_model, 2.0, 2,
          "(c) max(compute, communication) model vs full model (Limitation 2): paper 9% loss"),
    Study("traffic-pruning", run_traffic_pruning, 2.0, 3,
          "(d) pruning to the lowest off-chip traffic (Limitation 3): paper 45% loss"),
    Study("mp-vs-hybrid", run_mp_vs_hybrid, 2.0, 4, "(e) MP alone vs hybrid (Table 4): paper 1.5x slower"),
    Study("model-accuracy", run_model_accuracy, 0.0, 5,
          "(f) latency model vs cycle-level simulation, MM 64^3 + CNN 16^4x3x3 (Table 5, Fig. 6): paper 1.99%",
          kind="simulate", default_designs=48),
    Study("mm-architectures", run_mm_architectures, 2.0, 1,
          "(g) which MM design wins and why: loop orderings' BRAM per I/O module (Fig. 10, Table 6)"),
    Study("vgg16-conv12", run_vgg16_conv12, 2.0, 1,
          "(h) every CNN design on VGG16 CONV1 and CONV2, [h,i] vs [o,h] in detail (Fig. 11, Table 7)",
          kind="pairs", default_designs=42, layers=2),
    Study("networks", run_networks, 1.0, 1,
          "(i) dataflows over VGG16 and ResNet50, on Dask (Figs. 13-14): paper 77% / 57% of the per-layer peak",
          kind="pairs", default_designs=14, layers=29),
)}
