"""Systolic Studio desktop application (PySide6). Qt lives here only; the engine never imports it."""
