"""Simulated annealing baseline (Odyssey sec. 5.2.1): the step is the hybrid mutation of the
evolutionary search (genome.mutate), the start temperature is T = 200, as the paper's grid search
chose for scipy's basin-hopping.

Energy. The paper does not say what scale its T applies to, and latencies span orders of magnitude
between problems, so the Metropolis rule works on the normalised energy E = 1000 * ln(latency): a move that makes the design 1% slower costs about 10,
one that doubles the latency about 693. At T = 200 a 10% worse neighbour is accepted with
probability ~0.62 and a 2x worse one with ~0.03; the scale needs no reference latency, so it is the
same on every problem and does not depend on where the walk starts.

Schedule. Geometric cooling, T <- T * r after every told sample, with r chosen so that T falls from
`temperature` to `frozen` in `cycle` samples. When frozen, the walk restarts from the best feasible
configuration seen, at the start temperature again.

Feasibility. An infeasible configuration (fitness inf) is never accepted as the current state once
some feasible one has been seen; before that the walk accepts every step (a random walk) and mixes
fresh random configurations into its proposals, so that it finds the feasible region.

Batches. `propose(n)` returns n neighbours of the current state (one hybrid mutation each, evaluated
together in one batch); `tell` applies the Metropolis rule to them in order, each against the current
state as it stands then, so a batch of one is textbook annealing.
"""
from __future__ import annotations

import math

import numpy as np

from engine.search import genome
from engine.search.space import Config, SearchSpace
from engine.search.strategy import SearchStrategy

ENERGY_SCALE = 1000.0


def energy(latency: float) -> float:
    return ENERGY_SCALE * math.log(max(latency, 1.0))


class SimulatedAnnealing(SearchStrategy):
    name = "annealing"

    def __init__(self, space: SearchSpace, *, seed: int = 0, temperature: float = 200.0, frozen: float = 1.0,
                 cycle: int = 2000, mutation=genome.mutate):
        super().__init__(space, seed=seed)
        if not 0 < frozen < temperature:
            raise ValueError("annealing needs 0 < frozen < temperature")
        self.t0, self.frozen, self.mutation = temperature, frozen, mutation
        self.cooling = (frozen / temperature) ** (1.0 / max(1, cycle))
        self.temperature = temperature
        self.current: Config | None = None
        self.current_energy = math.inf  # inf while the current state is infeasible
        self.best: Config | None = None
        self.best_energy = math.inf
        self.restarts = 0

    def propose(self, n: int) -> list[Config]:
        if self.current is None:
            self.current = genome.random_config(self.space, self.rng)
            return [self.current] + [self._step() for _ in range(n - 1)]
        return [self._step() for _ in range(n)]

    def _step(self) -> Config:
        if self.best is None and self.rng.random() < 0.5:  # still looking for the feasible region
            return genome.random_config(self.space, self.rng)
        return self.mutation(self.space, self.current, self.rng)

    def tell(self, configs: list[Config], fitness: np.ndarray) -> None:
        for config, latency in zip(configs, fitness.tolist()):
            if math.isfinite(latency):
                e = energy(latency)
                if e < self.best_energy:
                    self.best, self.best_energy = config, e
                worse = e - self.current_energy  # -inf while the current state is infeasible
                if worse <= 0 or self.rng.random() < math.exp(-worse / self.temperature):
                    self.current, self.current_energy = config, e
            elif self.best is None:  # nothing feasible yet: wander
                self.current = config
            self.temperature *= self.cooling
            if self.temperature < self.frozen:
                self.restarts += 1
                self.temperature = self.t0
                if self.best is not None:
                    self.current, self.current_energy = self.best, self.best_energy
