"""The heavy step where the data lives: bin, compute outcomes and compress in SQL
(:func:`prepare_sql`, the SQL implementation of :func:`divergence.prepare.prepared.prepare`), then
hand the small compressed table (distinct discretized rows and their tallies) to the in-memory
miner (:func:`divergence.mining.mined.mine_prepared`), then measured (:func:`divergence.stats.tabulate.measure`).

Engine-independent: a :class:`Backend` (DuckDB, Spark) runs the SQL text of
:mod:`divergence.engines.sql` and returns Arrow data. The bins are built in Python by the functions
:mod:`divergence.prepare.discretize` uses, from the distinct values, minimum, maximum and quantiles
the engine returns, so every path bins alike and the slice table is the pandas one.

Passes over the data: (1) the distinct labels of a classifier's target and prediction,
(2) one profile (row count; per attribute its non-missing count, approximate distinct
count, minimum and maximum; per outcome its defined count, mean and whether it is 0/1),
(3) per numeric attribute with few values its exact value counts, and the quantiles of the
others, (4) the GROUP BY, streamed in batches.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import TYPE_CHECKING, Iterator, Literal, Mapping, Protocol, Sequence

import numpy as np

from ..prepare.discretize import (
    MAX_CATEGORIES,
    AttributeBins,
    BinSpec,
    Binning,
    binned_bins,
    categorical_bins,
    explicit_edges,
    keeps_as_categories,
    quantile_levels,
    summary_edges,
)
from ..data.column_rules import ScreenTimeout, screen_timeout_message
from ..errors import DivergenceBudgetError, DivergenceInputError
from ..outcome_rules import CLASSIFICATION_METRICS, LOG_LOSS_EPS, REGRESSION_METRICS, SCORE_METRICS
from ..prepare.outcomes import BASELINE_KIND
from ..prepare.row_weights import ADDITIVE_BASELINES
from ..vocabulary import ENGINES, METRIC_LABELS, PERIODS, QUANTILE_MODES
from ..prepare.outcomes import canonical_metric, check_names, measures, show_value, match_label, parse_gamma, positive_labels
from ..budget import ProgressCallback, progress_report
from ..data.columns import NEAR_UNIQUE_SHARE, check_attributes
from ..mining.mined import mine_prepared
from ..stats.tabulate import measure
from ..prepare.prepared import Prepared, table_params
from ..settings import Roles, Settings
from .sql import Column, Dialect, average_ranks, classification_value, gamma_value, label_flag
from .sql import regression_value, threshold_flag
from ..prepare.score_threshold import threshold_from_range
from ..prepare.replication_rows import ReplicationRows, needs_its_table
from ..prepare.row_weights import place_aux
from ..table import MetricInfo, SliceTable

if TYPE_CHECKING:  # pyarrow is imported when a scan runs, not with the package
    import pyarrow as pa

__all__ = ["engine_settings", "RUN_KEYWORDS", "Backend", "scan_engine", "mine_engine", "prepare_sql", "numpy_quantile", "QuantileMode", "ENGINE_NOTE"]

QuantileMode = Literal["auto", "exact", "approx"]

#: numeric attributes with at most this many (approximately counted) distinct values have
#: their exact value counts fetched: enough to tell a category from a binned column
VALUE_COUNTS_MAX = 2_000
#: the ranking join and the derived columns are named with this prefix (never a user column)
_P = "__divergence_"

ENGINE_NOTE = ("Binned, measured and compressed in {engine}; bootstrap intervals and median "
               "baselines need per-row data and are not computed (intervals are analytic).")


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


def numpy_quantile(n: int, level: float, lower: float, upper: float) -> float:
    """``numpy.quantile(x, level)`` (linear interpolation) from the two order statistics it
    interpolates: x sorted, ``lower = x[floor((n-1)*level)]`` and ``upper`` the next one."""
    virtual = (n - 1) * np.float64(level)
    t = virtual - np.floor(virtual)
    a, b = np.float64(lower), np.float64(upper)
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def _order_positions(n: int, levels: Sequence[float]) -> list[tuple[int, int]]:
    out = []
    for level in levels:
        lo = int(np.floor((n - 1) * np.float64(level)))
        out.append((lo, min(lo + 1, n - 1)))
    return out


# ----------------------------------------------------------------------------- outcomes
@dataclasses.dataclass
class _OutcomePlan:
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


class _Plan:
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


def _classification(plan: _Plan, *, target, positive, prediction, score, threshold, metrics) -> list[_OutcomePlan]:
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
            out.append(_OutcomePlan(m, METRIC_LABELS[m], value, BASELINE_KIND.get(m),
                                    yd if m != "calibration" else None, score_range=s))
            continue
        if m not in CLASSIFICATION_METRICS:
            raise DivergenceInputError(
                f"Unknown classification metric {metric!r}; choose from {', '.join(CLASSIFICATION_METRICS)}."
            )
        extra = {}
        if m == "error":
            extra = dict(baseline="majority",
                         target=f"(CASE WHEN {p} IS NULL THEN NULL ELSE CAST({y} AS DOUBLE) END)")
        out.append(_OutcomePlan(m, METRIC_LABELS[m], classification_value(m, y, p, d), **extra))
    return out


def _regression(plan: _Plan, *, target, prediction, metrics) -> list[_OutcomePlan]:
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
        out.append(_OutcomePlan(m, METRIC_LABELS[m], regression_value(m, diff), BASELINE_KIND.get(m), y))
    return out


def _ranking(plan: _Plan, *, rank, rank_by, ascending, gamma) -> _OutcomePlan:
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
    return _OutcomePlan("gamma", desc, gamma_value(r, kind, a, plan.d))


def plan_outcomes(plan: _Plan, roles: Roles) -> list[_OutcomePlan]:
    """The outcomes as SQL, from the column roles (:func:`divergence.prepare.outcomes.measures`)."""
    out: list[_OutcomePlan] = []
    for m in measures(roles):
        if m.kind == "outcome":
            out.append(_OutcomePlan(m.column, f"mean of {m.column}", plan.number(m.column, "outcome")))
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


# ----------------------------------------------------------------------------- the scan
def _profile_sql(plan: _Plan, candidates: list[Column], outcomes: list[_OutcomePlan], source: str) -> str:
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


def _population_skewness(value, n: int, dialect: str) -> float:
    """The outcome's skewness as pandas' scan computes it (population moments): DuckDB's
    ``skewness`` is the sample-adjusted one, Spark's the population one; a constant is 0."""
    if value is None or not math.isfinite(float(value)):
        return 0.0
    g = float(value)
    if dialect == "duckdb" and n > 2:
        g *= (n - 2) / math.sqrt(n * (n - 1.0))
    return g


