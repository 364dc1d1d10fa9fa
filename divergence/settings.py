"""One settings model for an analysis: roles, slicing, mining, statistics, replication.

Every way in (``scan()``'s keywords, the SQL engines, the command line, a plan file, the
dashboard) builds a :class:`Settings`; it is validated once, here. Each field declares the kind
of value it takes (:class:`Real`, :class:`Integer`, :class:`OneOf` a vocabulary word, :class:`Text`
a column name, :class:`Columns`, :class:`Flag`, :class:`BinSpecs`, ...), and everything else is
derived from the fields: every message ("<name> must be <what the kind takes>"), the plan's
sections (an unknown key is refused by name) and the command line's options (flag, default, help,
how the text is read: :func:`divergence.cli.cli.add_settings`). Dataclasses rather than pydantic:
no new dependency, frozen values that hash and compare.

Checks that need the data (does a column exist, is the target binary) stay where the data
is read (``outcomes``, ``discretize``); these are the checks that need none.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Sequence

from .budget import MAX_SLICES, MAX_WORK, TIME_LIMIT
from .errors import DivergenceInputError, message
from .outcome_rules import REGRESSION, canonical_metric, parse_gamma
from .vocabulary import BINNINGS, CORRECTIONS, DEFAULT_MIN_SUPPORT, FAMILIES, PERIODS, REPLICATION_KINDS

__all__ = [
    "Roles", "Slicing", "Mining", "Statistics", "Replication", "Explain", "Compare", "Settings",
    "check", "check_min_support", "min_count_for", "support_text", "SUPPORT_TOLERANCE", "setting_field", "flat_keys", "DEFAULT_MIN_SUPPORT", "section", "scan_keys",
    "section_keys", "Kind", "Real", "Integer", "OneOf", "Flag", "Text", "Columns", "Names", "Support", "PerMetric",
    "BinSpecs", "Gamma", "MAX_SLICES", "MAX_WORK", "TIME_LIMIT",
]


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


def _fail(msg: str, **kw: Any) -> DivergenceInputError:
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
        return _fail(MSG_SETTING, name=name, takes=(self.takes_type or self.takes) if type_error else self.takes,
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
                raise _fail(MSG_TWICE, name=name, column=v)
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
                raise _fail(MSG_ROW_COUNT, name=name, value=value)
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
            return _fail(MSG_BIN_SPEC, name=name, column=column, value=spec)

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


def _check_fields(obj: Any) -> None:
    """Check and normalise every field of a section by its kind."""
    for f in fields(obj):
        kind = f.metadata.get("kind")
        if kind is not None:
            _set(obj, f.name, kind.check(getattr(obj, f.name), f.metadata.get("label") or f.name))


def check(name: str, value: Any) -> Any:
    """One setting (a flat keyword: ``min_support``, ``binning``) checked and normalised by its
    field's kind: what code below the settings model checks a lone value with."""
    f = setting_field(name)
    return f.metadata["kind"].check(value, f.metadata.get("label") or name)


def check_min_support(value: Any) -> float | int:
    """min_support as a share of the rows (a float in (0, 1]) or, above 1, a row count (an int);
    ``"109/6172"`` reads as the share 109/6172. Anything else is a clear error."""
    return check("min_support", value)


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


def _score(spec: str) -> str:
    from .scores import parse_score  # numpy: loaded only when a score is named

    return parse_score(spec).spec


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


# ----------------------------------------------------------------------------- sections
_COLUMN, _COLUMNS, _FLAG = Text(), Columns(), Flag()


