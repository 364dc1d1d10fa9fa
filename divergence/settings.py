"""One settings model for an analysis: roles, slicing, mining, statistics, replication.

Every way in (``scan()``'s keywords, the SQL engines, the command line, a plan file, the
dashboard) builds a :class:`Settings`; it is validated once, here, with the messages below,
and a plan's sections are derived from its fields (an unknown key is refused by name).
Dataclasses rather than pydantic: no new dependency, frozen values that hash and compare,
and fields that can be listed to derive the plan schema and the CLI's keywords.

Checks that need the data (does a column exist, is the target binary) stay where the data
is read (``outcomes``, ``discretize``); these are the checks that need none.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Sequence

from .budget import MAX_SLICES, MAX_WORK, TIME_LIMIT, check_budget, check_work
from .errors import DivergenceInputError, message
from .outcome_rules import REGRESSION, canonical_metric, parse_gamma
from .vocabulary import BINNINGS, CORRECTIONS, DEFAULT_MIN_SUPPORT, FAMILIES, PERIODS, REPLICATION_KINDS, TASKS

__all__ = [
    "Roles", "Slicing", "Mining", "Statistics", "Replication", "Explain", "Compare", "Settings",
    "check_min_support", "DEFAULT_MIN_SUPPORT", "section", "scan_keys", "section_keys", "TASKS", "CORRECTIONS", "FAMILIES", "REPLICATION_KINDS", "BINNINGS", "PERIODS",
    "MSG_BINNING",
]


# ----------------------------------------------------------------------------- messages
MSG_UNKNOWN_KEY = "Unknown key {key!r}{where}; known keys: {known}."
MSG_UNKNOWN_SETTING = "Unknown setting {key!r}; known settings: {known}."
MSG_NOT_MAPPING = "Section {name!r} of the plan must be a mapping; got {value!r}."
MSG_MIN_SUPPORT_NUMBER = ("min_support must be a number: a share of the rows in (0, 1] or a row count above 1; "
                          "got {value!r}.")
MSG_MIN_SUPPORT_RANGE = ("min_support must be a share of the rows in (0, 1] or a row count above 1; "
                         "got {value!r}.")
MSG_MIN_SUPPORT_ROWS = "min_support above 1 is a row count and must be a whole number; got {value!r}."
MSG_MAX_LENGTH = "max_length must be a positive integer; got {value!r}."
MSG_CONFIDENCE_NUMBER = "confidence must be a number in (0, 1); got {value!r}."
MSG_CONFIDENCE = "confidence must be in (0, 1); got {value!r}."
MSG_CORRECTION = "correction must be one of {choices}; got {value!r}."
MSG_FAMILY = "family must be one of {choices}; got {value!r}."
MSG_BOOTSTRAP_NUMBER = "bootstrap must be a whole number of replicates; got {value!r}."
MSG_BOOTSTRAP = "bootstrap must be 0 (none) or at least 20 replicates; got {value!r}."
MSG_SEED = "seed must be a non-negative integer; got {value!r}."
MSG_DELTA = "delta for '{name}' must be a positive number; got {value!r}."
MSG_DELTA_ALL = "delta must be a positive number; got {value!r}."
MSG_BINS = "bins must be a mapping of column name to bins; got {value!r}."
MSG_HOLDOUT = "holdout must be a share in (0, 1); got {value!r}."
MSG_TOP_K = "top_k must be a positive integer; got {value!r}."
MSG_FINDINGS_WORK = ("findings_work (the distinct-findings search's budget, per slice and distinct row) must be "
                     "a number of 0 or more (0: no limit); got {value!r}.")
MSG_THRESHOLD = "threshold must be a finite number; got {value!r}."
MSG_QUANTILE_BINS = "quantile_bins must be at least 1; got {value!r}."
MSG_BINNING = "binning must be 'quantile', 'uniform' or 'tree'; got {value!r}."
MSG_COLUMN_NAME = "{role} must be a column name; got {value!r}."
MSG_COLUMN_LIST = "{role} must be a list of column names; got {value!r}."
MSG_TWICE = "{role} names column '{column}' twice."
MSG_BINS_SPEC = ("bins for '{column}' must be a bin count, a list of edges or a period "
                 "(month, quarter, year); got {value!r}.")
MSG_REPLICATION_KIND = "Unknown replication kind {value!r}; choose from {choices}."
MSG_REPLICATION_KEY = "Replication of kind {kind!r} takes no {key!r}; it takes {known}."
MSG_REPLICATION_NEEDS = "Replication of kind {kind!r} needs {key!r}."
MSG_REDUNDANCY = "redundancy must be a number of 0 or more; got {value!r}."
MSG_BOOL = "{name} must be true or false; got {value!r}."
MSG_NO_REFERENCE = "The compare section names no reference model (reference or reference_score)."


def _fail(msg: str, **kw: Any) -> DivergenceInputError:
    return DivergenceInputError(message(msg, **kw))  # a user's value is cut when long


# ----------------------------------------------------------------------------- coercion helpers
def check_min_support(value: Any) -> float | int:
    """min_support as a share of the rows (a float in (0, 1]) or, above 1, a row count (an int);
    ``"109/6172"`` reads as the share 109/6172. Anything else is a clear error."""
    if isinstance(value, str) and "/" in value:
        num, _, den = value.partition("/")
        a, b = _number(num.strip(), MSG_MIN_SUPPORT_NUMBER), _number(den.strip(), MSG_MIN_SUPPORT_NUMBER)
        if b == 0:
            raise _fail(MSG_MIN_SUPPORT_NUMBER, value=value)
        value = a / b
    s = _number(value, MSG_MIN_SUPPORT_NUMBER)
    if not (0.0 < s <= 1.0):
        if s > 1.0 and math.isfinite(s):
            if s != int(s):
                raise _fail(MSG_MIN_SUPPORT_ROWS, value=value)
            return int(s)
        raise _fail(MSG_MIN_SUPPORT_RANGE, value=value)
    return s


def _column(value: Any, role: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise _fail(MSG_COLUMN_NAME, role=role, value=value)
    return value


def _columns(value: Any, role: str) -> tuple[str, ...] | None:
    """A list of column names; a single name is a list of one; comma-separated text is not split."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise _fail(MSG_COLUMN_LIST, role=role, value=value)
    seen: set = set()
    for v in value:
        if v in seen:
            raise _fail(MSG_TWICE, role=role, column=v)
        seen.add(v)
    return tuple(value)