def _check_profile(plan: _Plan, row: dict) -> None:
    for alias, _, purpose in plan.checks:
        value = row[alias]
        kind, role, name = (purpose.split(":", 2) + ["", ""])[:3]
        if kind == "numeric" and value is not None:
            raise DivergenceInputError(f"{role.capitalize()} column '{name}' must be numeric; it holds {value!r}.")
        if kind == "finite" and value:
            raise DivergenceInputError(f"{role.capitalize()} column '{name}' holds an infinite value.")
        if kind == "rank" and value is not None and value < 1:
            raise DivergenceInputError(f"Rank column '{role}' must hold ranks of 1 or more (1 = best).")


#: rows sampled (DuckDB: a reservoir sample; Spark: the first rows) to screen the columns
SCREEN_ROWS = 50_000


def _default_attributes(plan: _Plan, exclude: Sequence[str], n_rows: int, stats: dict, *, target=None,
                        prediction=None, score=None, threshold=None,
                        deadline: float | None = None) -> tuple[list[str], list[str]]:
    """:func:`divergence.data.columns.screen_attributes` where the data lives: row numbers, constant and
    all-missing columns and identifiers from exact counts; dates, names and free text from a
    sample of the rows; leakage found on the sample and confirmed on every row in SQL."""
    from ..data.column_kinds import is_date_column
    from ..data.columns import DATE_REASON, MIN_ROWS, UNIQUE_INT_SHARE, row_index_kind, screen, shape_kind

    d = plan.d
    names = [c.name for c in plan.b.columns if c.name not in exclude]
    names += [r for r in (target, prediction, score) if r is not None and r in plan.by_name and r not in names]
    select = ", ".join(d.ident(n) for n in names)
    if n_rows <= SCREEN_ROWS:
        sql = f"SELECT {select} FROM {plan.b.source}"
    elif plan.b.name == "duckdb":
        sql = f"SELECT {select} FROM {plan.b.source} USING SAMPLE reservoir({SCREEN_ROWS} ROWS) REPEATABLE (0)"
    else:
        sql = f"SELECT {select} FROM {plan.b.source} LIMIT {SCREEN_ROWS}"
    sample = plan.b.fetch(sql).to_pandas()

    def classify(name: str, series):
        col, st = plan.by_name[name], stats[name]
        nn = st["nn"]
        if nn == 0:
            return "all missing", "missing on every row"
        if _is_row_index(plan, col, st, n_rows):
            return row_index_kind(name, st["lo"] if st["lo"] is not None else -1.0,
                                   st["hi"] if st["hi"] is not None else -1.0, n_rows)
        if col.type.upper().startswith(("DATE", "TIMESTAMP", "TIME")) or is_date_column(series):
            return "date", DATE_REASON
        if nn == n_rows and st["ad"] <= 3 and _exact_distinct_if_close(plan, col, 1, 1) == 1:
            return "constant", f"one value ({series.dropna().iloc[0]!r}) on every row"
        if nn < MIN_ROWS:
            return None
        present = series.dropna()
        found = shape_kind(name, series, present, present.value_counts())
        if found is None or found[0] != "identifier":
            return found
        bar = NEAR_UNIQUE_SHARE * nn if col.kind == "text" else UNIQUE_INT_SHARE * nn
        distinct = _exact_distinct_if_close(plan, col, st["ad"], bar)
        if distinct > bar or (col.kind != "text" and distinct >= bar):
            return "identifier", f"{distinct:,} distinct values in {nn:,} rows (an identifier)"
        return None

    screened, leaks = screen(sample, exclude, target=target, prediction=prediction, score=score,
                            threshold=threshold if prediction is None else None, classify=classify, deadline=deadline)
    attributes = list(screened.attributes)
    for col, (_, source, checks) in leaks.items():
        if not all(_dependency_holds(plan, col, source, check) for check in checks):
            attributes.append(col)  # the sample's coincidence: not so on every row
    if len(attributes) == len(screened.attributes):
        return attributes, screened.notes
    from ..data.columns import AttributeScreen, screen_notes

    order = {c.name: i for i, c in enumerate(plan.b.columns)}
    attributes.sort(key=order.__getitem__)
    left = {c: r for c, r in screened.left_out.items() if c not in attributes}
    kinds = {c: k for c, k in screened.kinds.items() if c in left}
    screened = AttributeScreen(attributes, left, kinds, screen_notes(left, kinds),
                               {c: o for c, o in screened.models.items() if c in left},
                               {c: o for c, o in screened.copies.items() if c in left})
    return screened.attributes, screened.notes


