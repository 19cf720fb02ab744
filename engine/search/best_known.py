"""SearchSpace -> the fingerprint of its models, which stamps entries of the best-known table
(bench/best_known.json), so an entry found with another version of the models is not compared."""
from __future__ import annotations

import hashlib

from engine.search.space import SearchSpace


def fingerprint(search: SearchSpace) -> str:
    s = search.model.symbolic
    # every resource `fits` reads: an entry that no longer fits must not stay the one to beat
    text = "|".join(str(e) for e in (s.latency, *(s.resources[r] for r in ("DSP", "BRAM18K", "URAM", "LUT", "FF"))))
    # and how the packing factors the expressions read are inferred
    text += "|" + "|".join(f"{p.name}:{p.innermost}:{p.upper}:{p.rate}:{p.minimum}:{p.steps}" for p in search.model.packing)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
