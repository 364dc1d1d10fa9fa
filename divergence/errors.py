"""The exception types for bad input, so callers can tell a user's mistake from a bug."""
from __future__ import annotations

__all__ = ["DivergenceInputError", "DivergenceBudgetError", "DivergenceOutputError", "DivergenceTimeLimitWarning",
           "shown", "message"]


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


class DivergenceOutputError(DivergenceInputError):
    """A file could not be written: the target is a folder or a device that cannot take it, the
    disk is full, permission is denied. One line naming the path and the reason (the command
    line exits with status 2), and nothing half-written is left behind."""


class DivergenceTimeLimitWarning(UserWarning):
    """The time limit (a safety net) cut a scan: its table depends on the machine's speed and
    load, unlike a cut by the work or slice budget, which gives the same table everywhere."""


#: characters of a user's value shown in a message (a value longer than that is cut, saying so)
SHOWN_CHARS = 80


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters: a message never carries
    a user's value whole (a plan's expanded alias, a megabyte of text, a column of lists)."""
    try:
        text = repr(value) if not isinstance(value, (list, tuple, dict, set)) or _small(value) else \
            f"a {type(value).__name__} of {len(value):,} elements"
    except Exception:  # noqa: BLE001 - a value whose repr fails is still named by its type
        text = f"a {type(value).__name__}"
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} characters)"
    return text


def _small(value: object) -> bool:
    """A container small and shallow enough to print (its repr is then short)."""
    stack, seen = [value], 0
    while stack:
        x = stack.pop()
        seen += 1
        if seen > 64:
            return False
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, set)):
            stack.extend(x)
    return True


def message(template: str, **values: object) -> str:
    """``template.format(**values)`` with every ``!r`` field shown by :func:`shown` (cut when long)."""
    import string

    class _Formatter(string.Formatter):
        def convert_field(self, value: object, conversion: str | None) -> object:
            return shown(value) if conversion == "r" else super().convert_field(value, conversion)

    return _Formatter().format(template, **values)
