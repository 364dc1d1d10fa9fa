"""The kinds of value a setting takes, and the messages of a value refused.

Each field of a settings section (:mod:`divergence.fields.sections`) declares the kind of value it
takes (in the manner of scikit-learn's ``_param_validation``): :class:`Real`, :class:`Integer`,
:class:`OneOf` a vocabulary word, :class:`Text` a column name, :class:`Columns`, :class:`Flag`,
:class:`BinSpecs`, ... The kind checks and normalises a value, says in words what it takes (every
message is ``MSG_SETTING`` with those words) and how the command line reads it. Also here: the
support bar's row count (:func:`min_count_for`) and its words (:func:`support_text`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..errors import DivergenceInputError, message
from ..outcome_rules import parse_gamma
from ..vocabulary import PERIODS

__all__ = ["Kind", "Real", "Integer", "OneOf", "Flag", "Text", "Columns", "Names", "Support", "PerMetric", "BinSpecs",
           "Gamma", "setting", "check_fields", "set_field", "input_error", "argparse_type_error", "min_count_for",
           "support_text", "SUPPORT_TOLERANCE", "MSG_SETTING", "MSG_UNKNOWN_KEY", "MSG_UNKNOWN_SETTING", "MSG_NOT_MAPPING",
           "MSG_ROW_COUNT", "MSG_TWICE", "MSG_REPLICATION_KIND", "MSG_REPLICATION_KEY", "MSG_REPLICATION_NEEDS",
           "MSG_NO_REFERENCE", "MSG_BIN_SPEC"]

# ----------------------------------------------------------------------------- messages
#: the one message of a value a setting does not take; ``takes`` comes from the field's kind
MSG_SETTING = "{name} must be {takes}; got {value!r}."
MSG_UNKNOWN_KEY = "Unknown key {key!r}{where}; known keys: {known}."
MSG_UNKNOWN_SETTING = "Unknown setting {key!r}; known settings: {known}."
MSG_NOT_MAPPING = "Section {name!r} of the plan must be a mapping; got {value!r}."
MSG_ROW_COUNT = "{name} above 1 is a row count and must be a whole number; got {value!r}."
MSG_TWICE = "{name} names column '{column}' twice."
MSG_REPLICATION_KIND = "Unknown replication kind {value!r}; choose from {choices}."
MSG_REPLICATION_KEY = "Replication of kind {kind!r} takes no {key!r}; it takes {known}."
MSG_REPLICATION_NEEDS = "Replication of kind {kind!r} needs {key!r}."
MSG_NO_REFERENCE = "The compare section names no reference model (reference or reference_score)."


def input_error(msg: str, **kw: Any) -> DivergenceInputError:
    return DivergenceInputError(message(msg, **kw))  # a user's value is cut when long


# ----------------------------------------------------------------------------- kinds of value
# Each field of a section declares the kind of value it takes (in the manner of scikit-learn's
# ``_param_validation``); the kind checks and normalises a value, says in words what it takes
# (every message is MSG_SETTING with those words) and how the command line reads it.


class Kind:
    """A kind of value a setting takes."""

    #: what the setting takes, in words ("in (0, 1)", "one of bh, bonferroni, holm")
    takes: str = "a value"
    #: what a value of the wrong type is told, when it differs ("a number in (0, 1)")
    takes_type: str | None = None

    def check(self, value: Any, name: str) -> Any:
        """The value normalised, or a :class:`DivergenceInputError` naming the setting."""
        return value

    def fail(self, name: str, value: Any, type_error: bool = False) -> DivergenceInputError:
        return input_error(MSG_SETTING, name=name, takes=(self.takes_type or self.takes) if type_error else self.takes,
                     value=value)

    def cli(self) -> dict:
        """How the command line reads it: ``argparse`` keywords (type, choices, action)."""
        return {}


def _number(value: Any) -> float | None:
    """A real number (not a bool, not NaN), else None."""
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if math.isnan(x) else x


def _cli_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse_type_error(f"expected a number, got {text!r}") from None


def argparse_type_error(text: str) -> Exception:
    """argparse's error of a value it cannot read (imported only when the command line runs)."""
    import argparse

    return argparse.ArgumentTypeError(text)