def _dependency_holds(plan: _Plan, col: str, source: tuple, check: str) -> bool:
    """A functional dependency (or a copy) between a column and a role, on every row."""
    d = plan.d
    c = plan.by_name[col]
    if source[0] == "column":
        r = plan.by_name[source[1]]
        y_num, y_key = (d.number(r) if r.numeric else None), f"CAST({d.category(r)} AS STRING)"
    else:
        y_num = threshold_flag(d.number(plan.by_name[source[1]]), source[2], d)
        y_key = f"CAST({y_num} AS STRING)"
    x_key = f"CAST({d.category(c)} AS STRING)"
    src = plan.b.source
    if check == "copy":
        if c.numeric and y_num is not None:
            x, y = d.number(c), y_num
        else:
            x, y = x_key, y_key
        sql = f"SELECT COUNT(*) FROM {src} WHERE NOT (({x} IS NULL AND {y} IS NULL) OR {x} = {y})"
    else:
        a, b = (x_key, y_key) if check.startswith("x->y") else (y_key, x_key)
        where = f"WHERE {x_key} IS NOT NULL" if check.endswith("present") else ""
        sentinel = d.string("\u0001missing")
        sql = (f"SELECT COUNT(*) FROM (SELECT {a} AS k FROM {src} {where} GROUP BY {a} "
               f"HAVING COUNT(DISTINCT COALESCE({b}, {sentinel})) > 1) {_P}dep")
    return int(plan.b.fetch(sql).column(0)[0].as_py()) == 0


def _exact_distinct_if_close(plan: _Plan, col: Column, approx: int, bar: float) -> int:
    """The approximate distinct count, made exact when it is near ``bar`` (the only case
    where the approximation could decide wrongly)."""
    if abs(approx - bar) <= 0.1 * bar + 10:
        val = plan.d.number(col) if col.numeric else plan.d.category(col)
        return int(plan.b.fetch(f"SELECT COUNT(DISTINCT {val}) FROM {plan.b.source}").column(0)[0].as_py())
    return int(approx)


def _is_row_index(plan: _Plan, col: Column, st: dict, n_rows: int) -> bool:
    text = str(col.name)
    if n_rows >= 2 and col.numeric and (text.strip() == "" or text.startswith("Unnamed:")):
        return True  # unnamed and numeric, as divergence.data.column_kinds.is_row_index: unnamed text is screened as any
    if n_rows < 2 or not col.numeric or st["nn"] < n_rows or not st.get("int", True):
        return False
    return _exact_distinct_if_close(plan, col, st["ad"], n_rows) == n_rows