@dataclass(frozen=True)
class Roles:
    """What is measured: the task's columns and metrics (see ``divergence.scan``)."""

    target: str | None = setting(None, _COLUMN, "true label (classification) or true value (regression)")
    prediction: str | None = setting(None, _COLUMN, "predicted label or value")
    score: str | None = setting(None, _COLUMN, "classifier score, predicted positive when score >= --threshold")
    #: None: 0.5 for a score whose values lie in [0, 1], a note saying so; any other score is refused without one
    threshold: float | None = setting(None, Real(optional=True), "score threshold (default: 0.5 for a score within "
                                      "[0, 1], with a note; any other score needs one)")
    positive: Any = setting(None, None, "the positive label of the target (text or number)")
    metrics: tuple[str, ...] = setting((), Names(read=canonical_metric), "comma-separated metrics, e.g. fpr,fnr "
                                       "or abs_error", option="--metric", metavar="METRIC")
    outcome: tuple[str, ...] | None = setting(None, _COLUMNS, "numeric column(s) used as the outcome as they are "
                                              "(comma-separated)")
    rank: str | None = setting(None, _COLUMN, "rank column (1 = best)")
    rank_by: str | None = setting(None, _COLUMN, "score to rank rows by (higher is better unless --ascending)")
    ascending: bool = setting(False, _FLAG, "with --rank-by: lower score is better")
    gamma: str | None = setting(None, Gamma(), "rank value: topk:K, power:A or dcg (default)")
    regression: bool = setting(False, _FLAG, "target and prediction are numbers")
    #: ranking quality per query (divergence.prepare.queries): the query column and the graded relevance
    query: str | None = setting(None, _COLUMN, "ranking quality per query: the query column (with --relevance "
                                "and --rank-by or --rank; --metric ndcg@10,mrr,precision@5)")
    relevance: str | None = setting(None, _COLUMN, "with --query: graded relevance of each row (0 = not relevant)")

    def __post_init__(self) -> None:
        _check_fields(self)

    @property
    def task(self) -> str:
        """classification, regression, ranking or outcome (the first that the roles give)."""
        if self.rank is not None or self.rank_by is not None:
            return "ranking"
        if self.outcome:
            return "outcome"
        if self.regression or (self.metrics and all(m in REGRESSION for m in self.metrics)):
            return "regression"
        return "classification"

    def columns(self) -> list[str]:
        """The columns taken by a role (never attributes), in role order."""
        out: list[str] = []
        for c in (self.target, self.prediction, self.score, *(self.outcome or ()), self.rank, self.rank_by,
                  self.relevance, self.query):
            if c is not None and c not in out:
                out.append(c)
        return out

    def given(self) -> bool:
        """Whether any role is set (else a scan needs ready-made outcomes)."""
        return any(x is not None for x in (self.target, self.prediction, self.outcome, self.rank,
                                           self.rank_by, self.query)) or bool(self.metrics)

    def keywords(self) -> dict:
        """The roles as keywords (``build_outcomes``' and ``scan``'s)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def screen_keywords(self) -> dict:
        """What the default attributes are screened against for leakage
        (:func:`divergence.data.columns.screen_attributes`): an outcome column is checked as a target
        is, a score to rank by as a score; the threshold when the prediction is a score's."""
        single = self.outcome[0] if self.outcome is not None and len(self.outcome) == 1 else None
        return dict(target=self.target if self.target is not None else single, prediction=self.prediction,
                    score=self.score if self.score is not None else (self.rank_by or self.rank),
                    threshold=self.threshold if self.prediction is None and self.score is not None else None)


@dataclass(frozen=True)
class Slicing:
    """Which columns are attributes and how numeric and date columns are binned."""

    attributes: tuple[str, ...] | None = setting(None, _COLUMNS, "comma-separated columns to slice by "
                                                 "(default: all others)")
    bins: Mapping[str, Any] = setting(kind=BinSpecs(), factory=dict, help="explicit bin edges for a numeric "
                                      "column, or COL=month|quarter|year for a date column (repeatable)")
    quantile_bins: int = setting(3, Integer(1), "bins per numeric column (default %(default)s)")
    binning: str = setting("quantile", OneOf(BINNINGS), "how numeric columns are cut: quantile (default), "
                           "uniform, or tree (where the model's outcome changes)")

    def __post_init__(self) -> None:
        _check_fields(self)

    def __hash__(self) -> int:  # bins is a dict
        return hash((self.attributes, tuple(sorted((k, str(v)) for k, v in self.bins.items())),
                     self.quantile_bins, self.binning))