@dataclass(frozen=True)
class Real(Kind):
    """A real number between bounds; ``none_at``: values that mean "no limit" (None)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = True
    high_open: bool = True
    what: str = "a number"
    unit: str | None = None
    optional: bool = False
    #: the words say that None is taken too
    none_word: bool = False
    none_at: tuple = ()
    words: str | None = None
    #: on the command line, 0 means None (no limit)
    cli_zero_none: bool = False

    @property
    def takes(self) -> str:  # type: ignore[override]
        if self.words:
            return self.words
        if self.low is not None and self.high is not None:
            interval = (f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}")
            text = f"in {interval}" if self.what == "a number" else f"{self.what} in {interval}"
        elif self.low == 0:
            text = "a positive number" if self.low_open else "a number of 0 or more"
        else:
            text = "a finite number"
        if self.unit:
            text += f" of {self.unit}"
        return text + (" (or None)" if self.none_word else "")

    @property
    def takes_type(self) -> str | None:  # type: ignore[override]
        if self.low is not None and self.high is not None and self.what == "a number" and not self.words:
            return f"a number {self.takes}"
        return None

    def _inside(self, x: float) -> bool:
        if not math.isfinite(x):
            return False
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        return not (self.high is not None and (x >= self.high if self.high_open else x > self.high))

    def check(self, value: Any, name: str) -> float | None:
        if value is None and self.optional:
            return None
        x = _number(value)
        if x is None:
            raise self.fail(name, value, type_error=True)
        if x in self.none_at:
            return None
        if not self._inside(x):
            raise self.fail(name, value)
        return x

    def cli(self) -> dict:
        if self.cli_zero_none:
            return {"type": lambda text: None if _cli_float(text) == 0 else _cli_float(text)}
        return {"type": _cli_float}


@dataclass(frozen=True)
class Integer(Kind):
    """A whole number of at least ``low``; ``gap``: whole numbers refused in between."""

    low: int | None = None
    #: the largest whole number taken (None: no bound)
    high: int | None = None
    gap: tuple[int, int] | None = None
    unit: str | None = None
    optional: bool = False
    none_word: bool = False
    words: str | None = None
    type_words: str | None = None
    cli_zero_none: bool = False

    @property
    def takes(self) -> str:  # type: ignore[override]
        if self.words:
            return self.words
        text = {1: "a positive integer", 0: "a non-negative integer"}.get(self.low, "an integer")  # type: ignore[arg-type]
        if self.unit:
            text += f" ({self.unit})"
        return text + (" or None" if self.none_word else "")

    @property
    def takes_type(self) -> str | None:  # type: ignore[override]
        return self.type_words

    def check(self, value: Any, name: str) -> int | None:
        if value is None and self.optional:
            return None
        x = _number(value)
        if x is None or not math.isfinite(x) or x != int(x):
            raise self.fail(name, value, type_error=x is None)
        k = int(x)
        if (self.low is not None and k < self.low) or (self.high is not None and k > self.high) \
                or (self.gap and self.gap[0] <= k <= self.gap[1]):
            raise self.fail(name, value)
        return k

    def cli(self) -> dict:
        def read(text: str) -> int | None:
            x = _cli_float(text)
            if x != int(x):
                raise argparse_type_error(f"expected a whole number, got {text!r}")
            return None if self.cli_zero_none and x == 0 else int(x)

        return {"type": read}


@dataclass(frozen=True)
class OneOf(Kind):
    """One of the vocabulary's words."""

    words: tuple[str, ...] = ()

    @property
    def takes(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(self.words)

    def check(self, value: Any, name: str) -> str:
        if not isinstance(value, str) or value not in self.words:
            raise self.fail(name, value)
        return value

    def cli(self) -> dict:
        return {"choices": self.words}


@dataclass(frozen=True)
class Flag(Kind):
    """True or false (1 and 0 too)."""

    takes = "true or false"

    def check(self, value: Any, name: str) -> bool:
        if isinstance(value, bool):
            return value
        if value in (0, 1) and not isinstance(value, str):
            return bool(value)
        raise self.fail(name, value)

    def cli(self) -> dict:
        return {"action": "store_true"}


@dataclass(frozen=True)
class Text(Kind):
    """Any text (a column name, a sort key); None when not set."""

    takes = "a column name"

    def check(self, value: Any, name: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(name, value)
        return value


def _cli_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


@dataclass(frozen=True)
class Columns(Kind):
    """A list of column names (a single name is a list of one; comma-separated text is not split:
    a column's name may hold a comma), none twice; None when not set."""

    takes = "a list of column names"

    def check(self, value: Any, name: str) -> tuple[str, ...] | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(name, value)
        seen: set = set()
        for v in value:
            if v in seen:
                raise input_error(MSG_TWICE, name=name, column=v)
            seen.add(v)
        return tuple(value)

    def cli(self) -> dict:
        return {"type": _cli_list}


@dataclass(frozen=True)
class Names(Kind):
    """Names from a list or comma-separated text, blanks dropped, each read by ``read``
    (metric names with their aliases resolved; the peers' score specs)."""

    takes = "a list of names"
    read: Any = None
    unique: bool = False

    def check(self, value: Any, name: str) -> tuple[str, ...]:
        if value is None:
            return ()
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(m, str) for m in items):
            raise self.fail(name, value)
        names = tuple(self.read(m) for m in items if m.strip())
        return tuple(dict.fromkeys(names)) if self.unique else names


@dataclass(frozen=True)
class Support(Kind):
    """A share of the rows in (0, 1] or, above 1, a row count; ``"109/6172"`` is a share."""

    takes = "a share of the rows in (0, 1] or a row count above 1"
    takes_type = "a number: a share of the rows in (0, 1] or a row count above 1"

    def check(self, value: Any, name: str) -> float | int:
        s = _number(value)
        if isinstance(value, str) and "/" in value:
            num, _, den = value.partition("/")
            a, b = _number(num.strip()), _number(den.strip())
            s = None if a is None or not b else a / b
        if s is None:
            raise self.fail(name, value, type_error=True)
        if 0.0 < s <= 1.0:
            return s
        if s > 1.0 and math.isfinite(s):
            if s != int(s):
                raise input_error(MSG_ROW_COUNT, name=name, value=value)
            return int(s)
        raise self.fail(name, value)


@dataclass(frozen=True)
class PerMetric(Kind):
    """A positive number, for every metric or per metric (a mapping of metric name to number)."""

    takes = "a positive number"

    def check(self, value: Any, name: str) -> Any:
        if value is None:
            return None
        if isinstance(value, Mapping):
            return {str(k): self.check(v, f"{name} for '{k}'") for k, v in value.items()}
        x = _number(value)
        if x is None or not (x > 0 and math.isfinite(x)):
            raise self.fail(name, value)
        return x

    def cli(self) -> dict:
        return {"type": self.read_text}

    @staticmethod
    def read_text(text: str) -> Any:
        """``0.05`` or ``fpr=0.05,fnr=0.1`` as given on the command line."""
        try:
            if "=" not in text:
                return float(text)
            out = {}
            for part in text.split(","):
                name, _, value = part.partition("=")
                out[name.strip()] = float(value)
            return out
        except ValueError:
            raise argparse_type_error(f"expected a number or METRIC=NUMBER,...; got {text!r}") from None


MSG_BIN_SPEC = ("{name} for '{column}' must be a bin count, a list of edges or a period "
                "(" + ", ".join(PERIODS) + "); got {value!r}.")


@dataclass(frozen=True)
class BinSpecs(Kind):
    """Per column: a bin count (an integer of 1 or more), a list of finite edges, or a period."""

    takes = "a mapping of column name to bins"

    def check(self, value: Any, name: str) -> dict:
        if not isinstance(value, (Mapping, type(None))):
            raise self.fail(name, value)
        return {str(col): self._spec(str(col), spec, name) for col, spec in (value or {}).items()}

    def _spec(self, column: str, spec: Any, name: str) -> Any:
        def bad() -> DivergenceInputError:
            return input_error(MSG_BIN_SPEC, name=name, column=column, value=spec)

        if hasattr(spec, "tolist") and not isinstance(spec, (str, bool)):
            spec = spec.tolist()
        if isinstance(spec, bool):
            raise bad()
        if isinstance(spec, str):
            if spec.lower() in PERIODS:
                return spec.lower()
            raise bad()
        if isinstance(spec, (int, float)):
            if spec == int(spec) and spec >= 1:
                return int(spec)
            raise bad()
        if isinstance(spec, (list, tuple)):
            edges = [_number(e) for e in spec]
            if any(e is None or not math.isfinite(e) for e in edges):
                raise bad()
            return edges
        raise bad()

    def cli(self) -> dict:
        return {"type": self.read_text, "action": "append", "metavar": "COL=e1,e2,..."}

    @staticmethod
    def read_text(spec: str) -> tuple[str, Any]:
        """One ``--bins COL=e1,e2,...`` (or ``COL=quarter``) as (column, spec)."""
        col, sep, edges = spec.rpartition("=")
        if not sep or not col or not edges:
            raise argparse_type_error(f"expected COL=e1,e2,... or COL={'|'.join(PERIODS)}; got {spec!r}")
        if edges.strip() in PERIODS:
            return col, edges.strip()
        try:
            return col, [float(e) for e in edges.split(",") if e.strip()]
        except ValueError:
            raise argparse_type_error(f"{spec!r}: edges must be numbers") from None


@dataclass(frozen=True)
class Gamma(Kind):
    """A ranking's value of a rank: ``topk:K``, ``power:A`` or ``dcg``."""

    takes = "topk:K, power:A or dcg"

    def check(self, value: Any, name: str) -> Any:
        if value is not None:
            parse_gamma(value)
        return value


def setting(default: Any = None, kind: Kind | None = None, help: str = "", *, option: str | None = None,
            factory: Any = None, label: str | None = None, metavar: str | None = None) -> Any:
    """A section's field: its default, the kind of value it takes, and how the command line offers
    it (``option``: the flag, default ``--`` and the name with dashes; ``help``: its text, where
    ``%(default)s`` is the default; ``label``: the name messages use, default the field's)."""
    meta = {"kind": kind or Kind(), "help": help, "option": option, "label": label, "metavar": metavar}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def check_fields(obj: Any) -> None:
    """Check and normalise every field of a section by its kind."""
    for f in fields(obj):
        kind = f.metadata.get("kind")
        if kind is not None:
            set_field(obj, f.name, kind.check(getattr(obj, f.name), f.metadata.get("label") or f.name))


#: a share's row bar ``s·n`` within this relative distance of a whole number k is taken as k:
#: ``109/6172 * 6172`` is 109.00000000000001 in floating point, and the share meant 109 rows
SUPPORT_TOLERANCE = 1e-9


def min_count_for(min_support: float | int, n_rows: int) -> int:
    """Smallest row count a slice needs: ``min_support`` itself when it is a row count (above 1),
    else the smallest count whose support reaches the share, as mlxtend decides (``count >=
    ceil(s·n)`` and ``count / n >= s``) except where floating point alone puts ``s·n`` a hair
    above a whole number k (within :data:`SUPPORT_TOLERANCE`, relative): then k rows, the count the
    share names (mlxtend would ask for k + 1).
    """
    if min_support > 1:
        return int(min_support)
    x = float(min_support) * n_rows
    k = round(x)
    if k >= 1 and abs(x - k) <= SUPPORT_TOLERANCE * k:
        return int(k)
    c = max(1, math.ceil(x))
    while c / n_rows < min_support:
        c += 1
    return c


def support_text(min_support: float | int, n_rows: int) -> str:
    """The support bar as it was given, with the other unit beside it: ``109 rows (1.77% of 6,172)``
    for a row count, ``0.02 (124 rows of 6,172)`` for a share (the words every surface shows)."""
    k = min_count_for(min_support, max(n_rows, 1))
    if min_support > 1:
        share = 100.0 * k / max(n_rows, 1)
        return f"{int(min_support):,} rows ({float(f'{share:.3g}'):g}% of {n_rows:,})"
    return f"{float(min_support):g} ({k:,} rows of {n_rows:,})"


def set_field(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)
