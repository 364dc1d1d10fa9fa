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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..hooks import view
from ..outcome_rules import WORSE_WHEN
from ..prepare.model_outputs import apply_models
from ..settings import Settings
from ..stats.paired import PooledNull, mcnemar_p, paired_proportion_interval, paired_t
from ..stats.stats import adjust_p
from ..table import MetricInfo, MinSize, SliceTable, find_metric, metric_column, write_csv
from ..vocabulary import COMPARE_VERDICTS, METRIC_LABELS
from .change_statistics import (
    DEFAULT_DELTA_RATE,
    DEFAULT_DELTA_SD,
    TABLE_FIELDS,
    ChangeStatistics,
    CompareMetric,
    change_column,
    change_findings,
    change_min_size,
    change_verdicts,
)
from .model_inputs import COMPARE_CLASSIFICATION_METRICS, COMPARE_REGRESSION_METRICS, model_outcomes

__all__ = ["compare", "check_models", "Comparison", "ComparisonAssessment", "CompareMetric", "ChangeStatistics",
           "COMPARE_VERDICTS", "COMPARE_CLASSIFICATION_METRICS", "COMPARE_REGRESSION_METRICS", "compare_columns",
           "DEFAULT_DELTA_RATE", "DEFAULT_DELTA_SD"]


