"""Short garbage-collection pauses in the window's process. A full collection walks every object the
process holds (Qt wrappers, compiled kernels, sympy models, plot items) with the GIL held, which is
over 100 ms once a few models are built: a stall of the window, whichever thread happens to trigger
it. Objects that live as long as their kernel (the compiled design space, the designs' models) are
moved to the permanent generation with gc.freeze() once made, so later collections walk only what
is new; opening or recompiling a kernel thaws them first, so the old kernel's objects can go."""
from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """What exists now stays: later collections skip it (cheap, no collection)."""
    gc.freeze()


def refreeze_after_collecting() -> None:
    """Thaw, collect what is garbage (one full pause, at a moment the user asked for work) and freeze
    the rest."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