def _value_counts(plan: _Plan, col: Column) -> tuple[np.ndarray, np.ndarray]:
    num = plan.d.number(col)
    t = plan.b.fetch(f"SELECT {num} AS v, COUNT(*) AS c FROM {plan.b.source} WHERE {num} IS NOT NULL GROUP BY {num}")
    values = np.asarray(t.column(0).to_numpy(zero_copy_only=False), dtype=float)
    counts = np.asarray(t.column(1).to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(values, kind="stable")
    return values[order], counts[order]


def _exact_quantiles_from_counts(values, counts, n, levels) -> list[float]:
    cum = np.cumsum(counts)
    out = []
    for level, (i, j) in zip(levels, _order_positions(n, levels)):
        lo = values[np.searchsorted(cum, i, side="right")]
        hi = values[np.searchsorted(cum, j, side="right")]
        out.append(numpy_quantile(n, level, lo, hi))
    return out


def _exact_quantiles(plan: _Plan, number_sql: str, n: int, levels: Sequence[float]) -> list[float]:
    """Exact numpy quantiles: the engine's discrete percentile gives each order statistic
    numpy interpolates between, the interpolation is numpy's own formula."""
    wanted = []
    for i, k in _order_positions(n, levels):
        wanted += [(i + 0.5) / n, (k + 0.5) / n]  # percentile_disc picks x[ceil(n*level) - 1]
    stats = plan.b.order_statistics(number_sql, wanted)
    return [numpy_quantile(n, level, stats[2 * m], stats[2 * m + 1]) for m, level in enumerate(levels)]


def _attribute_bins(plan: _Plan, attrs: list[str], stats: dict, n_rows: int, bins: Mapping[str, BinSpec],
                    quantile_bins: int, binning: Binning, quantiles: QuantileMode,
                    notes: list[str], cut: "_TreeCut | None" = None) -> list[tuple[AttributeBins | None, str, Column]]:
    """Per attribute: its bins (None for a text category, built after the GROUP BY), and its SQL."""
    d = plan.d
    out: list = [None] * len(attrs)
    pending: list[tuple[int, str, Column, bool, int]] = []  # tree columns, cut once all are known
    for j, name in enumerate(attrs):
        col = plan.by_name[name]
        st = stats[name]
        has_missing = st["nn"] < n_rows
        spec = bins.get(name)
        if isinstance(spec, str) or (spec is None and not col.numeric and _is_date(plan, col)):
            out[j] = (None, _period_sql(plan, col, spec), col)
            continue
        if spec is not None and not isinstance(spec, (int, np.integer)):
            edges = explicit_edges(name, spec)
            if col.kind == "text":
                bad = plan.b.fetch(f"SELECT MIN(CASE WHEN {d.not_a_number(col)} THEN {d.ident(name)} END) "
                                   f"FROM {plan.b.source}").column(0)[0].as_py()
                if bad is not None:
                    raise DivergenceInputError(f"Column '{name}' has bin edges but holds values that are not "
                                               f"numbers (for example {bad!r}).")
            if col.kind == "text" and st["nn_num"] is not None:
                has_missing = st["nn_num"] < n_rows
            ab = binned_bins(name, edges, "edges", has_missing)
            out[j] = (ab, d.bin_code(d.number(col), ab.edges, ab.missing_code), col)
            continue
        if not col.numeric:
            out[j] = (None, d.category(col), col)
            continue
        n_bins = int(spec) if spec is not None else int(quantile_bins)
        n = int(st["nn"])
        counts = None
        if st["ad"] <= max(VALUE_COUNTS_MAX, 2 * max(n_bins, MAX_CATEGORIES)):
            counts = _value_counts(plan, col)
            if keeps_as_categories(counts[0], n_bins, spec_given=spec is not None):
                out[j] = (None, d.category(col), col)
                continue
        if binning == "tree" and cut is not None and n > 0:
            pending.append((j, name, col, has_missing, int(spec) if spec is not None else 0))
            continue
        raw = None
        if n == 0 or n_bins < 2:
            edges = np.empty(0)
        elif binning == "uniform":
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning)
        elif counts is not None:
            levels = quantile_levels(n_bins)
            raw = _exact_quantiles_from_counts(counts[0], counts[1], n, levels)
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning, raw)
        elif quantiles == "exact" or (quantiles == "auto" and plan.b.exact_quantiles_affordable(n)):
            raw = _exact_quantiles(plan, d.number(col), n, quantile_levels(n_bins))
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning, raw)
        else:
            raw = plan.b.approx_quantiles(d.number(col), list(quantile_levels(n_bins)))
            notes.append(f"'{name}': quantile edges are approximate ({plan.b.name} approximate "
                         "quantiles, then rounded as usual).")
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning, raw)
        out[j] = _binned(plan, name, col, edges, n_bins, binning, has_missing, notes, raw, n)
    if pending:
        _tree_bins(plan, pending, cut, notes, out)
    return out


@dataclasses.dataclass
class _TreeCut:
    """Tree binning where the data lives: the rows whose hash fraction is below ``share`` choose the
    cut points (fetched once), the others are grouped and measured."""

    source: str
    outcomes: list
    share: float
    min_support: float
    n_rows: int
    n_cut: int = 0


def _tree_bins(plan: _Plan, pending: list, cut: _TreeCut, notes: list[str], out: list) -> None:
    """Cut points of every tree column, from one fetch of the cut rows' values and outcomes."""
    from ..prepare.cutpoints import MAX_TREE_BINS, MIN_BIN_SHARE, cut_note, tree_edges
    from ..settings import min_count_for

    d = plan.d
    xs = [f"{d.number(col)} AS {_P}x{i}" for i, (_, _, col, _, _) in enumerate(pending)]
    ys = [f"{v} AS {_P}o{k}" for k, v in enumerate(cut.outcomes)]
    t = plan.b.fetch(f"SELECT {', '.join(xs + ys)} FROM {cut.source} WHERE {_P}cut < {d.double(cut.share)}")
    cut.n_cut = t.num_rows
    n_rest = cut.n_rows - cut.n_cut
    if cut.n_cut < 20 or n_rest < 1:
        raise DivergenceInputError(
            f"Tree binning needs rows to choose cut points on and rows to measure: {cut.n_rows:,} rows give "
            f"{cut.n_cut:,} and {n_rest:,}. Use quantile bins on so small a table.")
    y = [np.asarray(t.column(f"{_P}o{k}").to_numpy(zero_copy_only=False), dtype=float) for k in range(len(ys))]
    min_bin = max(MIN_BIN_SHARE * cut.n_cut, min_count_for(cut.min_support, n_rest) * cut.n_cut / max(n_rest, 1), 2.0)
    found = {}
    for i, (j, name, col, has_missing, most) in enumerate(pending):
        x = np.asarray(t.column(f"{_P}x{i}").to_numpy(zero_copy_only=False), dtype=float)
        edges = tree_edges(x, y, max_bins=most or MAX_TREE_BINS, min_bin=min_bin)
        found[name] = edges
        ab = binned_bins(name, edges, "tree", has_missing)
        out[j] = (ab, d.bin_code(d.number(col), ab.edges, ab.missing_code), col)
    notes.insert(0, cut_note(list(found), cut.n_cut, n_rest, found).replace(", seeded)", ", by a hash of each row)"))