def compare_columns(metrics: Sequence[str]) -> list[str]:
    """The output columns, in order, for these metric names."""
    return ["itemset", "length", "support", "count"] + [change_column(m, k) for m in metrics for k in TABLE_FIELDS]


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

    def statistics(self, metric: str | None = None) -> ChangeStatistics:
        """One metric's statistics for every slice, typed (:class:`ChangeStatistics`; the first metric
        when None): ``comparison.statistics("fpr").change_q`` is the q-value of every slice's change."""
        m = self.metric(metric)
        return ChangeStatistics.of(m, self.table.columns, self.details, self.assessment.min_size.get(m.name))

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
        return self.frame.iloc[0][list(self.statistics(metric).columns())]

    def headline(self, metric: str | None = None) -> dict:
        """The whole dataset's numbers for one metric and the count of slices per verdict (in
        the order of :data:`COMPARE_VERDICTS`): what the command line and the dashboard lead with."""
        s = self.statistics(metric)
        m = s.metric
        verdict = pd.Series(s.verdict)
        counts = verdict.iloc[1:].value_counts()
        return {
            "metric": m.name, "description": m.description, "binary": m.binary, "worse_when": m.worse_when,
            "model": float(s.value[0]), "reference": float(s.reference[0]),
            "change": float(s.change[0]), "change_low": float(s.change_ci_low[0]),
            "change_high": float(s.change_ci_high[0]), "q": float(np.asarray(s.change_q)[0]),
            "verdict": str(verdict.iloc[0]), "rows": int(s.count[0]),
            "verdicts": {v: int(counts.get(v, 0)) for v in COMPARE_VERDICTS},
            "n_slices": len(self) - 1, "n_tested": self.n_tested, "min_size": self.assessment.min_size[m.name],
            "findings": ({v: int(((verdict == v) & pd.Series(s.finding)).iloc[1:].sum()) for v in ("worse", "better")}
                         if s.finding is not None else {}),
            "model_name": self.assessment.model, "reference_name": self.assessment.reference,
        }

    def harm(self, metric: str | None = None) -> np.ndarray:
        """The change signed so that larger is worse (the change itself when up is worse)."""
        s = self.statistics(metric)
        change = np.asarray(s.change, dtype=float)
        return change if s.metric.worse_when == "up" else -change

    def top(self, k: int = 10, *, metric: str | None = None, verdict: str | Sequence[str] | None = None,
            min_length: int = 0, by: str | None = None) -> pd.DataFrame:
        """The first k itemsets in the default order (``M_order``: slices of at least the minimum
        size first, then the distinct findings of the change, the other significant slices and
        the rest; the change in the bad direction first, largest first), optionally of some
        verdicts; ``by="harm"``: by the change in the bad direction alone (ties to the larger
        support), or any column (largest first)."""
        s = self.statistics(metric)
        f = self.frame.assign(_harm=self.harm(s.name))
        f = f[f["length"] >= min_length]
        if verdict is not None:
            keep = pd.Series(s.verdict).isin([verdict] if isinstance(verdict, str) else list(verdict)).to_numpy()
            f = f[keep[f.index.to_numpy()]]
        if by is None and s.order is not None:  # the whole dataset (order 0) after its slices
            order = np.asarray(s.order, dtype=float)[f.index.to_numpy()]
            position = np.where(f["length"].to_numpy() == 0, np.inf, order)
            return f.iloc[np.argsort(position, kind="stable")].drop(columns="_harm").head(k)
        key = "_harm" if by in (None, "harm") else by
        return f.sort_values([key, "support"], ascending=[False, False], na_position="last",
                             kind="stable").drop(columns="_harm").head(k)

    def change_table(self, metric: str | None = None) -> SliceTable:
        """The mined table with the change as its outcome: divergence = change(I) − change(∅),
        so :mod:`divergence.explain.shapley` explains which items drive a slice's change away from the
        whole dataset's (the metric is called ``M_change``)."""
        s = self.statistics(metric)
        change = np.asarray(s.change, dtype=float)
        name = s.column("change")
        info = MetricInfo(name=name, description=f"change in {s.metric.description}", binary=False)
        cols = {"support": self.table.columns["support"], "count": self.table.columns["count"],
                name: change, metric_column(name, "divergence"): change - change[0]}
        kept = self.table.kept_rows
        return dataclasses.replace(self.table, columns=cols, metrics=(info,),
                                   kept_rows=dataclasses.replace(kept, outcomes=None) if kept is not None else None,
                                   assessment=None)

    def contributions(self, itemset: str, metric: str | None = None) -> pd.DataFrame:
        """Shapley contributions of a slice's items to its change beyond the whole dataset's
        (they sum to change(I) − change(∅)); columns ``item``, ``contribution``."""
        from ..explain.shapley import item_contributions

        s = self.statistics(metric)
        out = item_contributions(self.change_table(s.name), itemset, metric=s.column("change"))
        out.attrs.update(metric=s.name, change=float(s.change[self.lookup(itemset)]), overall_change=float(s.change[0]))
        return out

    def to_csv(self, path, *, neutralise_formulas: bool = True) -> None:
        """Write the table as CSV: floats at full precision, undefined values as empty cells;
        formula-like text gets a leading apostrophe (see :func:`divergence.table.write_csv`)."""
        write_csv(self.frame, path, neutralise_formulas=neutralise_formulas)


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
    prepared = model_outcomes(df, st)
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
    infos: list[CompareMetric] = []
    changes: list[ChangeStatistics] = []
    pvals: list[np.ndarray] = []
    reference_sd: dict = {}
    for m in names:
        info = CompareMetric(name=m, description=METRIC_LABELS.get(m, m), binary=m != "brier" and not regression,
                             worse_when=WORSE_WHEN[m])
        infos.append(info)
        stats = per_metric[m](tallies)
        n, value, ref_value, change = stats["n"], stats["value"], stats["reference"], stats["change"]
        tests: dict = {}
        if info.binary:
            p = mcnemar_p(stats["n10"], stats["n01"])
            low, high = paired_proportion_interval(stats["n10"], stats["n01"], n, confidence)
            tests = {"n10": stats["n10"].astype(np.int64), "n01": stats["n01"].astype(np.int64)}
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
            tests = {"p_t": p_t, "p_pooled": p_pool}
        undefined = ~(n > 0)
        p = np.where(undefined, np.nan, p)
        changes.append(ChangeStatistics(metric=info, value=value, reference=ref_value, change=change,
                                        change_ci_low=low, change_ci_high=high, change_p=p,
                                        count=np.rint(n).astype(np.int64), **tests))
        pvals.append(p)
        reference_sd[m] = stats["reference_sd"]
    # ---- one family: every itemset (the whole dataset included) x every metric
    allp = np.concatenate(pvals) if pvals else np.zeros(0)
    n_tests = int(np.isfinite(allp).sum())
    min_size = {cs.name: change_min_size(cs.metric, diffs[cs.name], reference_sd[cs.name],
                                         st.statistics.delta_for(cs.name), confidence, n_tests) for cs in changes}
    allq = adjust_p(allp, correction)
    alpha = 1.0 - float(confidence)
    n_items = tallies.shape[0]
    for k, cs in enumerate(changes):
        q = allq[k * n_items:(k + 1) * n_items]
        meets = cs.count >= min_size[cs.name].n_min
        changes[k] = dataclasses.replace(
            cs, change_q=q, meets_min_size=meets, min_size=min_size[cs.name],
            verdict=change_verdicts(cs.metric, cs.change, cs.change_ci_low, cs.change_ci_high, q, meets, alpha,
                                    min_size[cs.name].delta))
    changes = change_findings(mined, columns["support"], changes, per_metric, alpha, correction, allp,
                              int(np.isfinite(allp).sum()))
    details: dict = {}
    for cs in changes:
        columns.update(cs.columns())
        details.update(cs.details())
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


def _resolve(settings: Settings | None, keywords: Mapping) -> Settings:
    """The comparison's settings from a Settings, keywords or both (an unknown keyword refused)."""
    unknown = [k for k in keywords if k not in COMPARE_KEYWORDS]
    if unknown:
        raise DivergenceInputError(f"compare takes no {unknown[0]!r}; it takes {', '.join(COMPARE_KEYWORDS)}.")
    return Settings.resolve(settings, keywords)


def check_models(data: pd.DataFrame, settings: Settings | None = None, **keywords) -> dict:
    """Check a comparison's models without mining (a form can call it on every change): the
    errors :func:`compare` would raise about the columns, else what would be compared. The
    settings as for :func:`compare`."""
    from ..data.columns import check_frame

    p = model_outcomes(check_frame(data), _resolve(settings, keywords))
    return {"metrics": list(p.names), "rows_compared": int(p.usable.sum()), "rows_left_out": p.left_out,
            "model": p.model_col, "reference": p.ref_col,
            "counts": {m: int(p.per_metric[m](p.weights.sum(axis=0)[None, :])["n"][0]) for m in p.names}}