def _number(value: Any, msg: str, **kw: Any) -> float:
    if isinstance(value, bool):
        raise _fail(msg, value=value, **kw)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise _fail(msg, value=value, **kw) from None
    if math.isnan(x):
        raise _fail(msg, value=value, **kw)
    return x


def _integer(value: Any, msg: str, **kw: Any) -> int:
    x = _number(value, msg, **kw)
    if not math.isfinite(x) or x != int(x):
        raise _fail(msg, value=value, **kw)
    return int(x)


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise _fail(MSG_BOOL, name=name, value=value)


def _metric_names(value: Any) -> tuple[str, ...]:
    """Metric names from a list or comma-separated text, as the results spell them (aliases
    resolved), blanks dropped."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(m, str) for m in items):
        raise _fail(MSG_COLUMN_LIST, role="metrics", value=value)
    return tuple(canonical_metric(m) for m in items if m.strip())


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


# ----------------------------------------------------------------------------- sections
@dataclass(frozen=True)
class Roles:
    """What is measured: the task's columns and metrics (see ``divergence.scan``)."""

    target: str | None = None
    prediction: str | None = None
    score: str | None = None
    threshold: float = 0.5
    positive: Any = None
    metrics: tuple[str, ...] = ()
    outcome: tuple[str, ...] | None = None
    rank: str | None = None
    rank_by: str | None = None
    ascending: bool = False
    gamma: str | None = None
    regression: bool = False
    #: ranking quality per query (divergence.prepare.queries): the query column and the graded relevance
    query: str | None = None
    relevance: str | None = None

    def __post_init__(self) -> None:
        for name in ("target", "prediction", "score", "rank", "rank_by", "query", "relevance"):
            _set(self, name, _column(getattr(self, name), name))
        _set(self, "outcome", _columns(self.outcome, "outcome"))
        _set(self, "metrics", _metric_names(self.metrics))
        t = _number(self.threshold, MSG_THRESHOLD)
        if not math.isfinite(t):
            raise _fail(MSG_THRESHOLD, value=self.threshold)
        _set(self, "threshold", t)
        _set(self, "ascending", _flag(self.ascending, "ascending"))
        _set(self, "regression", _flag(self.regression, "regression"))
        if self.gamma is not None:
            parse_gamma(self.gamma)

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

    attributes: tuple[str, ...] | None = None
    bins: Mapping[str, Any] = field(default_factory=dict)
    quantile_bins: int = 3
    binning: str = "quantile"

    def __post_init__(self) -> None:
        _set(self, "attributes", _columns(self.attributes, "attributes"))
        if self.bins is None:
            _set(self, "bins", {})
        if not isinstance(self.bins, Mapping):
            raise _fail(MSG_BINS, value=self.bins)
        bins: dict = {}
        for col, spec in self.bins.items():
            bins[str(col)] = _bin_spec(str(col), spec)
        _set(self, "bins", bins)
        q = _integer(self.quantile_bins, MSG_QUANTILE_BINS)
        if q < 1:
            raise _fail(MSG_QUANTILE_BINS, value=self.quantile_bins)
        _set(self, "quantile_bins", q)
        if self.binning not in BINNINGS:
            raise _fail(MSG_BINNING, value=self.binning)

    def __hash__(self) -> int:  # bins is a dict
        return hash((self.attributes, tuple(sorted((k, str(v)) for k, v in self.bins.items())),
                     self.quantile_bins, self.binning))


