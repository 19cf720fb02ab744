"""Keeps the interpreter alive under PySide6 6.12 on Python < 3.12.

There, every call of a Qt method that returns nothing drops a reference to None that it never took,
and methods returning a bool do the same to True / False (the binding treats these objects as
immortal, which they are only from Python 3.12 on). A session makes millions of such calls, the
count reaches zero and the interpreter aborts with "none_dealloc" / "bool_dealloc".
`make_none_immortal()` does what Python 3.12 does: it gives these singletons (and the small
integers, also immortal in 3.12) a reference count no session can use up. Only PySide6 6.12.0 is
published in the package index this project installs from.
"""
from __future__ import annotations

import ctypes
import sys

HEADROOM = 1 << 60


def make_none_immortal() -> None:
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return
    for obj in (None, True, False, Ellipsis, NotImplemented, (), "", *range(-5, 257)):
        refcount = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt is PyObject's first field
        if refcount.value < HEADROOM:
            refcount.value += HEADROOM
