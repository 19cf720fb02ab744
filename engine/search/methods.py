"""Method names -> strategy classes: the one place the CLI, the GUI and the studies look them up.
A class's module is imported when the class is first asked for (the window lists the names before
it paints; the strategies import numba and pyomo)."""
from __future__ import annotations

from importlib import import_module

from engine.errors import EngineError

METHODS = {  # name -> (module, class)
    "hybrid": ("engine.search.evolution", "HybridSearch"),
    "evolution": ("engine.search.evolution", "EvolutionarySearch"),
    "mp": ("engine.search.mathematical_programming", "MPSearch"),
    "random": ("engine.search.random_search", "RandomSearch"),
    "exhaustive": ("engine.search.exhaustive", "ExhaustiveSearch"),
    "annealing": ("engine.search.annealing", "SimulatedAnnealing"),
    "bayes": ("engine.search.bayes", "BayesianSearch"),
}


def strategy_class(method: str):
    try:
        module, name = METHODS[method]
    except KeyError:
        raise EngineError(f"unknown search method '{method}' (known: {', '.join(METHODS)})") from None
    return getattr(import_module(module), name)