def _bin_spec(column: str, spec: Any) -> Any:
    """A bin count (int >= 1), a list of finite edges, or a period name."""
    if isinstance(spec, bool):
        raise _fail(MSG_BINS_SPEC, column=column, value=spec)
    if isinstance(spec, str):
        if spec.lower() in PERIODS:
            return spec.lower()
        raise _fail(MSG_BINS_SPEC, column=column, value=spec)
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        if spec == int(spec) and spec >= 1:
            return int(spec)
        raise _fail(MSG_BINS_SPEC, column=column, value=spec)
    if isinstance(spec, (list, tuple)):
        try:
            edges = [float(e) for e in spec]
        except (TypeError, ValueError):
            raise _fail(MSG_BINS_SPEC, column=column, value=spec) from None
        if not all(math.isfinite(e) for e in edges):
            raise _fail(MSG_BINS_SPEC, column=column, value=spec)
        return edges
    if hasattr(spec, "tolist"):
        return _bin_spec(column, spec.tolist())
    raise _fail(MSG_BINS_SPEC, column=column, value=spec)


@dataclass(frozen=True)
class Mining:
    """Which itemsets are mined: the support, their length, and the budget."""

    #: a share of the rows in (0, 1], or a row count above 1 (see :func:`divergence.mining.mining.min_count_for`)
    min_support: float | int = DEFAULT_MIN_SUPPORT
    max_length: int | None = None
    exhaustive: bool = False
    max_slices: int = MAX_SLICES
    #: seconds of mining, a safety net (its cut depends on the machine); None: no time limit
    time_limit: float | None = TIME_LIMIT
    #: units of mining work (counted: the same table on any machine); None: no work budget
    max_work: int | None = MAX_WORK

    def __post_init__(self) -> None:
        _set(self, "min_support", check_min_support(self.min_support))
        if self.max_length is not None:
            k = _integer(self.max_length, MSG_MAX_LENGTH)
            if k < 1:
                raise _fail(MSG_MAX_LENGTH, value=self.max_length)
            _set(self, "max_length", k)
        _set(self, "exhaustive", _flag(self.exhaustive, "exhaustive"))
        max_slices, time_limit = check_budget(self.max_slices, self.time_limit)
        _set(self, "max_slices", max_slices)
        _set(self, "time_limit", time_limit)
        _set(self, "max_work", check_work(self.max_work))


