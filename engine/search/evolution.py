"""Evolutionary search with the Odyssey hybrid mutation (sec. 4.1); `HybridSearch` seeds its first
population with the mathematical-programming solution (sec. 4.2), as Odyssey's tuner does, when a
design's budget affords the solve (HybridSearch.start holds the rule).

Each generation picks parents by tournament, crosses pairs over (whole loops at a time) and applies
one to `max_mutations` hybrid mutations per child, all vectorised over the generation
(vector_genome.py); a few random newcomers keep the population diverse. When the best has not
improved for `polish_after` generations, the joint pair-of-loops neighbourhood of the best
(local_search.py) is evaluated, in large slices; after `patience` generations without improvement
the population starts again from random configurations (keeping `survivors` of the best). The
best designs of a kernel sit in a few basins that pair moves cannot leave (MM 1024^3, design
i-j__i-j.k: 98.9% of the best known, where the best needs all three loops changed at once), so
fresh starts, each ending in a chain of polishes, find the best basin far more often than
re-converging around the old best (bench/bench_search.py). Selection keeps the fittest distinct
configurations; infeasible ones have infinite latency and drop out first.
"""
from __future__ import annotations

import numpy as np

from engine.search.local_search import neighbourhood
from engine.search.mathematical_programming import solve_mp
from engine.search.mathematical_programming import warm_up as warm_up_mp
from engine.search.space import Columns, Config, SearchSpace
from engine.search.strategy import SearchStrategy
from engine.search.vector_genome import ALPHA, VectorGenome

POLISH_SLICE = 8192  # neighbourhood rows per batch


class EvolutionarySearch(SearchStrategy):
    name = "evolution"

    def __init__(self, space: SearchSpace, *, seed: int = 0, population: int = 128, children: int = 512,
                 tournament: int = 3, crossover_rate: float = 0.5, max_mutations: int = 3,
                 immigrants: float = 0.05, patience: int = 30, polish_after: int = 2, alpha: float = ALPHA,
                 survivors: int = 0, divisors_only: bool = False, seeds: list[Config] | None = None):
        super().__init__(space, seed=seed)
        self.genome = VectorGenome(space, divisors_only=divisors_only)
        self.np_rng = np.random.default_rng(seed)
        self.size, self.children, self.tournament = population, children, tournament
        self.crossover_rate, self.max_mutations, self.immigrants = crossover_rate, max_mutations, immigrants
        self.patience, self.polish_after, self.alpha, self.survivors = patience, polish_after, alpha, survivors
        self.polished: set[tuple[int, ...]] = set()
        self.queue = np.empty((0, len(space.names)), dtype=np.int64)  # neighbourhood rows not yet proposed
        self.pop = np.empty((0, len(space.names)), dtype=np.int64)
        self.fit = np.empty(0)
        self.pending = self.genome.from_configs(seeds) if seeds else None
        self.best, self.stale = np.inf, 0

    @property
    def batch_size(self) -> int:
        """What the run asks for next: a generation, or a neighbourhood in large slices (evaluating
        costs microseconds a row; each batch costs the run a fixed overhead)."""
        return min(len(self.queue), POLISH_SLICE) if len(self.queue) else self.children

    def _parents(self, n: int) -> np.ndarray:
        picks = self.np_rng.integers(0, len(self.pop), (n, self.tournament))
        return self.pop[picks[np.arange(n), np.argmin(self.fit[picks], axis=1)]]

    def _polish(self) -> np.ndarray | None:
        """The neighbourhood of the best, once per distinct best."""
        if len(self.pop) == 0 or not np.isfinite(self.fit[0]):
            return None
        key = tuple(int(v) for v in self.pop[0])
        if key in self.polished:
            return None
        self.polished.add(key)
        rows = neighbourhood(self.space, self.genome, self.genome.row(self.pop, 0))
        if self.genome.divisors_only:
            rows = rows[np.all((self.genome.extent[None, :] % rows[:, self.genome.t1]) == 0, axis=1)]
        return rows

    def propose(self, n: int) -> Columns:
        rng, g = self.np_rng, self.genome
        if len(self.queue):  # hand out the neighbourhood n rows at a time, so budgets hold
            rows, self.queue = self.queue[:n], self.queue[n:]
            return g.to_columns(rows)
        if len(self.pop) < 2:
            children = g.random(n, rng)
        else:
            children = self._parents(n)
            cross = rng.random(n) < self.crossover_rate
            if cross.any():
                children[cross] = g.crossover(children[cross], self._parents(int(cross.sum())), rng)
            rounds = rng.integers(1, self.max_mutations + 1, n)
            for r in range(1, self.max_mutations + 1):
                again = rounds >= r
                children[again] = g.mutate(children[again], rng, self.alpha)
            fresh = rng.random(n) < self.immigrants
            if fresh.any():
                children[fresh] = g.random(int(fresh.sum()), rng)
        if self.pending is not None:
            children[:len(self.pending)] = self.pending[:n]
            self.pending = None
        return g.to_columns(children)

    def tell(self, configs: Columns, fitness: np.ndarray) -> None:
        children = np.stack([configs[n] for n in self.space.names], axis=1)
        pop = np.vstack([self.pop, children])
        fit = np.concatenate([self.fit, fitness])
        order = np.argsort(fit, kind="stable")
        pop, fit = pop[order], fit[order]
        keep = self.genome.first_occurrences(pop)[:self.size]
        self.pop, self.fit = pop[keep], fit[keep]
        if self.fit[0] < self.best:
            self.best, self.stale = self.fit[0], 0
        else:
            self.stale += 1
        if self.stale >= self.patience:  # converged: start again (from the best few, if any survive)
            self.pop, self.fit, self.stale = self.pop[:self.survivors], self.fit[:self.survivors], 0
            self.best = self.fit[0] if len(self.fit) else np.inf  # a fresh start counts its own progress
        # decided here, so that batch_size already tells the run how much the next batch holds
        if not len(self.queue) and self.stale >= self.polish_after and (rows := self._polish()) is not None:
            self.queue = rows


