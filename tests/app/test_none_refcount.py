"""Importing the application makes None's (and True's, False's) reference count unexhaustible on
Python < 3.12, where PySide6 6.12 drops a reference to None on every call of a method that returns
nothing, and to a bool on calls returning one."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QObject

import app  # noqa: F401 (the import applies the guard)
from app.none_refcount import HEADROOM


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 on")
def test_none_survives_many_void_calls():
    obj = QObject()
    for _ in range(20000):
        obj.setObjectName("x")
        obj.blockSignals(False)
    assert sys.getrefcount(None) > HEADROOM // 2
    assert sys.getrefcount(True) > HEADROOM // 2 and sys.getrefcount(False) > HEADROOM // 2
