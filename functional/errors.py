"""Typed errors of the functional layer.  Each names the place in the user's program: the
offending subexpression as text and, when known, where it was built (`file.py:12` for the
Python DSL, `line:col` for parsed text)."""

from __future__ import annotations


class FunctionalError(Exception):
    """Base of every error raised for a bad program or bad input."""

    def __init__(self, message: str, *, where: str | None = None, origin: str | None = None):
        self.message = message
        self.where = where
        self.origin = origin
        super().__init__(self._render())

    def _render(self) -> str:
        prefix = f"{self.origin}: " if self.origin else ""
        place = f"in `{self.where}`: " if self.where else ""
        return f"{prefix}{place}{self.message}"


class NatError(FunctionalError):
    """A size expression that cannot be built or evaluated (division by zero, unbound var)."""


class TypeInferenceError(FunctionalError):
    """An ill-typed program: mismatched types or sizes, undecidable divisibility, ..."""


class ParseError(FunctionalError):
    """Malformed program text given to `parse`."""


class InterpretError(FunctionalError):
    """Inputs that do not match the program's types, or a run-time size violation."""


class DSLError(FunctionalError):
    """A Python value that cannot become part of a program."""


def excerpt(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class StrategyError(FunctionalError):
    """A strategy that failed where the caller required success, or a derivation that does
    not replay."""
