"""The interface every search strategy implements (after optuna's BaseSampler and TVM's
SearchStrategy): `propose(n)` returns up to n configurations to evaluate, or None when it has
nothing left; `tell(configs, fitness)` gives back their latencies (inf where infeasible). The loop,
the budget, cancellation and reporting belong to the run (run.py), not to the strategy."""
from __future__ import annotations

import random
from abc import ABC, abstractmethod

import numpy as np

from engine.search.space import SearchSpace

Config = dict[str, int]


class SearchStrategy(ABC):
    name = "strategy"

    def __init__(self, space: SearchSpace, *, seed: int = 0):
        self.space = space
        self.seed = seed
        self.rng = random.Random(seed)  # scalar draws: the stdlib generator is far cheaper than numpy's
        self.notes: list[str] = []  # things the user should know (e.g. the MP seed failed)

    @classmethod
    def warm_up(cls) -> None:
        """One-off process start-up (slow imports, compiled kernels), done before any budget starts
        so that the first design searched does not pay for it. Cheap when repeated."""

    def warm_up_for(self, *, time_limit: float, designs: int = 1) -> None:
        """What this run needs of warm_up before its budget starts (the arguments are start's):
        all of it unless a strategy knows better."""
        type(self).warm_up()

    def start(self, *, time_limit: float, designs: int = 1) -> None:
        """Called once before the first proposal, with the time this design has and the number of
        designs that share the run's budget."""

    @abstractmethod
    def propose(self, n: int) -> list[Config] | None:
        ...

    @abstractmethod
    def tell(self, configs: list[Config], fitness: np.ndarray) -> None:
        """fitness = latency in cycles, inf for configurations that break a constraint or the budget."""