@dataclass(frozen=True)
class Mining:
    """Which itemsets are mined: the support, their length, and the budget."""

    #: a share of the rows in (0, 1], or a row count above 1 (see :func:`divergence.mining.mining.min_count_for`)
    min_support: float | int = setting(DEFAULT_MIN_SUPPORT, Support(), "minimum support: a share of the rows in "
                                       "(0, 1], or a row count above 1 (e.g. 109) (default %(default)s, as in the "
                                       "dashboard)")
    max_length: int | None = setting(None, Integer(1, optional=True),
                                     "most items in a slice")
    exhaustive: bool = setting(False, _FLAG, "list every itemset above the support, as DivExplorer does "
                               "(default: each distinct set of rows once, by its shortest description)")
    max_slices: int = setting(MAX_SLICES, Integer(1), f"budget: at most N slices (default {MAX_SLICES:,}); past it "
                              "the table is complete up to the longest length that fits, and a note says so",
                              metavar="N")
    #: seconds of screening and mining, a safety net (its cut depends on the machine); None: no time limit
    time_limit: float | None = setting(TIME_LIMIT, Real(0, unit="seconds", optional=True, none_word=True,
                                                                cli_zero_none=True),
                                       "a safety net: seconds of screening and mining (default %(default)g; 0 for no limit); a "
                                       "table it cuts depends on the machine's speed and load, and a note says so",
                                       metavar="SECONDS")
    #: units of mining work (counted: the same table on any machine); None: no work budget
    max_work: int | None = setting(MAX_WORK, Integer(1, unit="units of mining work", optional=True,
                                                     none_word=True, cli_zero_none=True),
                                   f"budget: units of mining work (rows x attributes visited; default {MAX_WORK:.0e}; "
                                   "0 for no limit): counted, so the same data and settings give the same table on "
                                   "any machine", metavar="UNITS")

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True)
class Statistics:
    """How slices are judged: δ, confidence, correction and its family, bootstrap."""

    delta: Any = setting(None, PerMetric(), "smallest divergence worth acting on: a number, or M=D,M=D per metric "
                         "(default 0.05 for a rate, 0.2 standard deviations otherwise)")
    # a level people use: from 0.5 (an interval of 1 - 2·0.25 would claim little) to 1 - 1e-9 (closer to 1
    # the quantiles and the corrected levels cannot be told from 1 in floating point)
    confidence: float = setting(0.95, Real(0.5, 1 - 1e-9, low_open=False, high_open=False,
                                          words="a level from 0.5 to 0.999999999"),
                                "confidence level (default %(default)s)")
    correction: str = setting("bh", OneOf(CORRECTIONS), "multiple-testing correction over the slices tested "
                              "(default %(default)s)")
    family: str = setting("metric", OneOf(FAMILIES), "tests corrected together: each metric's slices on their own "
                          "(metric, default) or every slice of every metric (scan)")
    bootstrap: int = setting(0, Integer(0, high=100_000, gap=(1, 19), words="0 (none) or 20 to 100,000 replicates",
                                        type_words="a whole number of replicates"),
                             "bootstrap replicates (0: analytic intervals only)")
    seed: int = setting(0, Integer(0), "random seed for bootstrap and holdout")
    top_k: int | None = setting(None, Integer(1, optional=True),
                                "slices bootstrapped per metric (default: all where cheap)")
    sort_by: str | None = setting(None, _COLUMN, "what orders the summary, the CSV's rows (the whole dataset first) "
                                  "and the top-k slices: a column, or a peer's score of the first metric: "
                                  "sliceline[:ALPHA] (SliceLine, alpha default 0.95), wracc (support x divergence), "
                                  "lift (slice / overall)")
    #: the peers' scores added as columns (``sliceline``, ``sliceline:ALPHA``, ``wracc``, ``lift``;
    #: :mod:`divergence.scores`)
    scores: tuple[str, ...] = setting((), Names(read=_score, unique=True), "add the peers' scores as columns, per "
                                      "metric: sliceline[:ALPHA], wracc, lift (columns M_sliceline, M_wracc, M_ratio)",
                                      metavar="SCORE,...")
    #: the work the search for distinct findings may do per slice and distinct row (None or 0: no
    #: limit; past it the findings found stand and a note says so); default 400
    findings_work: float | None = setting(400.0, Real(0, low_open=False, optional=True, none_at=(0.0,),
                                                      words="a number of 0 or more (0: no limit)"),
                                          "budget of the search for distinct findings, in work units per slice and "
                                          "distinct row (default %(default)g: complete on real tables; 0 for no "
                                          "limit); past it the findings found stand and a note says so",
                                          metavar="UNITS")

    def __post_init__(self) -> None:
        _check_fields(self)

    def delta_for(self, metric: str) -> float | None:
        """δ of one metric (None: the default from the outcome's spread)."""
        if isinstance(self.delta, Mapping):
            return self.delta.get(metric)
        return self.delta

    def __hash__(self) -> int:
        d = tuple(sorted(self.delta.items())) if isinstance(self.delta, Mapping) else self.delta
        return hash((d, self.confidence, self.correction, self.family, self.bootstrap, self.seed,
                     self.top_k, self.sort_by, self.scores, self.findings_work))