def _is_date(plan: _Plan, col: Column) -> bool:
    """A DATE/TIMESTAMP column, or text whose values read as dates (as the pandas path decides)."""
    from ..data.column_kinds import is_date_column

    if col.type.upper().startswith(("DATE", "TIMESTAMP")):
        return True
    if col.kind != "text":
        return False
    c = plan.d.ident(col.name)
    values = plan.b.fetch(f"SELECT DISTINCT {c} AS v FROM {plan.b.source} WHERE {c} IS NOT NULL LIMIT 2000")
    import pandas as pd

    return is_date_column(pd.Series(values.column(0).to_pylist(), dtype=object))


#: text layouts of dates read month first (as pandas reads a date that is not ISO 8601)
_DATE_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y", "%m/%d/%y", "%m-%d-%Y", "%d.%m.%Y")


def _period_sql(plan: _Plan, col: Column, spec) -> str:
    """SQL of a date column's period label (``2013-08``, ``2013-Q3``, ``2013``), NULL where
    missing: the period named, or the finest with at most 12 periods (as discretize does)."""
    from ..prepare.discretize import MAX_DATE_ITEMS

    d = plan.d
    c = d.ident(col.name)
    if col.type.upper().startswith("TIME") and not col.type.upper().startswith("TIMESTAMP"):
        from ..prepare.discretize import times_of_day_error

        raise times_of_day_error(col.name)
    if col.type.upper().startswith(("DATE", "TIMESTAMP")):
        ts = f"CAST({c} AS TIMESTAMP)"
    elif plan.b.name == "duckdb":
        fmts = "[" + ", ".join(d.string(f) for f in _DATE_FORMATS) + "]"
        ts = f"COALESCE(TRY_CAST({c} AS TIMESTAMP), try_strptime({c}, {fmts}))"
    else:
        ts = f"to_timestamp({c})"
    bad = plan.b.fetch(f"SELECT MIN({c}) FROM {plan.b.source} WHERE {c} IS NOT NULL AND {ts} IS NULL").column(0)[0]
    if bad.as_py() is not None:
        raise DivergenceInputError(f"Column '{col.name}' is binned by {spec or 'period'} but holds values that are "
                                   f"not dates (for example {bad.as_py()!r}).")
    if plan.b.name == "duckdb":
        labels = {"month": f"strftime({ts}, '%Y-%m')",
                  "quarter": f"(CAST(year({ts}) AS VARCHAR) || '-Q' || CAST(quarter({ts}) AS VARCHAR))",
                  "year": f"CAST(year({ts}) AS VARCHAR)"}
    else:
        labels = {"month": f"date_format({ts}, 'yyyy-MM')",
                  "quarter": f"concat(CAST(year({ts}) AS STRING), '-Q', CAST(quarter({ts}) AS STRING))",
                  "year": f"CAST(year({ts}) AS STRING)"}
    period = spec
    if period is None:
        counts = plan.b.fetch(f"SELECT COUNT(DISTINCT {labels['month']}), COUNT(DISTINCT {labels['quarter']}) "
                              f"FROM {plan.b.source}").to_pylist()[0]
        month, quarter = list(counts.values())
        period = "month" if month <= MAX_DATE_ITEMS else "quarter" if quarter <= MAX_DATE_ITEMS else "year"
    assert period in PERIODS
    plan.periods[col.name] = period
    return labels[period]


def _binned(plan, name, col, edges, n_bins, binning, has_missing, notes, raw=None, n=0):
    ab = binned_bins(name, edges, binning, has_missing)
    if edges.size + 1 < n_bins:
        from ..prepare.discretize import fewer_bins_note

        tied = sorted({float(v) for v in (raw or []) if list(raw).count(v) > 1})
        share = None
        if tied and n:
            num = plan.d.number(col)
            inside = " OR ".join(f"{num} = {plan.d.double(v)}" for v in tied)
            share = int(plan.b.fetch(f"SELECT COUNT(*) FROM {plan.b.source} WHERE {inside}").column(0)[0].as_py()) / n
        notes.append(fewer_bins_note(name, n_bins, binning, ab.labels, tied=tied, share=share))
    return ab, plan.d.bin_code(plan.d.number(col), ab.edges, ab.missing_code), col


