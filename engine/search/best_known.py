"""SearchSpace -> the fingerprint of its models, which stamps entries of the best-known table
(bench/best_known.json), so an entry found with another version of the models is not compared."""
from __future__ import annotations

import hashlib

from engine.search.space import SearchSpace


def fingerprint(search: SearchSpace) -> str:
    s = search.model.symbolic
    text = "|".join(str(e) for e in (s.latency, s.resources["DSP"], s.resources["BRAM18K"]))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
