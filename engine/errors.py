"""The engine's one error hierarchy: every bad input becomes an EngineError with a one-line message.

An error knows where it points (file:line:column when the input has a place) and why.
`str(error)` is the line a user sees: `kernel.c:12:5: loop bound is not affine`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""

    def __init__(self, reason: str, location: SourceLocation | None = None):
        super().__init__(reason)
        self.reason = reason
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}" if self.location else self.reason


class KernelError(EngineError):
    """The C kernel cannot be read: missing file, syntax, unsupported construct, missing size."""


class LegalityError(KernelError):
    """The kernel is valid C but cannot be mapped to a systolic array (AutoSA's three conditions)."""


class DesignError(EngineError):
    """A request about designs is wrong: unknown design id, bad parameter value."""
