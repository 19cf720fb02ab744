"""Random search baseline: independent samples (t1 log-uniform, legal second levels)."""
from __future__ import annotations

import numpy as np

from engine.search import genome
from engine.search.space import Config
from engine.search.strategy import SearchStrategy


class RandomSearch(SearchStrategy):
    name = "random"

    def propose(self, n: int) -> list[Config]:
        return [genome.random_config(self.space, self.rng) for _ in range(n)]

    def tell(self, configs: list[Config], fitness: np.ndarray) -> None:
        pass
