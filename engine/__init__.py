"""Systolic Studio engine: pure Python, no Qt. Turns C loop nests into systolic-array designs."""