_REPLICATION_FIELDS = {"none": (), "split": ("column", "confirm_values"), "file": ("name",),
                       "holdout": ("share",)}


@dataclass(frozen=True)
class Replication:
    """Where slices are re-measured: nothing, a split or period column, a second file, or a
    held-out share of the rows."""

    kind: str = "none"
    column: str | None = setting(None, _COLUMN, label="the split column")
    confirm_values: tuple | None = None
    name: str | None = None
    share: float | None = setting(None, Real(0, 1, what="a share", optional=True), label="holdout")

    def __post_init__(self) -> None:
        if self.kind not in REPLICATION_KINDS:
            raise _fail(MSG_REPLICATION_KIND, value=self.kind, choices=", ".join(REPLICATION_KINDS))
        allowed = _REPLICATION_FIELDS[self.kind]
        for f in ("column", "confirm_values", "name", "share"):
            if getattr(self, f) is not None and f not in allowed:
                raise _fail(MSG_REPLICATION_KEY, kind=self.kind, key=f, known=", ".join(allowed) or "nothing")
        needs = {"holdout": "share", "split": "column"}.get(self.kind)
        if needs is not None and getattr(self, needs) is None:
            raise _fail(MSG_REPLICATION_NEEDS, kind=self.kind, key=needs)
        _check_fields(self)
        values = self.confirm_values
        if values is not None:
            _set(self, "confirm_values", tuple(values) if isinstance(values, (list, tuple)) else (values,))

    def to_dict(self) -> dict:
        """The plan's replication section (empty for none)."""
        if self.kind == "none":
            return {}
        out: dict = {"kind": self.kind}
        for f in _REPLICATION_FIELDS[self.kind]:
            v = getattr(self, f)
            if v is not None:
                out[f] = list(v) if isinstance(v, tuple) else v
        return out


@dataclass(frozen=True)
class Explain:
    """How slices are explained and pruned (the dashboard's redundancy ε)."""

    redundancy: float = setting(0.0, Real(0, low_open=False))

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True)
class Compare:
    """A reference model compared with the model in the roles on the same rows
    (``divergence.compare``); none when neither ``reference`` nor ``reference_score`` is set."""

    reference: str | None = setting(None, _COLUMN, "the reference model's predicted labels or values")
    reference_score: str | None = setting(None, _COLUMN, "the reference model's score")
    reference_threshold: float | None = setting(None, Real(optional=True), "the reference's score threshold")
    metrics: tuple[str, ...] = setting((), Names(read=canonical_metric))

    def __post_init__(self) -> None:
        _check_fields(self)
        if (self.reference_threshold is not None or self.metrics) and not self.enabled:
            raise _fail(MSG_NO_REFERENCE)

    @property
    def enabled(self) -> bool:
        return self.reference is not None or self.reference_score is not None


_SECTIONS = {"roles": Roles, "slicing": Slicing, "mining": Mining, "statistics": Statistics,
             "replication": Replication, "explain": Explain, "compare": Compare}
