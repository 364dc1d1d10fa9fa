"""Comparing two models slice by slice: where is the model worse than the reference?

Both models are scored on the same rows, so each slice's change is a paired comparison.
One mining pass carries both models' tallies: for a classifier, the count of rows in each
of the eight cells (true class, model's label, reference's label), from which every rate of
both models and the discordant counts follow; for a real-valued outcome (regression errors,
Brier), per metric the rows where both are defined, the sums of both models' outcomes and
the sums of the per-row difference d and its square.

Per slice and metric: the model's value ``M``, the reference's ``M_reference`` on the same
rows, the change ``M_change = M − M_reference``, a paired test and an interval of the change
(see :mod:`divergence.stats.paired`), q-values over the family (every itemset × every metric), the
derived minimum size from δ on the change, and the verdict:

1. ``worse`` / ``better``: significant after correction (q ≤ α) and the interval excludes 0,
   in the metric's bad or good direction (up is worse for error rates and regression
   errors; down is worse for accuracy, TPR and TNR), at any slice size (``M_meets_min_size``
   false marks it *indicative*).
2. ``no change``: the interval lies within ±δ.
3. ``too small``: neither, and fewer rows than n_min: the rows from which the interval of a
   change of δ is narrower than δ (from the spread of the per-row difference; independent of the
   number of slices tested). The rows a change of δ needs to be found among the family's tests
   at 80% power are ``n_power``, beside it.
4. ``noise``: neither, with at least n_min rows: no finding here.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..hooks import view
from ..prepare.model_outputs import apply_models
from ..prepare.score_threshold import DEFAULT_THRESHOLD, score_threshold
from ..errors import DivergenceInputError
from ..settings import Settings
from ..outcome_rules import WORSE_WHEN
from ..prepare.outcomes import (
    CLASSIFICATION_RULES,
    canonical_metric,
    numeric_column,
    positive_mask,
    regression_error,
    show_value,
    match_label,
)
from ..stats.paired import PooledNull, mcnemar_p, paired_proportion_interval, paired_t
from ..stats.stats import MIN_SIZE_POWER, adjust_p, interval_min_size, paired_min_size, smallest_enough, z_value
from ..table import MetricInfo, MinSize, SliceTable, find_metric, write_csv
from ..vocabulary import COMPARE_VERDICTS, METRIC_LABELS

__all__ = ["compare", "check_models", "Comparison", "ComparisonAssessment", "CompareMetric", "COMPARE_VERDICTS",
           "COMPARE_CLASSIFICATION_METRICS", "COMPARE_REGRESSION_METRICS", "compare_columns"]


COMPARE_CLASSIFICATION_METRICS = ("error", "fpr", "fnr", "accuracy", "tpr", "tnr", "brier")
COMPARE_REGRESSION_METRICS = ("abs_error", "squared_error")
_NOT_PAIRED = {
    "precision": "is measured on each model's own predicted positives",
    "fdr": "is measured on each model's own predicted positives",
    "npv": "is measured on each model's own predicted negatives",
    "for": "is measured on each model's own predicted negatives",
}
_NO_DIRECTION = {
    "positive_rate": "has no better or worse direction",
    "base_rate": "does not depend on the model",
    "signed_error": "has no better or worse direction (a bias either way is an error)",
}
#: default smallest change worth acting on: for a rate, and in standard deviations of the
#: reference's outcome for a real-valued one (as for a scan's divergence)
DEFAULT_DELTA_RATE = 0.05
DEFAULT_DELTA_SD = 0.2


@dataclass(frozen=True)
class CompareMetric:
    """One metric of a comparison: its name, what it means, and which way is worse."""

    name: str
    description: str
    binary: bool
    worse_when: str  # 'up' or 'down'


def compare_columns(metrics: Sequence[str]) -> list[str]:
    """The output columns, in order, for these metric names."""
    cols = ["itemset", "length", "support", "count"]
    for m in metrics:
        cols += [m, f"{m}_reference", f"{m}_change", f"{m}_change_ci_low", f"{m}_change_ci_high",
                 f"{m}_change_p", f"{m}_change_q", f"{m}_meets_min_size", f"{m}_verdict", f"{m}_finding",
                 f"{m}_explained_by", f"{m}_order"]
    return cols


@dataclass(frozen=True)
class ComparisonAssessment:
    """How two models' comparison was assessed (:func:`divergence.compare`)."""

    confidence: float
    correction: str
    #: tests in the family the q-values were corrected over (itemsets × metrics)
    n_tested: int
    family: str
    min_size: Mapping[str, MinSize]
    rows_compared: int
    #: rows left out of every comparison (the target or a model's prediction missing)
    rows_left_out: int
    #: per metric, the test and the interval of the change
    test: Mapping[str, str]
    interval: Mapping[str, str]
    #: the columns holding the model's and the reference's outputs
    model: str | None
    reference: str | None


