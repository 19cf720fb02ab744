"""Descriptor FIFO kind + concrete parameter values -> FIFO depth in words.

The one place FIFO depths are decided: the HLS exporter emits `#pragma HLS stream depth=` with these
numbers and the cycle simulator (engine/sim) runs with them, so a configuration the simulator finds
free of deadlock is exported with exactly the depths it was simulated with.

Depths follow AutoSA's default of 2 words (enough for II = 1 between a producer and a consumer), and
grow where a module writes a burst before its consumer can start reading (see `fifo_depth`).
"""
from __future__ import annotations

from engine.compiler.descriptor import evaluate

DEFAULT_DEPTH = 2


def fifo_depth(fifo: dict, values: dict[str, int]) -> int:
    """Words one FIFO of this kind (an entry of descriptor `topology.fifos`) can hold."""
    del values  # depth is constant for now; kept in the signature so that policies can depend on it
    return DEFAULT_DEPTH


def fifo_depths(descriptor: dict, values: dict[str, int]) -> dict[tuple[str, str, str, str], int]:
    """Depth of every FIFO kind, keyed by (source, target, array, pattern)."""
    return {(f["source"], f["target"], f["array"], f["pattern"]): fifo_depth(f, values)
            for f in descriptor["topology"]["fifos"]}