#: the plan's ``scan`` section holds these three sections' fields, flat
SCAN_SECTIONS = ("roles", "slicing", "mining")


def section(cls: type, base: Any = None, keywords: Mapping[str, Any] | None = None) -> Any:
    """One section (e.g. :class:`Statistics`) from ``base`` (or its defaults) with ``keywords``
    changed, validated; an unknown keyword is refused by name."""
    keywords = dict(keywords or {})
    known = [f.name for f in fields(cls)]
    for key in keywords:
        if key not in known:
            raise _fail(MSG_UNKNOWN_SETTING, key=key, known=", ".join(sorted(known)))
    if base is None:
        return cls(**keywords)
    if not isinstance(base, cls):
        raise DivergenceInputError(f"Expected {cls.__name__} settings; got {type(base).__name__}.")
    checked: Any = base  # a section: a dataclass
    return dataclasses.replace(checked, **keywords) if keywords else base


def section_keys(name: str) -> tuple[str, ...]:
    """The keys a section accepts (its fields, in order)."""
    return tuple(f.name for f in fields(_SECTIONS[name]))


def scan_keys() -> tuple[str, ...]:
    """The keys of a plan's ``scan`` section: roles, slicing and mining settings."""
    return tuple(k for s in SCAN_SECTIONS for k in section_keys(s))


def _owners() -> dict[str, str]:
    """Flat keyword -> the section that holds it (replication is ``holdout``; a comparison's own
    metrics are the roles')."""
    owner = {k: name for name in _SECTIONS if name not in ("replication", "compare") for k in section_keys(name)}
    owner.update({k: "compare" for k in ("reference", "reference_score", "reference_threshold")})
    return owner


def flat_keys() -> tuple[str, ...]:
    """Every flat keyword of :meth:`Settings.from_keywords` (``scan()``'s, the command line's)."""
    return tuple(_owners()) + ("holdout",)


def setting_field(name: str) -> Any:
    """The field behind a flat keyword (its default, kind and help: what the command line offers)."""
    owner = _owners().get(name)
    if owner is None:
        raise _fail(MSG_UNKNOWN_SETTING, key=name, known=", ".join(sorted(flat_keys())))
    return next(f for f in fields(_SECTIONS[owner]) if f.name == name)


def _defaults(cls) -> dict:
    out = {}
    for f in fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            out[f.name] = f.default_factory()  # type: ignore[misc]
    return out


