"""Short garbage-collection pauses in the window's process. A full collection walks every object the
process holds (Qt wrappers, compiled kernels, sympy models, plot items) with the GIL held, which is
over 100 ms once a few models are built: a stall of the window, whichever thread happens to trigger
it. Objects that live as long as their kernel (the compiled design space, the designs' models) are
moved to the permanent generation with gc.freeze() once made, so later collections walk only what
is new. A compile freezes what is new after a collection of the young generations only: thawing
and collecting everything (what the window did before) paused the window 250 ms when CNN compiled.
The old kernel's objects are still freed by their reference counts; only cyclic garbage among the
frozen ones stays (a memory cost per compile, traded for no pause)."""
from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """What exists now stays: later collections skip it (cheap, no collection)."""
    gc.freeze()


def freeze_after_young_collection() -> None:
    """Collect the young generations (milliseconds) and freeze what survives."""
    gc.collect(1)
    gc.freeze()
