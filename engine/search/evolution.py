"""Evolutionary search with the Odyssey hybrid mutation (sec. 4.1); `HybridSearch` seeds its first
population with the mathematical-programming solution (sec. 4.2), as Odyssey's tuner does.

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


NODE_LIMITED_MP_SECONDS = 30.0  # a safety bound on a node-limited MP seed (the nodes end it first)


class HybridSearch(EvolutionarySearch):
    """MP-seeded evolutionary search: the solver's answer joins the first generation."""

    name = "hybrid"

    def __init__(self, space: SearchSpace, *, seed: int = 0, mp_share: float = 0.1, mp_floor: float = 0.2,
                 mp_limit: float = 2.0, mp_nodes: int | None = None, **kw):
        """`mp_nodes`: bound SCIP by branch-and-bound nodes (30 s at most) instead of by time, so that
        the seed, hence a sample-budget run, is the same on any machine at any load."""
        super().__init__(space, seed=seed, **kw)
        self.mp_share, self.mp_floor, self.mp_limit = mp_share, mp_floor, mp_limit
        self.mp_nodes = mp_nodes

    @classmethod
    def warm_up(cls) -> None:
        warm_up_mp()

    def start(self, *, time_limit: float) -> None:
        # SCIP needs ~0.2 s to seed most MM designs (0.1 s: 7 of 18, 0.2 s: 15, 0.5 s: 18); beyond
        # that the seed (it minimises traffic - DSP, not latency) is worth less than search time;
        # never more than half of a short budget
        limit = min(self.mp_limit, max(self.mp_floor, self.mp_share * time_limit), 0.5 * time_limit)
        if self.mp_nodes is not None:
            result = solve_mp(self.space, objective="obj3", time_limit=NODE_LIMITED_MP_SECONDS, node_limit=self.mp_nodes)
        else:
            result = solve_mp(self.space, objective="obj3", time_limit=limit)
        if result.config is None:
            self.notes.append(f"MP seed: {result.message}; continuing unseeded")
        else:
            self.pending = self.genome.from_configs([result.config])
            self.notes.append(f"MP seed: {result.message}")
