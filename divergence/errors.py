"""The exception types for bad input, so callers can tell a user's mistake from a bug."""
from __future__ import annotations

__all__ = ["DivergenceInputError", "DivergenceBudgetError"]


class DivergenceInputError(ValueError):
    """Bad input: a missing column, an unusable value, a parameter out of range.

    The message names the column or value at fault and is meant to be shown to a
    person as it is (the app shows it beside the widget, the command line prints
    it on one line and exits with status 2).
    """


class DivergenceBudgetError(DivergenceInputError):
    """A request the budget cannot answer (slices, time or memory): the message says which
    budget, and the remedy (raise the support, limit items per slice, drop attributes, naming
    the columns that drive the count), on one line."""