MP_NODES = 10  # the MP seed's bound: SCIP branch-and-bound nodes, never seconds (see HybridSearch.start)
MP_MIN_SECONDS = 4.0  # a design's share from which its MP seed is solved, however few designs share the run
MP_MIN_RUN_SECONDS = 12.0  # a run's budget from which every design's seed is solved, however many designs share it
MP_MIN_SHARE = 0.5  # ... as long as each design's share is at least this (a seed costs 1-2 s on MM 1024^3)
MP_TIME_SHARE = 0.5  # the seed's safety bound: this share of the design's budget (the nodes end it first)


class HybridSearch(EvolutionarySearch):
    """MP-seeded evolutionary search: the solver's answer joins the first generation."""

    name = "hybrid"

    def __init__(self, space: SearchSpace, *, seed: int = 0, mp_nodes: int = MP_NODES,
                 mp_min_seconds: float = MP_MIN_SECONDS, **kw):
        super().__init__(space, seed=seed, **kw)
        self.mp_nodes, self.mp_min_seconds = mp_nodes, mp_min_seconds

    @classmethod
    def warm_up(cls) -> None:
        warm_up_mp()

    def warm_up_for(self, *, time_limit: float, designs: int = 1) -> None:
        """The MP solver's imports (pyomo, SCIP: seconds of CPU) only for a run that solves a seed
        (see start): a short run over many designs starts sampling without them."""
        if time_limit >= self.mp_threshold(designs, self.mp_min_seconds):
            warm_up_mp()

    @staticmethod
    def mp_threshold(designs: int, lone: float = MP_MIN_SECONDS) -> float:
        """The share of the budget from which a design's MP seed is solved when `designs` share the
        run: `lone` for one design, MP_MIN_RUN_SECONDS / designs for many (the run as a whole pays for
        the seeds), never under MP_MIN_SHARE."""
        return max(min(MP_MIN_SHARE, lone), min(lone, MP_MIN_RUN_SECONDS / max(1, designs)))

    def start(self, *, time_limit: float, designs: int = 1) -> None:
        """The one rule for the MP seed, whoever runs the search (`systolic search`, the window's search
        process, a network pair): SCIP is bounded by `mp_nodes` branch-and-bound nodes, so the seed, hence
        the run, does not depend on the machine's speed or load (a window sharing the CPU with Qt gets
        the seed the command line gets). Ten nodes cost 0.3-1.7 s on MM 1024^3 (presolve and the root
        LP, whatever the node count), more than a design's whole share of a short budget (6 s over 27
        designs: 0.22 s), and such seeds (SCIP minimises traffic - DSP, not latency) are worth less than
        the sampling they displace in a lone design's short run (bench/bench_search.py): a design's seed
        is solved from `mp_threshold(designs)` seconds of its share, so one design needs 4 s, while a
        run over many designs pays for the seeds as a whole from 12 s (18 s over MM's 27 designs, the
        README's first command, seeds each of its 0.67 s shares; 6 s over 27 does not). The note says
        when and why a seed is skipped. `time_limit` * MP_TIME_SHARE stays as a safety bound the nodes
        normally end first."""
        threshold = self.mp_threshold(designs, self.mp_min_seconds)
        if time_limit < threshold:
            run = (f"{MP_MIN_RUN_SECONDS:g} s over {designs} designs, at least {MP_MIN_SHARE:g} s each"
                   if designs > 1 else "one design")
            self.notes.append(f"MP seed: skipped: {time_limit:.2g} s per design is under the {threshold:.2g} s from "
                              f"which the solver step runs ({run}); a seed costs 1-2 s of SCIP, more than the "
                              "sampling it would displace is worth")
            return
        result = solve_mp(self.space, objective="obj3", time_limit=MP_TIME_SHARE * time_limit,
                          node_limit=self.mp_nodes)
        if result.config is None:
            self.notes.append(f"MP seed: {result.message}; continuing unseeded")
        else:
            self.pending = self.genome.from_configs([result.config])
            self.notes.append(f"MP seed: {result.message}")
