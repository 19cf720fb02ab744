"""Descriptor FIFO kind + concrete parameter values -> FIFO depth in words.

The one place FIFO depths are decided: the HLS exporter emits `#pragma HLS stream depth=` with these
numbers and the cycle simulator (engine/sim) runs with them, so a configuration the simulator finds
free of deadlock is exported with exactly the depths it was simulated with.

Every FIFO holds AutoSA's default of 2 words, enough for II = 1 between a producer and a consumer:
the model-accuracy study (engine/studies/model_accuracy.py) simulated every MM 64^3 and CNN
16^4x3x3 design with these depths and found no deadlock and no throttling FIFO. A pattern that needs
more would get its own rule here, and both the exporter and the simulator would follow it.
"""
from __future__ import annotations

DEFAULT_DEPTH = 2


def fifo_depth(fifo: dict, values: dict[str, int]) -> int:
    """Words one FIFO of this kind (an entry of descriptor `topology.fifos`) can hold."""
    del values  # depth is constant for now; kept in the signature so that policies can depend on it
    return DEFAULT_DEPTH


def fifo_depths(descriptor: dict, values: dict[str, int]) -> dict[tuple[str, str, str, str], int]:
    """Depth of every FIFO kind, keyed by (source, target, array, pattern)."""
    return {(f["source"], f["target"], f["array"], f["pattern"]): fifo_depth(f, values)
            for f in descriptor["topology"]["fifos"]}