@dataclass(frozen=True, eq=False)
class Comparison:
    """Every mined slice with both models' values, their change, a paired test and a verdict.

    ``frame`` has one row per itemset (the whole dataset first, its itemset empty) with the
    columns of :func:`compare_columns`. ``details`` holds per metric the rows where it is
    defined (``M_count``) and, for 0/1 outcomes, the discordant counts (``M_n10``: the model
    1 and the reference 0; ``M_n01``); ``assessment`` the settings and derived numbers.
    """

    table: SliceTable
    metrics: tuple[CompareMetric, ...]
    assessment: ComparisonAssessment
    details: dict
    notes: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"Comparison({len(self):,} itemsets incl. the whole dataset, {self.n_rows:,} rows, "
                f"metrics {', '.join(self.metric_names)}, min_support={self.table.min_support:g})")

    def _repr_html_(self) -> str:
        """The comparison in a notebook: per metric the worst slice and the first rows, the notes."""
        return view("comparison_html")(self)

    @property
    def plot(self):
        """Figures of this comparison: ``plot.change(metric)`` (a Plotly figure, as the Compare page draws it)."""
        return view("ComparisonPlots")(self)

    def __len__(self) -> int:
        return len(self.table)

    @property
    def n_rows(self) -> int:
        return self.table.n_rows

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def metric(self, name: str | None = None) -> CompareMetric:
        """The metric called ``name`` (the first one when None)."""
        return find_metric(self.metrics, name, "this comparison")

    @property
    def frame(self) -> pd.DataFrame:
        return self.table.frame

    @property
    def n_tested(self) -> int:
        """Tests in the family the q-values are corrected over (itemsets × metrics)."""
        return int(self.assessment.n_tested)

    def lookup(self, itemset: str) -> int:
        return self.table.lookup(itemset)

    def row(self, itemset: str) -> pd.Series:
        return self.table.row(itemset)

    def overall(self, metric: str | None = None) -> pd.Series:
        """The whole dataset's row restricted to one metric's columns."""
        m = self.metric(metric).name
        return self.frame.iloc[0][[c for c in compare_columns([m]) if c.startswith(m)]]

    def headline(self, metric: str | None = None) -> dict:
        """The whole dataset's numbers for one metric and the count of slices per verdict (in
        the order of :data:`COMPARE_VERDICTS`): what the command line and the dashboard lead with."""
        m = self.metric(metric)
        name = m.name
        whole = self.frame.iloc[0]
        counts = self.frame[f"{name}_verdict"].iloc[1:].value_counts()
        return {
            "metric": name, "description": m.description, "binary": m.binary, "worse_when": m.worse_when,
            "model": float(whole[name]), "reference": float(whole[f"{name}_reference"]),
            "change": float(whole[f"{name}_change"]), "change_low": float(whole[f"{name}_change_ci_low"]),
            "change_high": float(whole[f"{name}_change_ci_high"]), "q": float(whole[f"{name}_change_q"]),
            "verdict": str(whole[f"{name}_verdict"]), "rows": int(self.details[f"{name}_count"][0]),
            "verdicts": {v: int(counts.get(v, 0)) for v in COMPARE_VERDICTS},
            "n_slices": len(self) - 1, "n_tested": self.n_tested, "min_size": self.assessment.min_size[name],
            "findings": ({v: int(((self.frame[f"{name}_verdict"] == v) & self.frame[f"{name}_finding"]).iloc[1:].sum())
                          for v in ("worse", "better")} if f"{name}_finding" in self.frame else {}),
            "model_name": self.assessment.model, "reference_name": self.assessment.reference,
        }

    def harm(self, metric: str | None = None) -> np.ndarray:
        """The change signed so that larger is worse (the change itself when up is worse)."""
        m = self.metric(metric)
        change = np.asarray(self.table.columns[f"{m.name}_change"], dtype=float)
        return change if m.worse_when == "up" else -change

    def top(self, k: int = 10, *, metric: str | None = None, verdict: str | Sequence[str] | None = None,
            min_length: int = 0, by: str | None = None) -> pd.DataFrame:
        """The first k itemsets in the default order (``M_order``: slices of at least the minimum
        size first, then the distinct findings of the change, the other significant slices and
        the rest; the change in the bad direction first, largest first), optionally of some
        verdicts; ``by="harm"``: by the change in the bad direction alone (ties to the larger
        support), or any column (largest first)."""
        m = self.metric(metric).name
        f = self.frame.assign(_harm=self.harm(m))
        f = f[f["length"] >= min_length]
        if verdict is not None:
            f = f[f[f"{m}_verdict"].isin([verdict] if isinstance(verdict, str) else list(verdict))]
        if by is None and f"{m}_order" in f.columns:  # the whole dataset (order 0) after its slices
            key = np.where(f["length"].to_numpy() == 0, np.inf, f[f"{m}_order"].to_numpy(dtype=float))
            return f.iloc[np.argsort(key, kind="stable")].drop(columns="_harm").head(k)
        key = "_harm" if by in (None, "harm") else by
        return f.sort_values([key, "support"], ascending=[False, False], na_position="last",
                             kind="stable").drop(columns="_harm").head(k)

    def change_table(self, metric: str | None = None) -> SliceTable:
        """The mined table with the change as its outcome: divergence = change(I) − change(∅),
        so :mod:`divergence.explain.shapley` explains which items drive a slice's change away from the
        whole dataset's (the metric is called ``M_change``)."""
        m = self.metric(metric)
        change = np.asarray(self.table.columns[f"{m.name}_change"], dtype=float)
        name = f"{m.name}_change"
        info = MetricInfo(name=name, description=f"change in {m.description}", binary=False)
        cols = {"support": self.table.columns["support"], "count": self.table.columns["count"],
                name: change, f"{name}_divergence": change - change[0]}
        kept = self.table.kept_rows
        return dataclasses.replace(self.table, columns=cols, metrics=(info,),
                                   kept_rows=dataclasses.replace(kept, outcomes=None) if kept is not None else None,
                                   assessment=None)

    def contributions(self, itemset: str, metric: str | None = None) -> pd.DataFrame:
        """Shapley contributions of a slice's items to its change beyond the whole dataset's
        (they sum to change(I) − change(∅)); columns ``item``, ``contribution``."""
        from ..explain.shapley import item_contributions

        m = self.metric(metric)
        out = item_contributions(self.change_table(m.name), itemset, metric=f"{m.name}_change")
        out.attrs.update(metric=m.name, change=float(self.frame.iloc[self.lookup(itemset)][f"{m.name}_change"]),
                         overall_change=float(self.frame.iloc[0][f"{m.name}_change"]))
        return out

    def to_csv(self, path, *, neutralise_formulas: bool = True) -> None:
        """Write the table as CSV: floats at full precision, undefined values as empty cells;
        formula-like text gets a leading apostrophe (see :func:`divergence.table.write_csv`)."""
        write_csv(self.frame, path, neutralise_formulas=neutralise_formulas)


