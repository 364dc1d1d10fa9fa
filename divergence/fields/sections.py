"""The sections of the settings model: :class:`Roles`, :class:`Slicing`, :class:`Mining`,
:class:`Statistics`, :class:`Replication`, :class:`Explain` and :class:`Compare`, each a frozen
dataclass whose fields declare their default, the kind of value they take
(:mod:`divergence.fields.kinds`) and their command-line help. :class:`divergence.settings.Settings`
holds one of each.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..budget import MAX_SLICES, MAX_WORK, TIME_LIMIT
from ..outcome_rules import REGRESSION, canonical_metric
from ..vocabulary import BINNINGS, CORRECTIONS, DEFAULT_MIN_SUPPORT, FAMILIES, REPLICATION_KINDS
from .kinds import (
    MSG_NO_REFERENCE,
    MSG_REPLICATION_KEY,
    MSG_REPLICATION_KIND,
    MSG_REPLICATION_NEEDS,
    BinSpecs,
    Columns,
    Flag,
    Gamma,
    Integer,
    Names,
    OneOf,
    PerMetric,
    Real,
    Support,
    Text,
    check_fields,
    input_error,
    set_field,
    setting,
)

__all__ = ["Roles", "Slicing", "Mining", "Statistics", "Replication", "Explain", "Compare", "REPLICATION_FIELDS"]


def _score(spec: str) -> str:
    from ..scores import parse_score  # numpy: loaded only when a score is named

    return parse_score(spec).spec


def _hashable(value: Any) -> Any:
    """A field's value as something hashable (a mapping as its sorted items, a list as a tuple)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def _hash_fields(section: Any) -> int:
    """The hash of a section with a mapping among its fields, from every field (a field added is
    hashed with nothing else to write)."""
    return hash(tuple(_hashable(getattr(section, f.name)) for f in fields(section)))


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
        check_fields(self)

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
        check_fields(self)

    def __hash__(self) -> int:  # bins is a dict
        return _hash_fields(self)


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
        check_fields(self)


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
        check_fields(self)

    def delta_for(self, metric: str) -> float | None:
        """δ of one metric (None: the default from the outcome's spread)."""
        if isinstance(self.delta, Mapping):
            return self.delta.get(metric)
        return self.delta

    def __hash__(self) -> int:  # delta may be a dict
        return _hash_fields(self)


REPLICATION_FIELDS = {"none": (), "split": ("column", "confirm_values"), "file": ("name",),
                       "holdout": ("share", "seed")}


@dataclass(frozen=True)
class Replication:
    """Where slices are re-measured: nothing, a split or period column, a second file, or a
    held-out share of the rows drawn from the replication's own seed. The one place the
    replication lives: a second file's rows travel in it too (``rows``, never written to a plan)."""

    kind: str = "none"
    column: str | None = setting(None, _COLUMN, label="the split column")
    confirm_values: tuple | None = None
    name: str | None = None
    share: float | None = setting(None, Real(0, 1, what="a share", optional=True), label="holdout")
    #: the holdout's draw (0 when not given; not the statistics' seed, so a statistic changed keeps the
    #: rows mined). A plan written before this field draws from its statistics' seed, as it did then
    #: (:meth:`divergence.settings.Settings.from_sections`)
    seed: int | None = setting(None, Integer(0, optional=True), label="the holdout's seed")
    #: the second file's rows (kind ``file``): not a setting (not compared, hashed or written to a plan)
    rows: Any = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in REPLICATION_KINDS:
            raise input_error(MSG_REPLICATION_KIND, value=self.kind, choices=", ".join(REPLICATION_KINDS))
        allowed = REPLICATION_FIELDS[self.kind]
        for f in ("column", "confirm_values", "name", "share", "seed", "rows"):
            if getattr(self, f) is not None and f not in allowed + (("rows",) if self.kind == "file" else ()):
                raise input_error(MSG_REPLICATION_KEY, kind=self.kind, key=f, known=", ".join(allowed) or "nothing")
        needs = {"holdout": "share", "split": "column"}.get(self.kind)
        if needs is not None and getattr(self, needs) is None:
            raise input_error(MSG_REPLICATION_NEEDS, kind=self.kind, key=needs)
        check_fields(self)
        values = self.confirm_values
        if values is not None:
            set_field(self, "confirm_values", tuple(values) if isinstance(values, (list, tuple)) else (values,))
        if self.kind == "holdout" and self.seed is None:
            set_field(self, "seed", 0)

    @property
    def label(self) -> str | None:
        """What the surfaces call a second file's rows ("second file b.csv (1,234 rows)"); None
        without a name or rows (the assessment then says "second table")."""
        if self.kind != "file" or self.rows is None or not self.name:
            return None
        return f"second file {self.name} ({len(self.rows):,} rows)"

    def to_dict(self) -> dict:
        """The plan's replication section (empty for none)."""
        if self.kind == "none":
            return {}
        out: dict = {"kind": self.kind}
        for f in REPLICATION_FIELDS[self.kind]:
            v = getattr(self, f)
            if v is not None:
                out[f] = list(v) if isinstance(v, tuple) else v
        return out


@dataclass(frozen=True)
class Explain:
    """How slices are explained and pruned (the dashboard's redundancy ε)."""

    redundancy: float = setting(0.0, Real(0, low_open=False))

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(frozen=True)
class Compare:
    """A reference model compared with the model in the roles on the same rows
    (``divergence.compare``); none when neither ``reference`` nor ``reference_score`` is set."""

    reference: str | None = setting(None, _COLUMN, "the reference model's predicted labels or values")
    reference_score: str | None = setting(None, _COLUMN, "the reference model's score")
    reference_threshold: float | None = setting(None, Real(optional=True), "the reference's score threshold")
    metrics: tuple[str, ...] = setting((), Names(read=canonical_metric))

    def __post_init__(self) -> None:
        check_fields(self)
        if (self.reference_threshold is not None or self.metrics) and not self.enabled:
            raise input_error(MSG_NO_REFERENCE)

    @property
    def enabled(self) -> bool:
        return self.reference is not None or self.reference_score is not None