@dataclass(frozen=True)
class Statistics:
    """How slices are judged: δ, confidence, correction and its family, bootstrap."""

    delta: Any = None
    confidence: float = 0.95
    correction: str = "bh"
    family: str = "scan"
    bootstrap: int = 0
    seed: int = 0
    top_k: int | None = None
    sort_by: str | None = None
    #: the peers' scores added as columns (``sliceline``, ``sliceline:ALPHA``, ``wracc``, ``lift``;
    #: :mod:`divergence.scores`)
    scores: tuple[str, ...] = ()
    #: the work the search for distinct findings may do per slice and distinct row (None or 0: no
    #: limit; past it the findings found stand and a note says so); default 400
    findings_work: float | None = 400.0

    def __post_init__(self) -> None:
        from .scores import parse_score

        specs = self.scores.split(",") if isinstance(self.scores, str) else (self.scores or ())
        if not isinstance(specs, (list, tuple)):
            raise _fail(MSG_COLUMN_LIST, role="scores", value=self.scores)
        _set(self, "scores", tuple(dict.fromkeys(parse_score(x).spec for x in specs if str(x).strip())))
        if self.sort_by is not None and not isinstance(self.sort_by, str):
            raise _fail(MSG_COLUMN_NAME, role="sort_by", value=self.sort_by)
        c = _number(self.confidence, MSG_CONFIDENCE_NUMBER)
        if not (0.0 < c < 1.0):
            raise _fail(MSG_CONFIDENCE, value=self.confidence)
        _set(self, "confidence", c)
        if self.correction not in CORRECTIONS:
            raise _fail(MSG_CORRECTION, choices=", ".join(CORRECTIONS), value=self.correction)
        if self.family not in FAMILIES:
            raise _fail(MSG_FAMILY, choices=", ".join(FAMILIES), value=self.family)
        b = _integer(self.bootstrap, MSG_BOOTSTRAP_NUMBER)
        if b < 0 or 0 < b < 20:
            raise _fail(MSG_BOOTSTRAP, value=self.bootstrap)
        _set(self, "bootstrap", b)
        seed = _integer(self.seed, MSG_SEED)
        if seed < 0:
            raise _fail(MSG_SEED, value=self.seed)
        _set(self, "seed", seed)
        if self.top_k is not None:
            k = _integer(self.top_k, MSG_TOP_K)
            if k < 1:
                raise _fail(MSG_TOP_K, value=self.top_k)
            _set(self, "top_k", k)
        if self.findings_work is not None:
            w = _number(self.findings_work, MSG_FINDINGS_WORK)
            if not w >= 0:
                raise _fail(MSG_FINDINGS_WORK, value=self.findings_work)
            _set(self, "findings_work", None if w == 0 or math.isinf(w) else w)
        if self.delta is not None:
            if isinstance(self.delta, Mapping):
                _set(self, "delta", {str(k): _delta(v, str(k)) for k, v in self.delta.items()})
            else:
                _set(self, "delta", _delta(self.delta, None))

    def delta_for(self, metric: str) -> float | None:
        """δ of one metric (None: the default from the outcome's spread)."""
        if isinstance(self.delta, Mapping):
            return self.delta.get(metric)
        return self.delta

    def __hash__(self) -> int:
        d = tuple(sorted(self.delta.items())) if isinstance(self.delta, Mapping) else self.delta
        return hash((d, self.confidence, self.correction, self.family, self.bootstrap, self.seed,
                     self.top_k, self.sort_by, self.scores, self.findings_work))


