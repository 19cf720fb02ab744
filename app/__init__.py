"""Systolic Studio desktop application (PySide6). Qt lives here only; the engine never imports it."""
from app.none_refcount import make_none_immortal

make_none_immortal()