# ----------------------------------------------------------------------------- input

def _check_metrics(metrics, regression: bool, has_scores: bool) -> list[str]:
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    names = [canonical_metric(m) for m in (metrics or [])]
    if not names:
        names = ["abs_error"] if regression else ["error", "fpr", "fnr"]
    seen = set()
    for m in names:
        if m in seen:
            raise DivergenceInputError(f"Metric {m!r} is asked for twice.")
        seen.add(m)
        if m in _NOT_PAIRED:
            raise DivergenceInputError(
                f"Metric {m!r} {_NOT_PAIRED[m]}, which differ between the two models: its change is "
                f"not a paired comparison. Compare {', '.join(COMPARE_CLASSIFICATION_METRICS[:6])} instead."
            )
        if m in _NO_DIRECTION:
            raise DivergenceInputError(f"Metric {m!r} {_NO_DIRECTION[m]}: a comparison cannot call it worse or better.")
        allowed = COMPARE_REGRESSION_METRICS if regression else COMPARE_CLASSIFICATION_METRICS
        if m not in allowed:
            kind = "regression" if regression else "classification"
            hint = ("" if regression or m not in COMPARE_REGRESSION_METRICS
                    else " (a regression metric: add --regression / regression=True)")
            raise DivergenceInputError(
                f"Unknown {kind} metric {m!r} for a comparison{hint}; choose from {', '.join(allowed)}."
            )
        if m == "brier" and not has_scores:
            raise DivergenceInputError("Metric 'brier' needs a score for both models (score and reference_score).")
    return names


def _column(df: pd.DataFrame, col: str | None, role: str) -> pd.Series:
    if col not in df.columns:
        raise DivergenceInputError(f"{role.capitalize()} column '{col}' is not in the data.")
    return df[col]


def _labels(df: pd.DataFrame, col: str, role: str, target: str, positive) -> np.ndarray:
    """A label column as 1.0 (positive), 0.0, NaN (missing); an error naming the column when it
    is not binary or holds a value the target does not have."""
    series = _column(df, col, role)
    y_values = list(pd.unique(df[target].dropna()))
    stray = [v for v in pd.unique(series.dropna()) if not any(match_label(v, t) for t in y_values)]
    if stray and len(y_values) == 2:
        shown = ", ".join(sorted(str(v) for v in y_values))
        raise DivergenceInputError(
            f"{role.capitalize()} column '{col}' holds {show_value(stray[0])}, which is not a value of "
            f"target column '{target}' ({shown})."
        )
    return positive_mask(series, positive, col, role)


