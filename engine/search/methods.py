"""Method names -> strategy classes: the one place the CLI, the GUI and the studies look them up.

The strategies' modules (numpy, scipy, the MP tuner's pyomo) are imported when a class is first
asked for: the explorer lists the names (METHOD_NAMES) before its first paint."""
from __future__ import annotations

from importlib import import_module

from engine.errors import EngineError

_CLASSES = {
    "hybrid": ("engine.search.evolution", "HybridSearch"),
    "evolution": ("engine.search.evolution", "EvolutionarySearch"),
    "mp": ("engine.search.mathematical_programming", "MPSearch"),
    "random": ("engine.search.random_search", "RandomSearch"),
    "exhaustive": ("engine.search.exhaustive", "ExhaustiveSearch"),
    "annealing": ("engine.search.annealing", "SimulatedAnnealing"),
    "bayes": ("engine.search.bayes", "BayesianSearch"),
}
METHOD_NAMES = tuple(_CLASSES)


def strategy_class(method: str):
    try:
        module, name = _CLASSES[method]
    except KeyError:
        raise EngineError(f"unknown search method '{method}' (known: {', '.join(METHOD_NAMES)})") from None
    return getattr(import_module(module), name)


def __getattr__(name: str):
    if name == "METHODS":  # name -> class, every strategy imported
        return {method: strategy_class(method) for method in METHOD_NAMES}
    raise AttributeError(name)
