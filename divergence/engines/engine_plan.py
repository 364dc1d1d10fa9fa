"""What one SQL scan asks of its engine (:mod:`divergence.engines.engine_scan`): the :class:`Backend`
protocol, the plan of a scan's columns (lookups, and the checks its profile runs), each outcome as
SQL from the column roles (:func:`plan_outcomes`), and the profile's query and checks."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import DivergenceInputError
from ..outcome_rules import CLASSIFICATION_METRICS, LOG_LOSS_EPS, REGRESSION_METRICS, SCORE_METRICS
from ..prepare.outcomes import (
    BASELINE_KIND,
    canonical_metric,
    check_names,
    match_label,
    measures,
    parse_gamma,
    positive_labels,
    show_value,
)
from ..prepare.row_weights import ADDITIVE_BASELINES
from ..settings import Roles
from ..vocabulary import METRIC_LABELS
from .sql import (
    Column,
    Dialect,
    average_ranks,
    classification_value,
    gamma_value,
    label_flag,
    regression_value,
    threshold_flag,
)

if TYPE_CHECKING:  # pyarrow is imported when a scan runs, not with the package
    import pyarrow as pa

__all__ = ["Backend", "PREFIX", "ScanPlan", "OutcomePlan", "plan_outcomes", "refuse_other", "profile_sql", "population_skewness", "check_profile"]

#: the ranking join and the derived columns are named with this prefix (never a user column)
PREFIX = "__divergence_"
_P = PREFIX


class Backend(Protocol):
    """What the driver needs from an engine."""

    name: str  # "duckdb" or "spark"
    dialect: Dialect
    source: str  # the FROM clause text of the table
    columns: list[Column]

    def fetch(self, sql: str) -> pa.Table:
        """Run a query whose result is small; its rows as an Arrow table."""

    def stream(self, sql: str) -> Iterator[pa.RecordBatch]:
        """Run the GROUP BY; its rows in batches."""

    def order_statistics(self, number_sql: str, levels: Sequence[float]) -> list[float]:
        """The discrete percentiles (SQL ``percentile_disc``) of a numeric expression, NULLs ignored."""

    def approx_quantiles(self, number_sql: str, levels: Sequence[float]) -> list[float]:
        """Approximate quantiles of a numeric expression (NULLs ignored)."""

    def exact_quantiles_affordable(self, n_values: int) -> bool:
        """Whether exact quantiles of this many values are affordable (``quantiles="auto"``)."""

# ----------------------------------------------------------------------------- outcomes
@dataclasses.dataclass
class OutcomePlan:
    name: str
    description: str
    value: str = ""  # SQL of the per-row outcome, NULL where undefined
    baseline: str | None = None
    target: str | None = None  # SQL of the per-row target behind the baseline
    score_range: str | None = None  # brier: the score expression whose range must be [0, 1]
    binary: bool = False
    shift: float = 0.0
    target_shift: float = 0.0
    skew: float = 0.0
    bound: float = math.inf  # at least max |value - shift|, for exact sums (Spark)
    target_bound: float = math.inf


class ScanPlan:
    """Column lookups and checks shared by the steps of one scan."""

    def __init__(self, backend: Backend):
        self.b = backend
        self.d = backend.dialect
        self.by_name = {c.name: c for c in backend.columns}
        self.checks: list[tuple[str, str, str]] = []  # (alias, aggregate SQL, purpose)
        self.joins: list[str] = []
        self.periods: dict[str, str] = {}  # date attributes binned by period

    def column(self, name: str | None, role: str) -> Column:
        if name is None:
            raise DivergenceInputError(f"A {role} column is needed for this metric; none was given.")
        if name not in self.by_name:
            raise DivergenceInputError(f"{role.capitalize()} column '{name}' is not in the data.")
        return self.by_name[name]

    def number(self, name: str, role: str) -> str:
        """The column as numbers, with checks (not a number, infinite) run in the profile."""
        col = self.column(name, role)
        refuse_other(col, f"the {role}")
        num = self.d.number(col)
        k = len(self.checks)
        if col.kind == "text":
            self.checks.append((f"{_P}bad{k}", f"MIN(CASE WHEN {self.d.not_a_number(col)} THEN "
                                f"{self.d.ident(col.name)} END)", f"numeric:{role}:{name}"))
        if col.kind in ("float", "text"):
            self.checks.append((f"{_P}inf{k}", f"MAX(CASE WHEN {self.d.is_infinite(num)} THEN 1 ELSE 0 END)",
                                f"finite:{role}:{name}"))
        return num

    def labels(self, name: str, role: str) -> list:
        """Distinct non-missing values of a label column (at most 6: enough to say it is not binary)."""
        col = self.column(name, role)
        t = self.b.fetch(f"SELECT DISTINCT {self.d.category(col) if col.kind != 'text' else self.d.ident(name)} "
                         f"AS v FROM {self.b.source} WHERE NOT {self.d.missing(col)} LIMIT 6")
        return t.column(0).to_pylist()


def _binary_hits(values: list, positive: object, col: str, role: str) -> list:
    # the engine fetches at most six distinct values: enough to say a column is not binary
    return positive_labels(values, positive, col, role, complete=False)


def _classification(plan: ScanPlan, *, target, positive, prediction, score, threshold, metrics) -> list[OutcomePlan]:
    from ..prepare.outcomes import is_multiclass

    d = plan.d
    ycol = plan.column(target, "target")
    if is_multiclass(metrics, positive):
        raise DivergenceInputError(
            f"Metrics over the classes of target column '{target}' ({', '.join(metrics)}) are measured in memory "
            "(engine fast or mlxtend); DuckDB and Spark measure a binary classifier: name its positive label.")
    if positive is None:
        raise DivergenceInputError(f"Name the positive label of target column '{target}'.")
    y_values = plan.labels(target, "target")
    y = label_flag(ycol, _binary_hits(y_values, positive, target, "target"), d)
    s = None
    if prediction is not None:
        pcol = plan.column(prediction, "prediction")
        p_values = plan.labels(prediction, "prediction")
        p = label_flag(pcol, _binary_hits(p_values, positive, prediction, "prediction"), d)
        stray = [v for v in p_values if not any(match_label(v, t) for t in y_values)]
        target_values = {str(v) for v in y_values}
        if stray and len(target_values) == 2:
            raise DivergenceInputError(
                f"Prediction column '{prediction}' holds {show_value(stray[0])}, which is not a value of "
                f"target column '{target}' ({', '.join(sorted(target_values))})."
            )
    elif score is not None:
        s = plan.number(score, "score")
        p = threshold_flag(s, threshold, d)
    else:
        raise DivergenceInputError("Give a prediction column (labels) or a score column and a threshold.")
    out = []
    for metric in metrics:
        m = canonical_metric(metric)
        if m in SCORE_METRICS:
            if s is None:
                raise DivergenceInputError(f"Metric '{m}' needs a score column (a probability in [0, 1]).")
            yd = f"CAST({y} AS DOUBLE)"
            if m == "brier":
                row = f"({s} - {yd}) * ({s} - {yd})"
            elif m == "calibration":
                row = f"({s} - {yd})"
            else:  # clipped as divergence.prepare.outcomes.score_metric_values clips
                c = f"LEAST(GREATEST({s}, {d.double(LOG_LOSS_EPS)}), {d.double(1.0 - LOG_LOSS_EPS)})"
                one = d.double(1.0)
                row = f"(-({yd} * LN({c}) + ({one} - {yd}) * LN({one} - {c})))"
            value = f"(CASE WHEN {y} IS NULL OR {p} IS NULL OR {s} IS NULL THEN NULL ELSE {row} END)"
            out.append(OutcomePlan(m, METRIC_LABELS[m], value, BASELINE_KIND.get(m),
                                    yd if m != "calibration" else None, score_range=s))
            continue
        if m not in CLASSIFICATION_METRICS:
            raise DivergenceInputError(
                f"Unknown classification metric {metric!r}; choose from {', '.join(CLASSIFICATION_METRICS)}."
            )
        extra: dict[str, Any] = {}
        if m == "error":
            extra = dict(baseline="majority",
                         target=f"(CASE WHEN {p} IS NULL THEN NULL ELSE CAST({y} AS DOUBLE) END)")
        out.append(OutcomePlan(m, METRIC_LABELS[m], classification_value(m, y, p, d), **extra))
    return out


def _regression(plan: ScanPlan, *, target, prediction, metrics) -> list[OutcomePlan]:
    y = plan.number(target, "target")
    p = plan.number(prediction, "prediction")
    diff = f"({p} - {y})"
    out = []
    for metric in metrics:
        m = canonical_metric(metric)
        if m not in REGRESSION_METRICS:
            raise DivergenceInputError(
                f"Unknown regression metric {metric!r}; choose from {', '.join(REGRESSION_METRICS)}."
            )
        out.append(OutcomePlan(m, METRIC_LABELS[m], regression_value(m, diff), BASELINE_KIND.get(m), y))
    return out


def _ranking(plan: ScanPlan, *, rank, rank_by, ascending, gamma) -> OutcomePlan:
    kind, a = parse_gamma(gamma)
    if (rank is None) == (rank_by is None):
        raise DivergenceInputError("Give exactly one of a rank column or a score to rank by.")
    if rank is not None:
        r = plan.number(rank, "rank")
        plan.checks.append((f"{_P}minrank", f"MIN({r})", f"rank:{rank}"))
    else:
        s = plan.number(rank_by, "rank-by")
        ranks = average_ranks(plan.b.source, s, ascending)
        plan.joins.append(f"LEFT JOIN ({ranks}) {_P}ranks ON {s} = {_P}ranks.rank_key")
        r = f"{_P}ranks.rank_value"
    desc = {"topk": f"in the top {int(a)}", "power": f"rank^-{a:g}", "dcg": "DCG gain 1/log2(1+rank)"}[kind]
    return OutcomePlan("gamma", desc, gamma_value(r, kind, a, plan.d))


def plan_outcomes(plan: ScanPlan, roles: Roles) -> list[OutcomePlan]:
    """The outcomes as SQL, from the column roles (:func:`divergence.prepare.outcomes.measures`)."""
    out: list[OutcomePlan] = []
    for m in measures(roles):
        if m.kind == "outcome":
            assert m.column is not None  # an outcome measure names its column
            out.append(OutcomePlan(m.column, f"mean of {m.column}", plan.number(m.column, "outcome")))
        elif m.kind == "ranking":
            out.append(_ranking(plan, **m.keywords(roles)))
        else:
            out += (_regression if m.kind == "regression" else _classification)(plan, **m.keywords(roles))
    check_names([o.name for o in out])
    return out


def refuse_other(col: Column, what: str) -> None:
    """One line for a column of bytes or nested values used as ``what`` (as the pandas scan says it)."""
    if col.kind == "other":
        from ..data.nested import other_reason

        raise DivergenceInputError(f"Column '{col.name}' cannot be used as {what}: {other_reason(col.type)}.")


def profile_sql(plan: ScanPlan, candidates: list[Column], outcomes: list[OutcomePlan], source: str) -> str:
    """The one query of the profile: row count; per attribute its counts and range; per outcome its
    defined count, mean, range and moments; the plan's checks."""
    d = plan.d
    parts = ["COUNT(*) AS n_rows"]
    for j, col in enumerate(candidates):
        if col.kind == "other":  # bytes or nested values: counted, never cast (the screen leaves them out)
            parts += [f"COUNT({d.ident(col.name)}) AS nn{j}", f"0 AS ad{j}"]
            continue
        val = d.number(col) if col.numeric else d.category(col)
        parts.append(f"COUNT({val}) AS nn{j}")
        parts.append(f"approx_count_distinct({val}) AS ad{j}")
        if col.kind == "text":  # rows that read as numbers (for explicit edges on a text column)
            parts.append(f"COUNT({d.number(col)}) AS nnum{j}")
        if col.numeric:
            parts += [f"MIN({val}) AS lo{j}", f"MAX({val}) AS hi{j}"]
            if col.kind != "int":
                parts.append(f"MIN(CASE WHEN {val} IS NULL OR ({val} % {d.double(1.0)}) = 0 THEN 1 ELSE 0 END) AS int{j}")
    for k, o in enumerate(outcomes):
        parts += [f"COUNT({o.value}) AS od{k}", f"AVG({o.value}) AS om{k}", f"MAX(abs({o.value})) AS oa{k}",
                  f"MIN(CASE WHEN {o.value} IS NULL OR {o.value} = 0 OR {o.value} = 1 THEN 1 ELSE 0 END) AS ob{k}",
                  f"skewness({o.value}) AS osk{k}"]  # the skew guard's side (stats.mean_difference_test)
        if o.baseline in ADDITIVE_BASELINES and o.target is not None:
            parts.append(f"AVG(CASE WHEN {o.value} IS NOT NULL THEN {o.target} END) AS oy{k}")
            parts.append(f"MAX(CASE WHEN {o.value} IS NOT NULL THEN abs({o.target}) END) AS oya{k}")
        if o.score_range is not None:
            parts += [f"MIN({o.score_range}) AS slo{k}", f"MAX({o.score_range}) AS shi{k}"]
    parts += [f"{sql} AS {alias}" for alias, sql, _ in plan.checks]
    return f"SELECT {', '.join(parts)} FROM {source}"


def population_skewness(value, n: int, dialect: str) -> float:
    """The outcome's skewness as pandas' scan computes it (population moments): DuckDB's
    ``skewness`` is the sample-adjusted one, Spark's the population one; a constant is 0."""
    if value is None or not math.isfinite(float(value)):
        return 0.0
    g = float(value)
    if dialect == "duckdb" and n > 2:
        g *= (n - 2) / math.sqrt(n * (n - 1.0))
    return g


def check_profile(plan: ScanPlan, row: dict) -> None:
    """The plan's checks, read from the profile's row: one line for the first that fails."""
    for alias, _, purpose in plan.checks:
        value = row[alias]
        kind, role, name = (purpose.split(":", 2) + ["", ""])[:3]
        if kind == "numeric" and value is not None:
            raise DivergenceInputError(f"{role.capitalize()} column '{name}' must be numeric; it holds {value!r}.")
        if kind == "finite" and value:
            raise DivergenceInputError(f"{role.capitalize()} column '{name}' holds an infinite value.")
        if kind == "rank" and value is not None and value < 1:
            raise DivergenceInputError(f"Rank column '{role}' must hold ranks of 1 or more (1 = best).")