def _scores(df: pd.DataFrame, col: str, role: str, metrics: Sequence[str]) -> np.ndarray:
    s = numeric_column(_column(df, col, role), col, role)
    if "brier" in metrics:
        finite = s[~np.isnan(s)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise DivergenceInputError(
                f"Metric 'brier' needs scores in [0, 1]; {role} column '{col}' ranges "
                f"{finite.min():g} to {finite.max():g}."
            )
    return s


def _check_threshold(value, name: str) -> float:
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise DivergenceInputError(f"{name} must be a number; got {value!r}.") from None
    if not math.isfinite(t):
        raise DivergenceInputError(f"{name} must be a finite number; got {value!r}.")
    return t


# ----------------------------------------------------------------------------- compare

#: the settings compare() takes (the rest of Settings has no meaning for a comparison)
COMPARE_KEYWORDS = ("target", "prediction", "score", "threshold", "positive", "metrics", "regression",
                    "reference", "reference_score", "reference_threshold", "attributes", "bins", "quantile_bins",
                    "binning", "min_support", "max_length", "exhaustive", "max_slices", "max_work", "time_limit", "delta",
                    "confidence", "correction")


def compare(data: pd.DataFrame, settings: Settings | None = None, *, progress=None, **keywords) -> Comparison:
    """Compare a model with a reference model on every slice with support >= ``min_support``.

    The comparison is described by a :class:`~divergence.settings.Settings` (its roles name the
    model, its compare section the reference), by these keywords, or both:

    data : the table, one row per example, both models' predictions as columns.
    target : the true label (classification, with ``positive``) or value (regression).
    prediction, score, threshold : the model: predicted labels, or a score predicted
        positive at ``score >= threshold``; with ``regression=True`` predicted values.
    reference, reference_score, reference_threshold : the reference model (the one in
        production), the same way (``reference_threshold`` defaults to ``threshold``).
    metrics : for a classifier ``error``, ``fpr``, ``fnr``, ``accuracy``, ``tpr``, ``tnr``,
        ``brier`` (scores in [0, 1]; default error, fpr, fnr); for a regressor
        ``abs_error``, ``squared_error`` (default abs_error).
    attributes, bins, quantile_bins, binning, min_support, max_length : the slices, as
        for :func:`divergence.scan`.
    delta : the smallest change worth acting on (one number, or per metric); default 0.05
        for a rate, 0.2 standard deviations of the reference's outcome otherwise.
    confidence : of every interval; α = 1 − confidence is the bar for the q-values.
    correction : ``bh`` (Benjamini–Hochberg q-values), ``bonferroni`` or ``holm``, over the
        family of every itemset (the whole dataset included) and every metric.
    exhaustive, max_slices, max_work, time_limit, progress : the slices listed and the budget, as for
        :func:`divergence.scan` (default: each distinct set of rows once, by its shortest
        description).

    Only rows where the target and both models' predictions are known are compared (the
    notes say how many were left out), so both values of a slice come from the same rows.
    """
    from ..data.columns import check_frame
    from ..mining.mined import mine_prepared
    from ..prepare.prepared import prepare

    models = apply_models(data, keywords, progress=progress, compare=True)  # model=, reference= estimators
    if models.records:
        return models.stamp(compare(models.data, settings, progress=progress, **models.keywords))
    st = _resolve(settings, keywords)
    r, sl, mi, cp = st.roles, st.slicing, st.mining, st.compare
    regression = r.regression
    reference, reference_score = cp.reference, cp.reference_score
    bins, quantile_bins, binning = sl.bins, sl.quantile_bins, sl.binning
    s, max_length, exhaustive = mi.min_support, mi.max_length, mi.exhaustive
    confidence, correction = st.statistics.confidence, st.statistics.correction
    df = check_frame(data)
    prepared = _model_outcomes(df, st)
    names, weights, per_metric, diffs = prepared.names, prepared.weights, prepared.per_metric, prepared.diffs
    usable, left_out, notes = prepared.usable, prepared.left_out, list(prepared.notes)
    model_col, ref_col, threshold = prepared.model_col, prepared.ref_col, prepared.threshold
    if r.score is not None and r.threshold is None:  # the threshold set from the score's range, screened at it
        st = dataclasses.replace(st, roles=dataclasses.replace(r, threshold=threshold))
    # ---- slices: the one preparation (attributes, bins) with both models' tallies, mined once, as scan() mines
    sliced = prepare(df, st, tallies=weights, reserved=[c for c in (reference, reference_score) if c is not None],
                     role="a target or a model")
    attrs = [b.name for b in sliced.bins]
    mined = mine_prepared(dataclasses.replace(sliced, notes=tuple(notes) + sliced.notes), mi, progress=progress)
    tallies = mined.tallies
    notes = list(mined.notes)
    # ---- statistics
    columns: dict = {"support": tallies[:, 0] / float(len(df)), "count": np.rint(tallies[:, 0]).astype(np.int64)}
    details: dict = {}
    infos: list[CompareMetric] = []
    pvals: list[np.ndarray] = []
    min_size: dict = {}
    reference_sd: dict = {}
    for m in names:
        info = CompareMetric(name=m, description=METRIC_LABELS.get(m, m), binary=m != "brier" and not regression,
                             worse_when=WORSE_WHEN[m])
        infos.append(info)
        stats = per_metric[m](tallies)
        n, value, ref_value, change = stats["n"], stats["value"], stats["reference"], stats["change"]
        if info.binary:
            p = mcnemar_p(stats["n10"], stats["n01"])
            low, high = paired_proportion_interval(stats["n10"], stats["n01"], n, confidence)
            details[f"{m}_n10"], details[f"{m}_n01"] = stats["n10"].astype(np.int64), stats["n01"].astype(np.int64)
        else:
            var = stats["var"]
            p_t, lo_t, hi_t = paired_t(n, change, var, confidence)
            pool = PooledNull(diffs[m])
            p_pool = pool.p_value(n, change)
            lo_p, hi_p = pool.interval(n, change, confidence)
            p = np.where(np.isnan(p_t) | np.isnan(p_pool), np.nan, np.fmax(p_t, p_pool))
            low, high = np.fmin(lo_t, lo_p), np.fmax(hi_t, hi_p)
            low = np.where(np.isnan(p), np.nan, low)
            high = np.where(np.isnan(p), np.nan, high)
            details[f"{m}_p_t"], details[f"{m}_p_pooled"] = p_t, p_pool
        undefined = ~(n > 0)
        p = np.where(undefined, np.nan, p)
        details[f"{m}_count"] = np.rint(n).astype(np.int64)
        columns[m] = value
        columns[f"{m}_reference"] = ref_value
        columns[f"{m}_change"] = change
        columns[f"{m}_change_ci_low"] = low
        columns[f"{m}_change_ci_high"] = high
        columns[f"{m}_change_p"] = p
        pvals.append(p)
        reference_sd[m] = stats["reference_sd"]
    # ---- one family: every itemset (the whole dataset included) x every metric
    allp = np.concatenate(pvals) if pvals else np.zeros(0)
    n_tests = int(np.isfinite(allp).sum())
    for info in infos:
        min_size[info.name] = _min_size(info, diffs[info.name], reference_sd[info.name],
                                        st.statistics.delta_for(info.name), confidence, n_tests)
    allq = adjust_p(allp, correction)
    alpha = 1.0 - float(confidence)
    n_items = tallies.shape[0]
    for k, info in enumerate(infos):
        m = info.name
        q = allq[k * n_items:(k + 1) * n_items]
        columns[f"{m}_change_q"] = q
        n = details[f"{m}_count"]
        meets = n >= min_size[m].n_min
        columns[f"{m}_meets_min_size"] = meets
        columns[f"{m}_verdict"] = _verdicts(info, columns[f"{m}_change"], columns[f"{m}_change_ci_low"],
                                            columns[f"{m}_change_ci_high"], q, meets, alpha,
                                            min_size[m].delta)
    _change_findings(mined, columns, infos, per_metric, alpha, correction, allp, int(np.isfinite(allp).sum()))
    order = compare_columns(names)[2:]
    columns = {c: columns[c] for c in order}
    params = dict(target=r.target, prediction=r.prediction, reference=reference, score=r.score, threshold=threshold,
                  reference_score=reference_score, reference_threshold=cp.reference_threshold, positive=r.positive,
                  metrics=names, regression=regression, attributes=list(attrs),
                  bins={k: (v if isinstance(v, (int, str)) else list(v)) for k, v in (bins or {}).items()},
                  quantile_bins=quantile_bins, binning=binning, min_support=s, max_length=max_length,
                  exhaustive=bool(exhaustive))
    table = dataclasses.replace(
        mined, columns=columns, notes=tuple(notes), params=params,
        metrics=tuple(MetricInfo(name=i.name, description=i.description, binary=i.binary) for i in infos),
    )
    assessment = ComparisonAssessment(
        confidence=float(confidence), correction=correction, n_tested=int(np.isfinite(allp).sum()),
        family="itemsets x metrics", min_size=min_size, rows_compared=int(usable.sum()), rows_left_out=left_out,
        test={m: ("McNemar's exact test" if i.binary else
                  "max of the paired t-test and the pooled saddlepoint test") for m, i in zip(names, infos)},
        interval={m: ("Tango's score interval" if i.binary else
                      "union of the paired t and pooled saddlepoint intervals") for m, i in zip(names, infos)},
        model=model_col, reference=ref_col,
    )
    return Comparison(table=table, metrics=tuple(infos), assessment=assessment, details=details,
                      notes=tuple(notes), params=params)


def _change_findings(mined: SliceTable, columns: dict, infos, per_metric, alpha: float, correction: str,
                     allp: np.ndarray, n_tested: int) -> None:
    """Distinct findings of the change (:mod:`divergence.stats.findings` on the per-row difference model
    minus reference): a slice worse (or better) only because it holds a worse (better) finding's
    rows is explained by it; a model worse everywhere alike has no finding. Adds ``M_finding``,
    ``M_explained_by`` and ``M_order`` (the default order: slices of at least the minimum size
    first, then the distinct findings, the other significant slices and the rest, the change in the
    bad direction first, largest first)."""
    from ..stats.findings import default_order, distinct_findings, significant_slices
    from ..stats.stats import corrected_level, z_value

    level = corrected_level(allp, alpha, correction)
    n_items = len(mined)
    itemsets = mined.itemsets
    for info in infos:
        m = info.name
        sums = []
        for tallies in (mined.tallies, mined.lattice.distinct_tallies):
            st = per_metric[m](np.asarray(tallies, dtype=float))
            n = np.asarray(st["n"], dtype=float)
            if "n10" in st:
                s1, s2 = st["n10"] - st["n01"], st["n10"] + st["n01"]
            else:
                change = np.nan_to_num(np.asarray(st["change"], dtype=float))
                var = np.nan_to_num(np.asarray(st["var"], dtype=float))
                s1, s2 = n * change, var * np.maximum(n - 1.0, 0.0) + n * change * change
            sums.append(np.column_stack([np.asarray(tallies, dtype=float)[:, 0], n, s1, s2]))
        table = dataclasses.replace(mined, tallies=sums[0], lattice=dataclasses.replace(mined.lattice,
                                                                                          distinct_tallies=sums[1]),
                                    metrics=(MetricInfo(name=m, description=info.description, binary=False),),
                                    columns={"support": columns["support"]})
        significant = significant_slices(columns[f"{m}_change_q"], columns[f"{m}_change_ci_low"],
                                         columns[f"{m}_change_ci_high"], alpha)
        if mined.lattice.distinct_codes is not None:
            found = distinct_findings(table, 0, significant, alpha, correction, level, n_tested,
                                      budget=(4.0, 200_000.0),
                                      first_bar=z_value(level))
            finding, by = found.finding, found.explained_by
        else:
            finding, by = np.zeros(n_items, dtype=bool), np.full(n_items, -1)
        explained = np.full(n_items, "", dtype=object)
        explained[by >= 0] = itemsets[by[by >= 0]]
        columns[f"{m}_finding"] = finding
        columns[f"{m}_explained_by"] = explained
        cols = {"support": columns["support"], f"{m}_meets_min_size": columns[f"{m}_meets_min_size"],
                f"{m}_finding": finding}
        columns[f"{m}_order"] = default_order(cols, m, significant, estimate=columns[f"{m}_change"])


@dataclass(frozen=True)
class _Prepared:
    names: list
    weights: np.ndarray
    per_metric: dict
    diffs: dict
    usable: np.ndarray
    left_out: int
    notes: tuple
    model_col: str
    ref_col: str
    threshold: float


def _resolve(settings: Settings | None, keywords: Mapping) -> Settings:
    """The comparison's settings from a Settings, keywords or both (an unknown keyword refused)."""
    unknown = [k for k in keywords if k not in COMPARE_KEYWORDS]
    if unknown:
        raise DivergenceInputError(f"compare takes no {unknown[0]!r}; it takes {', '.join(COMPARE_KEYWORDS)}.")
    return Settings.resolve(settings, keywords)


def _model_outcomes(df: pd.DataFrame, st: Settings) -> _Prepared:
    """Both models' outcomes (per row, with their tally columns) as the settings' roles (the model) and compare section (the
    reference, the metrics) describe them."""
    r, cp = st.roles, st.compare
    return _models(df, target=r.target, prediction=r.prediction, reference=cp.reference, score=r.score,
                   threshold=r.threshold, reference_score=cp.reference_score,
                   reference_threshold=cp.reference_threshold, positive=r.positive,
                   metrics=list(cp.metrics or r.metrics) or None, regression=r.regression)


def _models(df: pd.DataFrame, *, target, prediction, reference, score, threshold, reference_score,
            reference_threshold, positive, metrics, regression) -> _Prepared:
    """Both models' per-row outcomes and the tally columns, every input checked."""
    if target is None:
        raise DivergenceInputError("A comparison needs a target column (the true label or value).")
    _column(df, target, "target")
    if (prediction is None) == (score is None):
        raise DivergenceInputError("Give the model as a prediction column or as a score column (one of them).")
    if (reference is None) == (reference_score is None):
        raise DivergenceInputError(
            "Give the reference model as a reference column or as a reference score column (one of them)."
        )
    if regression and (score is not None or reference_score is not None):
        raise DivergenceInputError("A regression comparison takes predicted values (prediction and reference), not scores.")
    names = _check_metrics(metrics, regression, score is not None and reference_score is not None)
    model_col = prediction if prediction is not None else score
    ref_col = reference if reference is not None else reference_score
    notes: list[str] = []
    given = threshold is not None
    if score is not None and not regression:  # without a threshold: 0.5 within [0, 1], else refused (issue 44)
        threshold, note = score_threshold(df, score, None if threshold is None else _check_threshold(threshold, "threshold"))
        notes += [note] if note else []
    threshold = _check_threshold(DEFAULT_THRESHOLD if threshold is None else threshold, "threshold")
    if reference_threshold is not None:
        ref_threshold = _check_threshold(reference_threshold, "reference_threshold")
    elif reference_score is not None and not regression and not (given and score is not None):
        ref_threshold, note = score_threshold(df, reference_score, None, role="reference score")
        notes += [note] if note else []
    else:
        ref_threshold = threshold  # the model's own threshold, given for a score
    if model_col == ref_col and (prediction is not None or threshold == ref_threshold):
        raise DivergenceInputError(
            f"The reference is the model itself (column '{ref_col}'{'' if prediction else ' at the same threshold'}): "
            "there is nothing to compare."
        )
    # ---- per-row values of both models
    if regression:
        y = numeric_column(df[target], target, "target")
        pa = numeric_column(_column(df, prediction, "prediction"), prediction, "prediction")
        pb = numeric_column(_column(df, reference, "reference"), reference, "reference")
        usable = ~(np.isnan(y) | np.isnan(pa) | np.isnan(pb))
    else:
        if positive is None:
            raise DivergenceInputError(f"Name the positive label of target column '{target}'.")
        y = positive_mask(df[target], positive, target, "target")
        sa = sb = None
        if prediction is not None:
            pa = _labels(df, prediction, "prediction", target, positive)
        else:
            sa = _scores(df, score, "score", names)
            pa = np.where(np.isnan(sa), np.nan, (sa >= threshold).astype(float))
        if reference is not None:
            pb = _labels(df, reference, "reference", target, positive)
        else:
            sb = _scores(df, reference_score, "reference score", names)
            pb = np.where(np.isnan(sb), np.nan, (sb >= ref_threshold).astype(float))
        usable = ~(np.isnan(y) | np.isnan(pa) | np.isnan(pb))
    if not usable.any():
        raise DivergenceInputError(
            f"No row has the target '{target}' and both models' predictions ('{model_col}', '{ref_col}')."
        )
    left_out = int((~usable).sum())
    if left_out:
        notes.append(f"{left_out:,} of {len(df):,} rows left out of every comparison: the target or a "
                     "model's prediction is missing there (both models are compared on the same rows).")
    # ---- per-row tally columns
    if regression:
        weights, per_metric, diffs = _regression_weights(names, y, pa, pb, usable)
    else:
        weights, per_metric, diffs = _classification_weights(names, y, pa, pb, sa, sb, usable)
    if all(np.all(d == 0) for d in diffs.values()):
        raise DivergenceInputError(
            f"Reference column '{ref_col}' gives the same {', '.join(names)} as "
            f"{'prediction' if prediction else 'score'} column '{model_col}' on every row: there is nothing to compare."
        )
    return _Prepared(names=names, weights=weights, per_metric=per_metric, diffs=diffs, usable=usable,
                     left_out=left_out, notes=tuple(notes), model_col=model_col, ref_col=ref_col,
                     threshold=threshold)


def check_models(data: pd.DataFrame, settings: Settings | None = None, **keywords) -> dict:
    """Check a comparison's models without mining (a form can call it on every change): the
    errors :func:`compare` would raise about the columns, else what would be compared. The
    settings as for :func:`compare`."""
    from ..data.columns import check_frame

    p = _model_outcomes(check_frame(data), _resolve(settings, keywords))
    return {"metrics": list(p.names), "rows_compared": int(p.usable.sum()), "rows_left_out": p.left_out,
            "model": p.model_col, "reference": p.ref_col,
            "counts": {m: int(p.per_metric[m](p.weights.sum(axis=0)[None, :])["n"][0]) for m in p.names}}


def _classification_weights(names, y, pa, pb, sa, sb, usable):
    """Tally columns: the row count, the eight cells (true class, model, reference) on the
    compared rows, and for Brier the defined count and sums of both scores' squared errors
    and of their difference (shifted by its mean) and its square."""
    n = y.size
    yb = np.nan_to_num(y).astype(bool)
    ab = np.nan_to_num(pa).astype(bool)
    bb = np.nan_to_num(pb).astype(bool)
    cell = np.where(usable, 4 * yb + 2 * ab + bb, -1)
    cols = [np.ones(n)] + [(cell == k).astype(np.float64) for k in range(8)]
    cy = np.array([k >> 2 & 1 for k in range(8)], dtype=bool)
    ca = np.array([k >> 1 & 1 for k in range(8)], dtype=bool)
    cb = np.array([k & 1 for k in range(8)], dtype=bool)
    per_metric, diffs = {}, {}
    for m in names:
        if m == "brier":
            a = np.where(usable, (np.nan_to_num(sa) - yb) ** 2, np.nan)
            b = np.where(usable, (np.nan_to_num(sb) - yb) ** 2, np.nan)
            start = len(cols)
            more, per_metric[m], diffs[m] = _real_columns(a, b, usable, start)
            cols += more
            continue
        _, defined_fn, one_fn = CLASSIFICATION_RULES[m]
        defined = defined_fn(cy, ca)  # depends on the true class only: the same rows for both models
        out_a = one_fn(cy, ca).astype(bool) & defined
        out_b = one_fn(cy, cb).astype(bool) & defined
        d10 = out_a & ~out_b
        d01 = ~out_a & out_b

        def stats(t, defined=defined, out_a=out_a, out_b=out_b, d10=d10, d01=d01):
            c = t[:, 1:9]
            nn = c[:, defined].sum(axis=1)
            ones_a, ones_b = c[:, out_a].sum(axis=1), c[:, out_b].sum(axis=1)
            n10, n01 = c[:, d10].sum(axis=1), c[:, d01].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                safe = np.where(nn > 0, nn, 1.0)
                value = np.where(nn > 0, ones_a / safe, np.nan)
                ref = np.where(nn > 0, ones_b / safe, np.nan)
                change = np.where(nn > 0, (n10 - n01) / safe, np.nan)
            p0 = ref[0]
            return {"n": nn, "value": value, "reference": ref, "change": change, "n10": n10, "n01": n01,
                    "reference_sd": math.sqrt(max(p0 * (1 - p0), 0.0)) if np.isfinite(p0) else 0.0}

        per_metric[m] = stats
        row_defined = usable & defined_fn(yb, ab)
        oa = one_fn(yb, ab).astype(float)
        ob = one_fn(yb, bb).astype(float)
        diffs[m] = (oa - ob)[row_defined]
    return np.column_stack(cols), per_metric, diffs


def _regression_weights(names, y, pa, pb, usable):
    cols = [np.ones(y.size)]
    per_metric, diffs = {}, {}
    for m in names:
        a, b = regression_error(m, pa - y), regression_error(m, pb - y)
        more, per_metric[m], diffs[m] = _real_columns(np.where(usable, a, np.nan), np.where(usable, b, np.nan),
                                                      usable, len(cols))
        cols += more
    return np.column_stack(cols), per_metric, diffs


def _real_columns(a, b, usable, start):
    """Tally columns of a real outcome of both models: defined count, shifted sums of each
    model's outcome, shifted sum of the difference and of its square (shifts: whole-dataset
    means, for numerical care)."""
    d = a - b
    sa, sb, sd = (float(np.mean(x[usable])) for x in (a, b, d))
    ac = np.where(usable, a - sa, 0.0)
    bc = np.where(usable, b - sb, 0.0)
    dc = np.where(usable, d - sd, 0.0)
    cols = [usable.astype(np.float64), ac, bc, dc, dc * dc]
    ref_sd = float(np.std(b[usable]))

    def stats(t):
        nn = t[:, start]
        with np.errstate(invalid="ignore", divide="ignore"):
            safe = np.where(nn > 0, nn, 1.0)
            value = np.where(nn > 0, sa + t[:, start + 1] / safe, np.nan)
            ref = np.where(nn > 0, sb + t[:, start + 2] / safe, np.nan)
            md = t[:, start + 3] / safe
            change = np.where(nn > 0, sd + md, np.nan)
            ss = np.maximum(t[:, start + 4] - t[:, start + 3] * md, 0.0)
            var = np.where(nn > 1, ss / np.where(nn > 1, nn - 1.0, 1.0), np.nan)
        return {"n": nn, "value": value, "reference": ref, "change": change, "var": var, "reference_sd": ref_sd}

    return cols, stats, d[usable]


def _min_size(info: CompareMetric, diffs: np.ndarray, reference_sd: float, delta, confidence: float, tests: int,
              power: float = MIN_SIZE_POWER) -> MinSize:
    """n_min, the rows from which the interval of a slice's change (at ``confidence``, for a change
    of δ) is narrower than δ, and n_power, the rows at which a change of δ is found worse (or
    better) after the correction with probability ``power`` at the bar α/m (m: the tests of the
    family), both from the spread of the per-row difference (model − reference) over the whole
    dataset."""
    sigma = float(np.std(diffs)) if diffs.size else 0.0
    if delta is None:
        if info.binary:
            delta, source = DEFAULT_DELTA_RATE, "default: 5 points of rate"
        else:
            scale = reference_sd if reference_sd > 0 else sigma
            delta = DEFAULT_DELTA_SD * scale
            source = (f"default: {DEFAULT_DELTA_SD:g} standard deviations of the reference's {info.name}"
                      if reference_sd > 0 else f"default: {DEFAULT_DELTA_SD:g} σ_d")
            if not delta > 0:  # neither model's outcome varies: any change is resolved by one row
                delta = 1.0
    else:
        source = "chosen"
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        raise DivergenceInputError(f"delta for '{info.name}' must be a positive number; got {delta!r}.") from None
    if not (delta > 0 and math.isfinite(delta)):
        raise DivergenceInputError(f"delta for '{info.name}' must be a positive number; got {delta!r}.")
    alpha = 1.0 - float(confidence)
    tests = max(int(tests), 1)
    bar = alpha / tests
    n_total = int(diffs.size)
    z = z_value(confidence)
    level = f"{float(confidence):.0%}".replace(".0%", "%")
    if info.binary:
        # the per-row difference is -1, 0 or 1: its discordant share pi (the rows where the models
        # differ) at the slice's side is at least |delta|
        discordant = float(np.mean(diffs != 0)) if diffs.size else 0.0
        pi = max(discordant, delta)
        n_min = _paired_rate_min_size(delta, pi, confidence)
        closed = (2.0 * z) ** 2 * max(pi - delta * delta, 0.0) / delta ** 2
        width_text = (f"the {level} interval of the change (Tango's) of a slice whose change is δ, the models "
                      f"disagreeing on π = {pi:.4g} of its rows (the whole dataset's {discordant:.4g}, at least δ)")
        closed_text = f"(2z)²·(π − δ²)/δ² = {closed:,.0f}, the normal approximation"
        n_power = paired_min_size(delta, bar, n_total, binary=True, discordant=pi, power=power)
        spread = (f"the models disagree on π = {discordant:.4g} of the rows over the whole dataset (at the slice's "
                  f"side at least δ); McNemar's exact test, its power exact given the discordant rows")
    else:
        n_min = interval_min_size(delta, confidence, binary=False, sigma=sigma) if sigma > 0 else 1
        closed = (2.0 * z * sigma / delta) ** 2
        width_text = (f"the {level} paired t interval of the change with σ_d = {sigma:.4g}, the spread of the per-row "
                      "difference (model − reference) over the whole dataset")
        closed_text = f"(2zσ_d/δ)² = {closed:,.0f}, the normal approximation"
        n_power = paired_min_size(delta, bar, n_total, binary=False, sigma=sigma, power=power) if sigma > 0 else 1
        spread = (f"σ_d = {sigma:.4g}, the spread of the per-row difference (model − reference) over the whole "
                  "dataset; the paired t-test, its power from the noncentral t (the comparison also requires the "
                  "pooled test, which can only lower it for a skewed difference)")
    where = f"rows where {info.name} is defined"
    bar_text = f"p ≤ α/m = {alpha:g}/{tests:,} = {bar:.2g} (m: the tests of the family, itemsets × metrics)"
    text = (f"n_min = {n_min:,} {where}: from that many, {width_text} is narrower than δ = {delta:.4g} ({source}); "
            f"{closed_text}. Fixed before any slice is looked at, whatever the number of slices tested. A smaller "
            "slice keeps its verdict when it is significant (marked indicative) or its interval lies within ±δ; "
            "otherwise it is too small to tell."
            + ("" if n_min <= n_total else f" No slice here has that many ({n_total:,} {where} in all)."))
    if n_power is None:
        power_text = (f"To be found worse (or better) among the m = {tests:,} tests at {power:.0%} power, a change of "
                      f"δ = {delta:.4g} would need more than the {n_total:,} {where} (the bar: {bar_text}; {spread}).")
    else:
        power_text = (f"To be found worse (or better) among the m = {tests:,} tests at {power:.0%} power, a change of "
                      f"δ = {delta:.4g} needs n_power = {n_power:,} {where}. The bar: {bar_text}; {spread}.")
    return MinSize(delta=delta, confidence=float(confidence), sigma=sigma, power=float(power), bar=bar, tests=tests,
                   n_total=n_total, n_min=int(n_min), n_power=int(n_power) if n_power is not None else None,
                   closed_form=float(closed), text=text, power_text=power_text)


def _paired_rate_min_size(delta: float, discordant: float, confidence: float) -> int:
    """The fewest rows from which the interval of a 0/1 outcome's change (Tango's), for a slice
    whose change is ``delta`` with the models disagreeing on ``discordant`` of its rows, is
    narrower than ``delta``."""
    def enough(n: int) -> bool:
        b = n * (discordant + delta) / 2.0
        c = n * (discordant - delta) / 2.0
        lo, hi = paired_proportion_interval(np.array([b]), np.array([c]), np.array([float(n)]), confidence)
        return bool(hi[0] - lo[0] < delta)

    return smallest_enough(enough, 1, 64)


def _verdicts(info: CompareMetric, change, low, high, q, meets, alpha: float, delta: float) -> np.ndarray:
    """worse / better when significant (at any size), no change when the interval lies within ±δ,
    then too small (below n_min) or noise (at least n_min rows: no finding)."""
    verdict = np.full(change.shape[0], "noise", dtype=object)
    with np.errstate(invalid="ignore"):
        significant = np.isfinite(q) & (q <= alpha) & ((low > 0) | (high < 0))
        up = significant & (change > 0)
        down = significant & (change < 0)
        within = np.isfinite(low) & (low >= -delta) & (high <= delta)
    worse, better = (up, down) if info.worse_when == "up" else (down, up)
    verdict[~meets & ~significant & ~within] = "too small"
    verdict[within & ~significant] = "no change"
    verdict[worse] = "worse"
    verdict[better] = "better"
    return verdict

