"""Bayesian-optimisation baseline (Odyssey sec. 5.2.1) through optuna's TPE sampler, driven by its
ask-and-tell interface so that the run (run.py) keeps the loop, the budget and the evaluation.
The sampler is multivariate TPE (one joint model of all parameters), seeded with the strategy's seed.

Parameters. Each array-partitioning factor t1 is an integer in 1..N on a log scale (the same
distribution as `suggest_int(name, 1, N, log=True)`). A second level t2 must divide t1 (and be a
power of two for SIMD), a constraint TPE cannot express, so optuna suggests a free integer in
1..upper (log scale) and it is mapped to the legal value nearest to it on a log scale (ties to the
smaller): the proposed configuration, the one evaluated and reported, holds the mapped value; the
trial keeps the raw suggestion (its distribution) and records the mapped configuration in its
`config` user attribute.

Infeasible configurations. optuna needs finite objective values, so an infeasible configuration
is told a fixed `penalty` (1e30 cycles), above any latency a design can have. TPE only ranks the
values, so the number itself does not matter; a fixed one (rather than, say, 10x the worst feasible
latency seen so far) keeps every infeasible trial ranked below every feasible one, early or late.

Batches. `propose(n)` asks for up to `batch` trials at once (default 4, published as `batch_size`,
which the run asks for); the constant-liar strategy keeps the pending ones apart. TPE's cost per
trial grows with the number of trials (milliseconds each after a hundred), so this baseline is
orders of magnitude slower per sample than the others. optuna is imported only when the strategy is
built.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from engine.search.genome import _divisors
from engine.search.space import Config, LoopGenes, SearchSpace
from engine.search.strategy import SearchStrategy

PENALTY = 1e30  # cycles: what an infeasible configuration is told


def legal_t2(genes: LoopGenes, t1: int) -> tuple[int, ...]:
    """The values t2 may take for this t1, ascending: divisors of t1 up to the bound (powers of two for SIMD)."""
    return tuple(d for d in _divisors(t1) if d <= genes.t2_upper and (not genes.simd or d & (d - 1) == 0))


def nearest_legal_t2(genes: LoopGenes, t1: int, value: int) -> int:
    """The legal t2 closest to `value` on a log scale; ties go to the smaller one."""
    target = math.log(max(value, 1))
    return min(legal_t2(genes, t1), key=lambda d: (abs(math.log(d) - target), d))


class BayesianSearch(SearchStrategy):
    name = "bayes"

    def __init__(self, space: SearchSpace, *, seed: int = 0, batch: int = 4, penalty: float = PENALTY,
                 startup_trials: int = 10):
        super().__init__(space, seed=seed)
        import optuna  # noqa: PLC0415 (a heavy import, only for this baseline)
        from optuna.distributions import IntDistribution  # noqa: PLC0415

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.batch_size, self.penalty = max(1, batch), penalty  # the run asks for batch_size at a time
        self.distributions = {}
        for genes in space.loops:
            self.distributions[genes.t1] = IntDistribution(1, genes.extent, log=True)
            if genes.t2:
                self.distributions[genes.t2] = IntDistribution(1, max(1, genes.t2_upper), log=True)
        with warnings.catch_warnings():  # experimental-feature warnings in some optuna releases
            warnings.simplefilter("ignore")
            # explicit: the defaults differ between optuna releases (both on since 5.0)
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup_trials, multivariate=True,
                                                 constant_liar=True)
            self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.pending: list = []  # trials asked, in the order of the configurations proposed

    def _config(self, params: dict[str, int]) -> Config:
        config: Config = {}
        for genes in self.space.loops:
            t1 = int(params[genes.t1])
            config[genes.t1] = t1
            if genes.t2:
                config[genes.t2] = nearest_legal_t2(genes, t1, int(params[genes.t2]))
        return config

    def propose(self, n: int) -> list[Config]:
        configs = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(max(1, min(n, self.batch_size))):
                trial = self.study.ask(self.distributions)
                config = self._config(trial.params)
                trial.set_user_attr("config", config)
                self.pending.append(trial)
                configs.append(config)
        return configs

    def tell(self, configs: list[Config], fitness: np.ndarray) -> None:
        trials, self.pending = self.pending[:len(configs)], self.pending[len(configs):]
        for trial, value in zip(trials, fitness.tolist()):
            self.study.tell(trial, value if math.isfinite(value) else self.penalty)