def _collect(batches: Iterator[pa.RecordBatch], n_attr: int) -> tuple[list[pa.ChunkedArray], np.ndarray]:
    import pyarrow as pa

    keys: list[list[pa.Array]] = [[] for _ in range(n_attr)]
    tallies: list[np.ndarray] = []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        for a in range(n_attr):
            keys[a].append(batch.column(a))
        cols = [np.asarray(batch.column(i).to_numpy(zero_copy_only=False), dtype=np.float64)
                for i in range(n_attr, batch.num_columns)]
        tallies.append(np.column_stack(cols))
    width = None if not tallies else tallies[0].shape[1]
    weights = np.vstack(tallies) if tallies else np.empty((0, width or 1))
    return [pa.chunked_array(k) if k else pa.chunked_array([], pa.null()) for k in keys], weights


def _category_codes(name: str, keys: pa.ChunkedArray) -> tuple[np.ndarray, AttributeBins]:
    """Codes of a categorical attribute's distinct-row keys, its items named as discretize() does."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(keys.combine_chunks() if keys.num_chunks else keys)
    dictionary = encoded.dictionary.to_pylist()
    has_missing = encoded.null_count > 0
    value_codes, ab = categorical_bins(name, dictionary, has_missing)
    lookup = np.append(np.asarray(value_codes, dtype=np.int32), np.int32(ab.missing_code))
    idx = pc.fill_null(encoded.indices, len(dictionary)).to_numpy(zero_copy_only=False).astype(np.int64)
    return lookup[idx], ab


#: keywords of scan_duckdb and scan_spark that are not settings: how this run reads and reports
RUN_KEYWORDS = ("replicate", "engine", "exploratory", "quantiles", "progress")


def engine_settings(settings: Settings | None, keywords: dict) -> tuple[Settings, dict]:
    """(the settings, the run's other keywords) of a ``scan_duckdb`` or ``scan_spark`` call,
    validated before any data is read."""
    run = {k: keywords.pop(k) for k in RUN_KEYWORDS if k in keywords}
    return Settings.resolve(settings, keywords), run


def scan_engine(
    backend: Backend,
    settings: Settings,
    *,
    replicate=None,
    engine: str = "fast",
    exploratory: bool = True,
    quantiles: QuantileMode = "auto",
    progress: ProgressCallback | None = None,
) -> SliceTable:
    """The slice table of :func:`divergence.scan`, with binning, outcomes and compression run
    by ``backend``; see :func:`divergence.scan_duckdb` and :func:`divergence.scan_spark`:
    :func:`mine_engine`, then :func:`divergence.assess`."""
    from ..stats.assess import assess

    needs_its_table(settings.replication, replicate)
    table = mine_engine(backend, settings, engine=engine, quantiles=quantiles, progress=progress)
    out = assess(table, settings.statistics, replicate=replicate, exploratory=exploratory, progress=progress)
    if progress is not None:
        progress(progress_report("done", len(out) - 1, fraction=1.0))
    return out


def mine_engine(
    backend: Backend,
    settings: Settings,
    *,
    replicate=None,
    engine: str = "fast",
    quantiles: QuantileMode = "auto",
    progress: ProgressCallback | None = None,
) -> SliceTable:
    """The table of :func:`divergence.mine` (not assessed; ``replicate``, when given, kept in it for
    :func:`divergence.assess`), with binning, outcomes and compression run by ``backend``."""
    prepared = prepare_sql(backend, settings, engine=engine, quantiles=quantiles, progress=progress)
    table = measure(mine_prepared(prepared, settings.mining, engine=engine, progress=progress))
    if progress is not None:
        progress(progress_report("statistics", len(table) - 1))
    return dataclasses.replace(table, engine=backend.name,
                               replication=ReplicationRows(replicate) if replicate is not None else table.replication)


def _settle_threshold(plan: _Plan, settings: Settings) -> tuple[Settings, str | None]:
    """The settings with a score's missing threshold set from its range, as scan() sets it
    (:func:`divergence.prepare.score_threshold.score_threshold`), and the note."""
    r = settings.roles
    if r.score is None or r.prediction is not None or r.threshold is not None:
        return settings, None
    num = plan.number(r.score, "score")
    row = plan.b.fetch(f"SELECT MIN({num}) AS lo, MAX({num}) AS hi FROM {plan.b.source}").to_pylist()[0]
    span = None if row["lo"] is None else (float(row["lo"]), float(row["hi"]))
    threshold, note = threshold_from_range(r.score, span)
    return dataclasses.replace(settings, roles=dataclasses.replace(r, threshold=threshold)), note


def prepare_sql(
    backend: Backend,
    settings: Settings,
    *,
    engine: str = "fast",
    quantiles: QuantileMode = "auto",
    progress: ProgressCallback | None = None,
) -> Prepared:
    """The SQL implementation of :func:`divergence.prepare.prepared.prepare`: the outcomes, the
    attribute screen, the bins and the GROUP BY of items and tallies run by ``backend`` (a few
    passes over the data), to the same :class:`~divergence.prepare.prepared.Prepared`."""
    started = time.monotonic()  # the attribute screen's time limit counts from here, as scan()'s does
    roles, slicing, mining = settings.roles, settings.slicing, settings.mining
    if progress is not None:
        progress(progress_report("reading", 0))
    if roles.query is not None:
        raise DivergenceInputError(
            f"Query-level ranking metrics are computed in memory (rows ranked within each query): scan the table "
            f"with scan() or the dashboard, not the {backend.name} engine.")
    if settings.replication.kind in ("holdout", "split"):
        what = "holdout" if settings.replication.kind == "holdout" else "A split column to confirm on"
        raise DivergenceInputError(
            f"{what} is not available with the {backend.name} engine (it splits rows in memory); "
            "give a second table to replicate on instead."
        )
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown miner {engine!r}; choose from {', '.join(ENGINES)}.")
    if quantiles not in QUANTILE_MODES:
        raise DivergenceInputError(f"quantiles must be 'auto', 'exact' or 'approx'; got {quantiles!r}.")
    if not backend.columns:
        raise DivergenceInputError("The table has no columns.")
    plan = _Plan(backend)
    d = plan.d
    settings, threshold_note = _settle_threshold(plan, settings)
    roles = settings.roles
    outcomes = plan_outcomes(plan, roles)
    taken = roles.columns()
    bins = dict(slicing.bins)
    if slicing.attributes is None:
        candidates = [c for c in backend.columns if c.name not in taken]
    else:
        attrs = check_attributes(slicing.attributes, plan.by_name, taken)
        candidates = [plan.by_name[a] for a in attrs]
        for c in candidates:
            refuse_other(c, "an attribute")
    source = f"{backend.source} {_P}src " + " ".join(plan.joins) if plan.joins else backend.source
    # each outcome computed once per row in a projection: the aggregates then refer to short
    # column names (Spark's code generation gives up on very long expressions)
    derived = []
    for k, o in enumerate(outcomes):
        derived.append(f"{o.value} AS {_P}v{k}")
        o.value = f"{_P}v{k}"
        if o.target is not None:
            derived.append(f"{o.target} AS {_P}y{k}")
            o.target = f"{_P}y{k}"
        if o.score_range is not None:
            derived.append(f"{o.score_range} AS {_P}s{k}")
            o.score_range = f"{_P}s{k}"
    tree = slicing.binning == "tree"
    if tree:  # which rows choose the tree's cut points (divergence.prepare.cutpoints), from a hash of their values
        derived.append(f"{d.row_fraction(backend.columns, settings.statistics.seed)} AS {_P}cut")
    source = f"(SELECT *, {', '.join(derived)} FROM {source}) {_P}rows"
    # ---- pass 2: the profile
    row = backend.fetch(_profile_sql(plan, candidates, outcomes, source)).to_pylist()[0]
    n_rows = int(row["n_rows"])
    if n_rows == 0:
        raise DivergenceInputError("The table is empty: it has no rows.")
    _check_profile(plan, row)
    stats = {}
    for j, c in enumerate(candidates):
        stats[c.name] = {"nn": int(row[f"nn{j}"]), "ad": int(row[f"ad{j}"] or 0), "lo": row.get(f"lo{j}"),
                         "hi": row.get(f"hi{j}"), "int": bool(row.get(f"int{j}", 1)),
                         "nn_num": row.get(f"nnum{j}")}
    for k, o in enumerate(outcomes):
        if not row[f"od{k}"]:
            raise DivergenceInputError(
                f"Outcome '{o.name}' ({o.description}) is undefined on every row: no row qualifies "
                "(for a rate, check the positive label and that both classes occur)."
            )
        if o.score_range is not None and row[f"slo{k}"] is not None and (row[f"slo{k}"] < 0 or row[f"shi{k}"] > 1):
            raise DivergenceInputError(
                f"Metric '{o.name}' needs scores in [0, 1]; score column '{roles.score}' ranges "
                f"{row[f'slo{k}']:g} to {row[f'shi{k}']:g}."
            )
        o.bound = 2 * float(row[f"oa{k}"] or 0.0)  # |value - shift| <= 2 max |value|
        o.target_bound = 2 * float(row.get(f"oya{k}") or 0.0)
        o.binary = bool(row[f"ob{k}"])
        o.shift = 0.0 if o.binary else float(row[f"om{k}"])
        o.skew = 0.0 if o.binary else _population_skewness(row[f"osk{k}"], int(row[f"od{k}"]), d.name)
        if f"oy{k}" in row:
            o.target_shift = float(row[f"oy{k}"]) if row[f"oy{k}"] is not None else 0.0
    notes: list[str] = []
    if slicing.attributes is None:
        # the time limit (a safety net) covers the screen too, counted from the scan's start, as in scan()
        limit = mining.time_limit
        try:
            attrs, notes = _default_attributes(plan, taken, n_rows, stats, **roles.screen_keywords(),
                                               deadline=None if not limit else started + float(limit))
        except ScreenTimeout as out:
            raise DivergenceBudgetError(screen_timeout_message(out.where, float(limit))) from None
    else:
        attrs = [c.name for c in candidates]
    notes = list(getattr(backend, "notes", [])) + ([threshold_note] if threshold_note else []) + notes
    if not attrs:
        raise DivergenceInputError("There is no attribute column to slice by.")
    unknown = [c for c in bins if c not in attrs]
    if unknown:
        raise DivergenceInputError(
            f"Bins were given for {', '.join(map(repr, unknown))}, which "
            f"{'is not an attribute' if len(unknown) == 1 else 'are not attributes'} of this scan."
        )
    # ---- pass 3: value counts and quantiles
    cut = None
    if tree:
        from ..prepare.cutpoints import cut_fraction

        cut = _TreeCut(source=source, outcomes=[o.value for o in outcomes], share=cut_fraction(n_rows),
                       min_support=mining.min_support, n_rows=n_rows)
    attr_bins = _attribute_bins(plan, attrs, stats, n_rows, bins, slicing.quantile_bins, slicing.binning, quantiles,
                                notes, cut)
    if cut is not None:  # every number of the table from the rows that did not choose the cuts
        source = f"(SELECT * FROM {source} WHERE {_P}cut >= {d.double(cut.share)}) {_P}rest"
        n_rows -= cut.n_cut
    # ---- pass 4: the GROUP BY, streamed
    keys = [f"{sql} AS {_P}a{j}" for j, (_, sql, _) in enumerate(attr_bins)]
    tallies = ["COUNT(*)"]
    aux = []
    for k, o in enumerate(outcomes):
        x = f"({o.value} - {d.double(o.shift)})"
        b = None if o.binary else o.bound  # sums of 0/1 are exact in any order
        tallies += [f"COUNT({o.value})", f"COALESCE({d.fsum(x, b, n_rows)}, 0)",
                    f"COALESCE({d.fsum(f'{x} * {x}', None if b is None else b * b, n_rows)}, 0)"]
        if o.baseline in ADDITIVE_BASELINES and o.target is not None:
            y = f"(CASE WHEN {o.value} IS NOT NULL THEN {o.target} - {d.double(o.target_shift)} END)"
            b = o.target_bound
            aux += [f"COALESCE({d.fsum(y, b, n_rows)}, 0)", f"COALESCE({d.fsum(f'{y} * {y}', b * b, n_rows)}, 0)"]
    for o in outcomes:  # real outcomes: the cubed shifted value, for the skew guard (MetricInfo.cube)
        if not o.binary:
            x = f"({o.value} - {d.double(o.shift)})"
            b3 = o.bound ** 3
            aux += [f"COALESCE({d.fsum(f'{x} * {x} * {x}', b3, n_rows)}, 0)",
                    f"COALESCE({d.fsum(f'{x} * {x} * {x} * {x} * {x} * {x}', b3 * b3, n_rows)}, 0)"]
    select = keys + [f"{t} AS {_P}t{i}" for i, t in enumerate(tallies + aux)]
    group = ", ".join(str(j + 1) for j in range(len(keys)))
    sql = f"SELECT {', '.join(select)} FROM {source} GROUP BY {group}"
    key_arrays, weights = _collect(backend.stream(sql), len(keys))
    if weights.shape[0] == 0 or int(round(weights[:, 0].sum())) != n_rows:
        raise DivergenceInputError(
            f"The data changed while it was read: {n_rows:,} rows counted, "
            f"{int(round(weights[:, 0].sum())) if weights.size else 0:,} grouped. Nothing was mined; run the scan again."
        )
    codes = np.empty((weights.shape[0], len(attrs)), dtype=np.int32)
    final_bins: list[AttributeBins] = []
    for j, (ab, _, col) in enumerate(attr_bins):
        if ab is None:
            codes[:, j], ab = _category_codes(col.name, key_arrays[j])
            if col.name in plan.periods:
                ab = dataclasses.replace(ab, kind="date", period=plan.periods[col.name])
        else:
            codes[:, j] = np.asarray(key_arrays[j].to_numpy(), dtype=np.int32)
        final_bins.append(ab)
    infos = place_aux([MetricInfo(name=o.name, description=o.description, binary=o.binary, shift=o.shift,
                                  baseline=o.baseline, skew=o.skew) for o in outcomes],
                      [o.target_shift if o.target is not None else None for o in outcomes])
    notes.append(ENGINE_NOTE.format(engine={"duckdb": "DuckDB", "spark": "Spark"}.get(backend.name, backend.name)))
    params = table_params(settings, metrics=[o.name for o in outcomes], attributes=attrs, engine=backend.name,
                          quantiles=quantiles)
    return Prepared(codes=codes, weights=weights, bins=tuple(final_bins), metrics=tuple(infos), n_rows=n_rows,
                    notes=tuple(notes), params=params, started=started if slicing.attributes is None else None)
