"""Method names -> strategy classes: the one place the CLI, the GUI and the studies look them up."""
from __future__ import annotations

from engine.errors import EngineError
from engine.search.annealing import SimulatedAnnealing
from engine.search.bayes import BayesianSearch
from engine.search.evolution import EvolutionarySearch, HybridSearch
from engine.search.exhaustive import ExhaustiveSearch
from engine.search.mathematical_programming import MPSearch
from engine.search.random_search import RandomSearch

METHODS = {
    "hybrid": HybridSearch,
    "evolution": EvolutionarySearch,
    "mp": MPSearch,
    "random": RandomSearch,
    "exhaustive": ExhaustiveSearch,
    "annealing": SimulatedAnnealing,
    "bayes": BayesianSearch,
}


def strategy_class(method: str):
    try:
        return METHODS[method]
    except KeyError:
        raise EngineError(f"unknown search method '{method}' (known: {', '.join(METHODS)})") from None