@dataclass(frozen=True)
class Settings:
    """Every setting of an analysis, validated (see the module docstring)."""

    roles: Roles = field(default_factory=Roles)
    slicing: Slicing = field(default_factory=Slicing)
    mining: Mining = field(default_factory=Mining)
    statistics: Statistics = field(default_factory=Statistics)
    replication: Replication = field(default_factory=Replication)
    explain: Explain = field(default_factory=Explain)
    compare: Compare = field(default_factory=Compare)

    @classmethod
    def from_keywords(cls, **kw: Any) -> "Settings":
        """Settings from flat keywords (``scan()``'s); ``holdout=share`` is replication by holdout.
        An unknown keyword is refused by name."""
        kw = dict(kw)
        holdout = kw.pop("holdout", None)
        parts: dict[str, dict] = {name: {} for name in _SECTIONS}
        owner = _owners()
        for key, value in kw.items():
            if key not in owner:
                raise _fail(MSG_UNKNOWN_SETTING, key=key, known=", ".join(sorted(flat_keys())))
            parts[owner[key]][key] = value
        if holdout is not None:
            parts["replication"] = {"kind": "holdout", "share": holdout}
        return cls(**{name: _SECTIONS[name](**values) for name, values in parts.items()})

    @classmethod
    def from_sections(cls, sections: Mapping[str, Any]) -> "Settings":
        """Settings from a plan's sections (``scan``, ``statistics``, ``explain``, ``replication``);
        each section's unknown keys are refused by name."""
        scan = _section(sections, "scan", scan_keys())
        parts: dict[str, dict] = {name: {} for name in _SECTIONS}
        for name in SCAN_SECTIONS:
            parts[name] = {k: v for k, v in scan.items() if k in section_keys(name)}
        parts["statistics"] = _section(sections, "statistics", section_keys("statistics"))
        parts["explain"] = _section(sections, "explain", section_keys("explain"))
        rep = sections.get("replication") or {}
        kind = rep.get("kind", "none") if isinstance(rep, Mapping) else "none"
        rep_keys = ("kind",) + _REPLICATION_FIELDS[kind] if kind in _REPLICATION_FIELDS else section_keys("replication")
        parts["replication"] = _section(sections, "replication", rep_keys)
        parts["compare"] = _section(sections, "compare", section_keys("compare"))
        return cls(**{name: _SECTIONS[name](**values) for name, values in parts.items()})

    @classmethod
    def resolve(cls, settings: "Settings | None", keywords: Mapping[str, Any]) -> "Settings":
        """The settings of a call that takes a ``Settings``, its fields as keywords, or both (the
        keywords change those fields): how ``scan``, ``scan_duckdb`` and ``compare`` read theirs."""
        if settings is None:
            return cls.from_keywords(**keywords)
        if not isinstance(settings, Settings):
            raise DivergenceInputError(f"settings must be a divergence Settings; got {type(settings).__name__}.")
        return settings.replace(**keywords) if keywords else settings

    def keywords(self, *sections: str) -> dict:
        """Flat keywords of the given sections (default roles, slicing, mining, statistics)."""
        out: dict = {}
        for name in sections or ("roles", "slicing", "mining", "statistics"):
            part = getattr(self, name)
            for f in fields(part):
                out[f.name] = getattr(part, f.name)
        return out

    def scan_section(self) -> dict:
        """The plan's ``scan`` section: settings that differ from the defaults, as plain data."""
        out: dict = {}
        for name in SCAN_SECTIONS:
            out.update(_changed(getattr(self, name)))
        return out

    def sections(self) -> dict:
        """The plan's sections (each empty one left out), as plain data."""
        out = {"scan": self.scan_section(), "statistics": _changed(self.statistics),
               "explain": _changed(self.explain), "replication": self.replication.to_dict(),
               "compare": _changed(self.compare)}
        return {k: v for k, v in out.items() if v or k == "scan"}

    def replace(self, **kw: Any) -> "Settings":
        """A copy with some flat keywords changed (validated again)."""
        base = {k: v for k, v in self.keywords().items()}
        base.update(kw)
        new = Settings.from_keywords(**base)
        return dataclasses.replace(new, replication=self.replication if "holdout" not in kw else new.replication,
                                   explain=self.explain, compare=self.compare)


def _section(sections: Mapping[str, Any], name: str, known: Sequence[str]) -> dict:
    value = sections.get(name) or {}
    if not isinstance(value, Mapping):
        raise _fail(MSG_NOT_MAPPING, name=name, value=value)
    for key in value:
        if key not in known:
            raise _fail(MSG_UNKNOWN_KEY, key=key, where=f" in the plan's {name} section",
                        known=", ".join(known))
    return dict(value)


#: settings a plan always writes, default or not: the numbers a reader checks first, and a
#: plan that keeps its meaning if a default changes
ALWAYS_WRITTEN = {"Mining": ("min_support",), "Statistics": ("confidence", "correction", "family", "bootstrap", "seed")}


def _changed(part: Any) -> dict:
    """The fields of a section that differ from its defaults (and those always written), as
    plain data."""
    defaults = _defaults(type(part))
    always = ALWAYS_WRITTEN.get(type(part).__name__, ())
    out: dict = {}
    for f in fields(part):
        v = getattr(part, f.name)
        if f.name in defaults and f.name not in always and _same(defaults[f.name], v):
            continue
        out[f.name] = _plain(v)
    return out


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:  # no attributes chosen (None) is not an empty choice
        return a is None and b is None
    if isinstance(a, tuple) or isinstance(b, tuple):
        return list(a or ()) == list(b or ())
    return a == b


def _plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x
