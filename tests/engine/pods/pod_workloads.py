"""Random multi-pod workloads built in code: chains of GEMMs with convolution halos, attention-like
layers whose stationary operand is another layer's output, and occasional branches."""
from __future__ import annotations

import random

from engine.pods.workload import CodeLayer, workload_from_layers


def random_workload(seed: int, *, layers: int = 6, name: str | None = None):
    rng = random.Random(seed)
    out = []
    for index in range(layers):
        tags = []
        if index and rng.random() < 0.25:
            tags.append(f"from:l{rng.randrange(index)}")
        if index > 1 and rng.random() < 0.25:
            tags.append(f"weights-from:l{rng.randrange(index)}")
            if rng.random() < 0.5:
                tags.append(f"heads:{rng.choice((2, 3))}")
        if rng.random() < 0.5:
            p = rng.choice((1, 3))
            sizes = {"i": rng.randint(1, 24), "o": rng.randint(1, 40), "r": rng.randint(1, 8),
                     "c": rng.randint(1, 8), "p": p, "q": p}
        else:
            sizes = {"i": rng.randint(1, 60), "j": rng.randint(1, 40), "k": rng.randint(1, 40)}
        out.append(CodeLayer(f"l{index}", sizes, tuple(tags)))
    return workload_from_layers(name or f"random{seed}", out)