def _delta(value: Any, name: str | None) -> float:
    """δ of one metric (``name``) or of every metric (None)."""
    msg, kw = (MSG_DELTA_ALL, {}) if name is None else (MSG_DELTA, {"name": name})
    x = _number(value, msg, **kw)
    if not (x > 0 and math.isfinite(x)):
        raise _fail(msg, value=value, **kw)
    return x


_REPLICATION_FIELDS = {"none": (), "split": ("column", "confirm_values"), "file": ("name",),
                       "holdout": ("share",)}


@dataclass(frozen=True)
class Replication:
    """Where slices are re-measured: nothing, a split or period column, a second file, or a
    held-out share of the rows."""

    kind: str = "none"
    column: str | None = None
    confirm_values: tuple | None = None
    name: str | None = None
    share: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in REPLICATION_KINDS:
            raise _fail(MSG_REPLICATION_KIND, value=self.kind, choices=", ".join(REPLICATION_KINDS))
        allowed = _REPLICATION_FIELDS[self.kind]
        for f in ("column", "confirm_values", "name", "share"):
            if getattr(self, f) is not None and f not in allowed:
                raise _fail(MSG_REPLICATION_KEY, kind=self.kind, key=f, known=", ".join(allowed) or "nothing")
        if self.kind == "holdout":
            if self.share is None:
                raise _fail(MSG_REPLICATION_NEEDS, kind="holdout", key="share")
            x = _number(self.share, MSG_HOLDOUT)
            if not (0.0 < x < 1.0):
                raise _fail(MSG_HOLDOUT, value=self.share)
            _set(self, "share", x)
        if self.kind == "split":
            if self.column is None:
                raise _fail(MSG_REPLICATION_NEEDS, kind="split", key="column")
            _set(self, "column", _column(self.column, "the split column"))
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

    redundancy: float = 0.0

    def __post_init__(self) -> None:
        x = _number(self.redundancy, MSG_REDUNDANCY)
        if not (x >= 0 and math.isfinite(x)):
            raise _fail(MSG_REDUNDANCY, value=self.redundancy)
        _set(self, "redundancy", x)


@dataclass(frozen=True)
class Compare:
    """A reference model compared with the model in the roles on the same rows
    (``divergence.compare``); none when neither ``reference`` nor ``reference_score`` is set."""

    reference: str | None = None
    reference_score: str | None = None
    reference_threshold: float | None = None
    metrics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _set(self, "reference", _column(self.reference, "reference"))
        _set(self, "reference_score", _column(self.reference_score, "reference_score"))
        if self.reference_threshold is not None:
            t = _number(self.reference_threshold, MSG_THRESHOLD)
            if not math.isfinite(t):
                raise _fail(MSG_THRESHOLD, value=self.reference_threshold)
            _set(self, "reference_threshold", t)
        _set(self, "metrics", _metric_names(self.metrics))
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
    return dataclasses.replace(base, **keywords) if keywords else base


def section_keys(name: str) -> tuple[str, ...]:
    """The keys a section accepts (its fields, in order)."""
    return tuple(f.name for f in fields(_SECTIONS[name]))


def scan_keys() -> tuple[str, ...]:
    """The keys of a plan's ``scan`` section: roles, slicing and mining settings."""
    return tuple(k for s in SCAN_SECTIONS for k in section_keys(s))


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
        owner = {k: name for name in _SECTIONS if name not in ("replication", "compare")
                 for k in section_keys(name)}
        owner.update({k: "compare" for k in ("reference", "reference_score", "reference_threshold")})
        for key, value in kw.items():
            if key not in owner:
                known = ", ".join(sorted(owner) + ["holdout"])
                raise _fail(MSG_UNKNOWN_SETTING, key=key, known=known)
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
