"""The one exception type for bad input, so callers can tell a user's mistake from a bug."""
from __future__ import annotations

__all__ = ["DivergenceInputError"]


class DivergenceInputError(ValueError):
    """Bad input: a missing column, an unusable value, a parameter out of range.

    The message names the column or value at fault and is meant to be shown to a
    person as it is (the app shows it beside the widget, the command line prints
    it on one line and exits with status 2).
    """
