"""Design space + device + method -> ExplorationResult: every design (or a chosen subset) tuned with
one method, the total budget split evenly across designs, in this process. The result keeps each
design's best configuration, its trace and the Pareto set of (latency, DSP, BRAM18K) it saw."""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from engine.compiler.design_space import DesignSpace
from engine.errors import EngineError
from engine.models.device import Device
from engine.models.dram import DEFAULT_LAYOUT
from engine.models.evaluate import PerformanceModel
from engine.search.methods import strategy_class
from engine.search.progress import DesignResult, ExplorationResult
from engine.search.run import CHECKPOINT_EVERY, Callback, SearchRun
from engine.search.space import SearchSpace


@dataclass(frozen=True)
class Budget:
    seconds: float | None = None
    samples: int | None = None

    def __post_init__(self):
        if self.seconds is None and self.samples is None:
            raise EngineError("a search needs a budget: --seconds S or --samples N")
        if self.seconds is not None and not (math.isfinite(self.seconds) and self.seconds > 0):
            raise EngineError(f"the search budget must be positive and finite, not {self.seconds} seconds")
        if self.samples is not None and self.samples <= 0:
            raise EngineError(f"the search budget must be positive, not {self.samples} samples")

    def split(self, parts: int) -> "Budget":
        return Budget(self.seconds / parts if self.seconds is not None else None,
                      max(1, self.samples // parts) if self.samples is not None else None)

    def to_json(self) -> dict:
        return {"seconds": self.seconds, "samples": self.samples}


def explore(space: DesignSpace, device: Device, *, method: str = "hybrid", budget: Budget,
            designs: list[str] | None = None, seed: int = 0, callbacks: tuple[Callback, ...] = (),
            cancel_event: threading.Event | None = None, on_design_done=None, on_checkpoint=None,
            checkpoint_every: float = CHECKPOINT_EVERY, layout: str = DEFAULT_LAYOUT,
            clock: str = "device") -> ExplorationResult:
    """`on_design_done(DesignResult)` is called as each design finishes; `on_checkpoint(position,
    DesignResult)` with the design being searched (its position among the chosen ones) and its
    result so far, every few seconds and on new bests (run.py says when): to store a run as it goes.
    `layout`: the DRAM layout the export will use (engine/models/dram.py), which the models charge;
    `clock="estimated"`: each configuration's time at its own estimated clock (SearchSpace)."""
    cls = strategy_class(method)
    chosen = [space.design(d) for d in designs] if designs else list(space.designs)
    share = budget.split(len(chosen))
    cancel_event = cancel_event or threading.Event()
    # each design's SearchRun warms up (imports, compiled kernels) before its clock starts
    results: list[DesignResult] = []
    for n, design in enumerate(chosen):
        if cancel_event.is_set():
            break
        # the budget is sampling time, as in the window's search process (app/workers/search_process.py,
        # whose models come from the model cache): building the model (0.2-0.5 s on MM, more than a
        # design's share of 6 s over 27 designs) is not charged to the design's share
        search_space = SearchSpace(PerformanceModel(space, design, device, layout=layout), clock=clock)
        seconds = share.seconds
        checkpoint = None if on_checkpoint is None else (lambda result, n=n: on_checkpoint(n, result))
        run = SearchRun(search_space, cls(search_space, seed=seed + n), seconds=seconds, samples=share.samples,
                        callbacks=callbacks, cancel_event=cancel_event, checkpoint=checkpoint,
                        checkpoint_every=checkpoint_every, designs=len(chosen))
        result = run.run()
        results.append(result)
        if on_design_done is not None:
            on_design_done(result)
    return ExplorationResult(space.kernel.name, method, seed, tuple(results))


def smallest_design_needs(space: DesignSpace, device: Device) -> str:
    """What the cheapest configuration of any design needs: for 'nothing fits' messages."""
    best = None
    for design in space.designs:
        model = PerformanceModel(space, design, device)
        values = {p.name: p.lower for p in design.params if p.tunable}
        _, used = model.evaluate_resources(values)  # the tuner's compiled function: no full model to compile
        need = (float(used["DSP"]), float(used["BRAM18K"]))
        if best is None or need < best[1]:
            best = (design.id, need)
    return (f"the smallest design ({best[0]}, every factor 1) needs {best[1][0]:.0f} DSP and {best[1][1]:.0f} "
            f"BRAM18K; the device allows {device.budget('DSP'):.0f} DSP and {device.budget('BRAM18K'):.0f} BRAM18K")
