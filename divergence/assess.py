"""Worst-slice statistics: intervals, derived minimum size, multiple-testing control, slice
baselines, achievable error and lift, shrinkage, replication, and one verdict per slice and metric.

The verdict rule (``alpha = 1 - confidence``), applied in this order:

1. Not significant: its q-value (corrected over the family of tests, every metric of the scan
   by default) is above alpha, or its corrected divergence interval contains 0 (for a
   real-valued outcome the two agree by construction, the test being the interval's inversion;
   for a 0/1 outcome the test is Fisher's and the interval Newcombe's, and a finding needs
   both): ``too small`` below n_min (too few rows to have shown a divergence of delta), else
   ``noise`` (no divergence of delta or more here, at 80% power). n_min is the defined-row count
   at which a slice that truly diverges by delta is significant with 80% probability at the bar
   alpha / m (see :func:`min_size_derivation`). A significant slice goes on at any size;
   ``M_meets_min_size`` false says its divergence is measured imprecisely.
2. ``not replicated``: replication data was given and the slice did not replicate (same
   direction, and the replication interval at the Bonferroni-corrected level excluding the
   replication's whole-dataset value).
3. Error metrics with a slice baseline (``error``, ``brier``, ``abs_error``,
   ``squared_error``): ``better`` when the error is below the whole dataset's. When it is
   above: ``defect`` when the defect test passes after correction over every slice it is
   applied to: the slice's lift over its own constant baseline is reliably below the whole
   dataset's lift, and the achievable error does not explain it (the model with the
   slice's own offset removed, leave-one-out, is reliably better than the model there, or
   the model is reliably worse than the slice's constant baseline); otherwise ``hard
   cohort``. Without per-row data the second half cannot be computed: ``hard cohort`` when
   the lift shortfall is not significant (from the tallies), else ``undetermined``.
4. Other metrics: ``above`` or ``below`` the whole dataset.

The whole dataset (row 0) gets the empty verdict ``""``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Mapping

import numpy as np
import pandas as pd

from .errors import DivergenceInputError
from .lattice import walk_boot_means, walk_order, walk_verdict
from .settings import Replication, Statistics, section
from .shrinkage import shrink
from .stats import (MIN_SIZE_POWER, adjust_p, corrected_level, mean_difference_test, min_slice_size,
                    rate_difference_interval, rest_skew, t_interval, wilson_interval, z_value)
from .tallies import boot_columns, metric_tallies
from .vocabulary import FAMILIES

__all__ = ["assess", "support_for_min_size", "VERDICTS", "FAMILIES", "DEFAULT_DELTA_RATE", "DEFAULT_DELTA_SD"]

VERDICTS = ("too small", "noise", "not replicated", "defect", "hard cohort", "undetermined", "better",
            "above", "below")
#: default smallest divergence worth acting on, for a rate
DEFAULT_DELTA_RATE = 0.05
#: default for a real-valued outcome, in units of its standard deviation
DEFAULT_DELTA_SD = 0.2
#: cap on slices x replicates x metrics of bootstrap means held in memory (float32); beyond
#: it only the top 1,000 slices per metric (under ``sort_by``) are bootstrapped
MAX_BOOTSTRAP_CELLS = 50_000_000
#: cap on rows x replicates of the Poisson weights drawn in one pass
BOOTSTRAP_PASS_CELLS = 20_000_000

_BASELINE_CODE = {"mean": 1, "median": 2, "majority": 3, "base_rate": 4}
_BASELINE_TEXT = {"mean": "the slice's mean target", "median": "the slice's median target",
                  "majority": "the slice's majority class", "base_rate": "the slice's base rate"}


def _delta_for(delta, name: str):
    if isinstance(delta, Mapping):
        return delta.get(name)
    return delta


_BAR_TEXT = {
    "bonferroni": "Bonferroni's bar",
    "holm": "Holm's first step (Holm declares every p at or below it significant)",
    "bh": "Benjamini–Hochberg declares every p at or below it significant, whatever the other slices "
          "(its realised threshold can only be looser)",
}


def min_size_derivation(overall: float, sigma: float, binary: bool, delta: float | None,
                        confidence: float, name: str, *, n_total: int, tests: int = 1,
                        correction: str = "bonferroni", power: float = MIN_SIZE_POWER) -> dict:
    """n_min: the defined-row count at which a slice whose outcome truly differs from the whole
    dataset's by delta is found significant after the scan's correction with probability
    ``power``, with a sentence saying how (the bar, the test, the variance, the numbers).

    The bar is ``alpha / tests`` (``tests``: the family the p-values are corrected over): every
    correction offered declares a p-value at or below it significant (Bonferroni by definition,
    Holm at its first step, Benjamini-Hochberg whatever the other p-values), so the promise
    holds under each. A rate's slice is taken at its own side's variance, above (p + delta) and
    below (p - delta), n_min the larger where both are possible.
    """
    if delta is None:
        delta = DEFAULT_DELTA_RATE if binary else DEFAULT_DELTA_SD * sigma
        source = ("default: 5 points of rate" if binary
                  else f"default: {DEFAULT_DELTA_SD:g} standard deviations of the outcome")
    else:
        source = "chosen"
    delta = float(delta)
    alpha = 1.0 - float(confidence)
    tests = max(int(tests), 1)
    bar = alpha / tests
    base = {"delta": delta, "confidence": float(confidence), "sigma": float(sigma), "power": float(power),
            "bar": bar, "tests": tests, "correction": correction, "n_total": int(n_total), "sides": {}}
    if sigma == 0 and source != "chosen":
        return {**base, "delta": delta, "n_min": 1,
                "text": f"{name} does not vary over the whole dataset (σ = 0): every slice meets the minimum size."}
    if not (delta > 0 and math.isfinite(delta)):
        raise DivergenceInputError(f"delta for '{name}' must be a positive number; got {delta!r}.")
    N = int(n_total)
    where = f"rows where {name} is defined"
    bar_text = (f"p ≤ α/m = {alpha:g}/{tests:,} = {bar:.2g} (m: the tests the p-values are corrected over; "
                f"{_BAR_TEXT.get(correction, correction)})")
    if binary:
        sides = {}
        for side, sign in (("above", 1.0), ("below", -1.0)):
            sides[side] = min_slice_size(sign * delta, bar, N, binary=True, overall=overall, power=power)
        found = [v for v in sides.values() if v is not None]
        n_min = max(found) if found else None

        def _side(side, sign):
            rate = overall + sign * delta
            if not 0.0 <= rate <= 1.0:
                return f"{side} impossible (a rate of {rate:.3g})"
            v = sides[side]
            return (f"{side} at the slice's rate p {'+' if sign > 0 else '−'} δ = {rate:.3g}: "
                    + (f"{v:,} rows" if v is not None else "no slice of these rows"))

        test_text = ("Fisher's exact test of the slice against the rest of the rows, its power by the normal "
                     "approximation with the variance at the slice's side (" + "; ".join(
                         _side(s, g) for s, g in (("above", 1.0), ("below", -1.0))) +
                     f"; n_min is the larger), the whole dataset's rate p = {overall:.4g} over {N:,} {where}")
    else:
        n_min = min_slice_size(delta, bar, N, binary=False, sigma=sigma, power=power) if sigma > 0 else 1
        sides = {"above": n_min, "below": n_min}
        test_text = (f"Welch's t-test of the slice against the rest of the rows (skew-guarded), its power from the "
                     f"noncentral t with σ = {sigma:.4g} (the outcome's standard deviation over the whole dataset) on "
                     f"both sides, over {N:,} {where}")
    lead = (f"A slice whose {name} truly differs from the whole dataset's by δ = {delta:.4g} ({source}) is found "
            f"significant after the correction with {power:.0%} probability ")
    if n_min is None:
        text = (lead.replace("is found", "would be found") + f"only with more than {N:,} {where}: no slice here is "
                f"large enough (the bar: {bar_text}; the test: {test_text}). A significant slice keeps its verdict; "
                "one that is not significant is too small to tell.")
    else:
        text = (lead + f"from n_min = {n_min:,} {where}. The bar: {bar_text}. The test: {test_text}; the divergence "
                "is (1 − n/N) times the slice-minus-rest difference. A smaller slice keeps its verdict when it is "
                "significant (its divergence measured imprecisely); when it is not, it is too small to tell.")
    return {**base, "n_min": int(n_min) if n_min is not None else None, "sides": sides, "text": text}


def support_for_min_size(table, metric: str | None = None) -> float:
    """The support threshold at which a slice with the dataset's share of defined rows has n_min."""
    info = table.assessment["min_size"][table.metric(metric).name]
    n_def = float(table.columns[f"{table.metric(metric).name}_count"][0])
    if info["n_min"] is None:  # no slice of these rows reaches it
        return 1.0
    return float(min(1.0, max(info["n_min"] / max(n_def, 1.0), 1.0 / table.n_rows)))


def assess(
    table,
    statistics: Statistics | None = None,
    *,
    replicate: pd.DataFrame | None = None,
    replication_label: str | None = None,
    holdout: float | None = None,
    exploratory: bool = True,
    family_p: Mapping[str, np.ndarray] | None = None,
    **keywords,
):
    """Add the worst-slice statistics to a scan result (a new SliceTable; nothing is re-mined).

    The statistics' settings are a :class:`~divergence.settings.Statistics` (``statistics``),
    its fields as keywords, or both (the keywords change those fields):

    delta : the smallest divergence worth acting on (one number, or per metric); default
        0.05 for a rate, 0.2 standard deviations for a real-valued outcome.
    confidence : the confidence level of every interval and of the significance bar, in (0, 1).
    correction : how p-values are corrected over the family of tests: Benjamini-Hochberg
        q-values (``"bh"``), ``"bonferroni"`` or ``"holm"``.
    family : ``"scan"`` (default): one family, every slice of every metric; ``"metric"``:
        each metric's slices corrected on their own.
    bootstrap : replicates for bootstrap intervals of every slice (0: none), seeded by ``seed``;
        ``top_k`` (with ``sort_by``) keeps them for the top slices only.
    replicate : a second table with the same columns, on which every slice is re-measured.
    holdout : for bookkeeping only (scan() splits the rows); describes the replication.
    exploratory : False for a scan from a pre-registered slice plan.
    family_p : per metric, the p-values of other slices tested alongside these (e.g. the mined
        slices, when a slice typed by hand is measured): the correction and the replication bar
        count them as members of the same family.
    """
    st = section(Statistics, statistics, keywords)
    if holdout is not None:
        holdout = Replication(kind="holdout", share=holdout).share
    delta, confidence, correction, family = st.delta, st.confidence, st.correction, st.family
    bootstrap, seed, top_k, sort_by = st.bootstrap, st.seed, st.top_k, st.sort_by
    alpha = 1.0 - confidence
    # the mined columns only: a table assessed before is assessed afresh
    mined = {"support", "count"} | {f"{m.name}{suffix}" for m in table.metrics
                                    for suffix in ("", "_count", "_divergence", "_t", "_p")}
    cols = {k: v for k, v in table.columns.items() if k in mined}
    n_items = len(table)
    has_rows = table.outcomes is not None and table.row_codes is not None
    rem = None
    if replicate is not None:
        from .replication import remeasure

        rem = remeasure(table, replicate)
    walk = [None]

    def _walk():
        if walk[0] is None:
            walk[0] = walk_order(table.parent, table.codes)
        return walk[0]

    # ---- one test per slice and metric: its p-value and its divergence interval at any level
    tests = {}
    for k, m in enumerate(table.metrics):
        tests[m.name] = _DivergenceTest(table, k, m)
    names = table.metric_names
    # ---- multiple testing: one family (every slice of every metric) or one per metric
    p_all = {name: _tested(cols[f"{name}_p"]) for name in names}
    # other slices' p-values tested alongside these count in the family (after this table's)
    others = {}
    for name in names:
        o = np.asarray((family_p or {}).get(name, ()), dtype=float)
        others[name] = o[np.isfinite(o)]
    q_all, level, family_size = _correct({n: np.concatenate([p_all[n], others[n]]) for n in names},
                                         alpha, correction, family)
    min_size: dict = {}
    n_tested: dict = {}
    # ---- the defect test of error metrics, corrected over every slice it is applied to
    defect_parts = {}
    for k, m in enumerate(table.metrics):
        if m.baseline is not None:
            defect_parts[m.name] = _defect_test(table, k, m, _walk if has_rows else None)
    shortfall_q, _, _ = _correct({n: d["p_shortfall"] for n, d in defect_parts.items()}, alpha, correction, family)
    short_low_q, _, _ = _correct({n: d["p_no_shortfall"] for n, d in defect_parts.items()}, alpha, correction,
                                 family)
    worse_q, _, _ = _correct({n: d["p_worse"] for n, d in defect_parts.items()}, alpha, correction, family)
    boot = {}
    if bootstrap and has_rows:
        boot = _bootstrap_intervals(table, cols, _walk, int(bootstrap), seed, confidence, top_k, sort_by)
    for k, m in enumerate(table.metrics):
        name = m.name
        test = tests[name]
        n, s, q2 = metric_tallies(table.tallies, k)
        mean = cols[name]
        overall = float(mean[0])
        div = cols[f"{name}_divergence"]
        # ---- intervals of the slice's outcome
        if m.binary:
            low, high = wilson_interval(np.rint(s), n, confidence)
            sigma = math.sqrt(max(overall * (1.0 - overall), 0.0))
        else:
            low, high = t_interval(n, s, q2, m.shift, confidence)
            n0 = n[0]
            sigma = math.sqrt(max(q2[0] / n0 - (s[0] / n0) ** 2, 0.0))
        cols[f"{name}_ci_low"], cols[f"{name}_ci_high"] = low, high
        # ---- the divergence: its interval at the confidence level and at the corrected level
        d_low, d_high = test.interval(confidence)
        a_low, a_high = test.interval(level[name])
        cols[f"{name}_divergence_ci_low"], cols[f"{name}_divergence_ci_high"] = d_low, d_high
        cols[f"{name}_divergence_adj_low"], cols[f"{name}_divergence_adj_high"] = a_low, a_high
        qv = q_all[name][:n_items]
        cols[f"{name}_q"] = qv
        n_tested[name] = int(np.isfinite(p_all[name]).sum()) + int(others[name].size)
        others_significant = int((q_all[name][n_items:] <= alpha).sum())
        excludes = (a_low > 0) | (a_high < 0)
        significant = np.isfinite(qv) & (qv <= alpha) & excludes
        cols[f"{name}_divergence_bound"] = np.where(a_low > 0, a_low, np.where(a_high < 0, a_high,
                                                    np.where(np.isfinite(a_low), 0.0, np.nan)))
        # ---- the winner's curse: empirical-Bayes shrinkage towards zero
        # (the standard error towards zero, read off the interval; for a rate at least the one
        # the whole dataset's rate gives, as a slice with few events has a short interval there)
        z = z_value(confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            se = np.where(div > 0, (div - d_low) / z, np.where(div < 0, (d_high - div) / z, (d_high - d_low) / (2 * z)))
            if m.binary:
                se = np.fmax(se, np.sqrt(max(overall * (1.0 - overall), 0.0) * np.maximum(1.0 - n / n[0], 0.0) / n))
        est = np.where(np.arange(n_items) == 0, np.nan, div)
        shrunk = shrink(est, se)
        shrunk[0] = 0.0
        cols[f"{name}_divergence_shrunk"] = shrunk
        # ---- minimum size
        info = min_size_derivation(overall, sigma, m.binary, _delta_for(delta, name), confidence, name,
                                   n_total=int(n[0]), tests=family_size[name], correction=correction)
        min_size[name] = info
        meets = n >= (info["n_min"] if info["n_min"] is not None else np.inf)
        cols[f"{name}_meets_min_size"] = meets
        # ---- slice baseline, achievable error, lift (error metrics)
        part = defect_parts.get(name)
        if part is not None:
            base = part["baseline"]
            with np.errstate(invalid="ignore", divide="ignore"):
                lift = np.where(base > 0, 1.0 - mean / np.where(base > 0, base, 1.0),
                                np.where(mean > 0, -np.inf, np.nan))
            lift[~np.isfinite(mean) | np.isnan(base)] = np.nan
            cols[f"{name}_baseline"] = base
            cols[f"{name}_reference"] = part["reference"]
            cols[f"{name}_lift"] = lift
            cols[f"{name}_lift_shortfall"] = lift[0] - lift
            cols[f"{name}_lift_shortfall_q"] = shortfall_q[name]
            cols[f"{name}_worse_q"] = worse_q[name]
        # ---- replication
        replicated = None
        if rem is not None:
            replicated = _replication_columns(cols, name, m, rem, significant, confidence, others_significant)
        # ---- bootstrap intervals
        cols[f"{name}_boot_low"], cols[f"{name}_boot_high"] = boot.get(name, (np.full(n_items, np.nan),) * 2)
        # ---- verdicts
        verdict = np.full(n_items, "", dtype=object)
        rest = np.ones(n_items, dtype=bool)
        rest[0] = False
        # not significant: too small to have shown a delta divergence, or big enough and none there
        verdict[rest & ~significant & ~meets] = "too small"
        verdict[rest & ~significant & meets] = "noise"
        rest &= significant
        if replicated is not None:
            verdict[rest & ~replicated] = "not replicated"
            rest &= replicated
        if part is not None:
            above = rest & (div > 0)
            verdict[rest & (div < 0)] = "better"
            sq = shortfall_q[name]
            if part["rows"]:
                # a defect: the lift is reliably lower and the model reliably worse than the
                # achievable error there (both tests corrected over every slice)
                wq = worse_q[name]
                known = np.isfinite(sq) & np.isfinite(wq)
                defect = (sq <= alpha) & (wq <= alpha)
                verdict[above & known & defect] = "defect"
                verdict[above & known & ~defect] = "hard cohort"
                verdict[above & (sq > alpha)] = "hard cohort"
                verdict[above & ~known & ~(sq > alpha)] = "undetermined"
            else:
                # tallies only: the achievable error needs the rows, so no defect can be shown;
                # a hard cohort when the lift is reliably no lower than the whole dataset's
                # (its shortfall interval below 0), else undetermined
                nq = short_low_q[name]
                verdict[above & (nq <= alpha)] = "hard cohort"
                verdict[above & ~(nq <= alpha)] = "undetermined"
        else:
            verdict[rest & (div > 0)] = "above"
            verdict[rest & (div < 0)] = "below"
        verdict[rest & (div == 0)] = "noise"
        cols[f"{name}_verdict"] = verdict
    intervals = "analytic and bootstrap" if boot else "analytic"
    assessment = {
        "confidence": confidence, "correction": correction, "bootstrap": int(bootstrap),
        "seed": int(seed), "top_k": top_k, "n_tested": n_tested, "min_size": min_size,
        "family": family, "family_size": family_size, "corrected_level": level,
        "exploratory": bool(exploratory),
        "replication": (replication_label or ("held-out rows" if holdout else "second table"))
        if rem is not None else None,
        "replication_rows": rem.n_rows if rem is not None else None,
        "bootstrap_skipped": bool(bootstrap) and not boot,
        "intervals": intervals,
        "verdicts_from": "rows" if has_rows else "tallies",
    }
    return dataclasses.replace(table, columns=cols, assessment=assessment)


def _tested(p: np.ndarray) -> np.ndarray:
    """The p-values of the slices tested (the whole dataset, row 0, is not a test)."""
    p = np.asarray(p, dtype=float).copy()
    if p.size:
        p[0] = np.nan
    return p


def _correct(p_by_metric: dict, alpha: float, correction: str, family: str):
    """Corrected p-values per metric, the corrected confidence level per metric and the size
    of the family each metric's tests were corrected in."""
    q, level, size = {}, {}, {}
    if not p_by_metric:
        return q, level, size
    if family == "scan":
        names = list(p_by_metric)
        joined = np.concatenate([np.asarray(p_by_metric[n], dtype=float) for n in names])
        adjusted = adjust_p(joined, correction)
        lev = corrected_level(joined, alpha, correction, adjusted)
        m = int(np.isfinite(joined).sum())
        start = 0
        for n in names:
            k = len(p_by_metric[n])
            q[n], level[n], size[n] = adjusted[start:start + k], lev, m
            start += k
        return q, level, size
    for n, p in p_by_metric.items():
        p = np.asarray(p, dtype=float)
        q[n] = adjust_p(p, correction)
        level[n] = corrected_level(p, alpha, correction, q[n])
        size[n] = int(np.isfinite(p).sum())
    return q, level, size


class _DivergenceTest:
    """A metric's slices against the rest of the rows: the divergence interval at any level.

    The divergence is the slice's outcome minus the whole dataset's; the whole dataset holds
    the slice, so the divergence is the slice-minus-rest difference times the share of the
    defined rows outside the slice, and its interval is that difference's interval times the
    same share (the whole dataset's uncertainty and the overlap both accounted for). 0/1
    outcomes: Newcombe's interval of a difference of rates; real outcomes: the skew-guarded
    Welch interval of :func:`divergence.stats.mean_difference_test` (whose inversion is the
    slice's p-value).
    """

    def __init__(self, table, k: int, m) -> None:
        self._setup(*metric_tallies(table.tallies, k), m, rest_skew(table.tallies, k, m))

    @classmethod
    def from_tallies(cls, n, s, q, m, skew) -> "_DivergenceTest":
        test = cls.__new__(cls)
        test._setup(n, s, q, m, skew)
        return test

    def _setup(self, n, s, q, m, skew) -> None:
        n0, s0, q0 = n[0], s[0], q[0]
        self.binary = m.binary
        with np.errstate(invalid="ignore", divide="ignore"):
            self.scale = np.where(n0 > 0, 1.0 - n / n0, np.nan)
        # a slice holding every defined row diverges by exactly 0; an empty one is undefined
        self.exact = (n >= n0) & (n > 0)
        self.empty = n <= 0
        if m.binary:
            ones = np.rint(s)
            self.args = (ones, n, ones[0] - ones, n0 - n)
        else:
            self.md = mean_difference_test(n, s, q, n0 - n, s0 - s, q0 - q, skew)

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        if self.binary:
            low, high = rate_difference_interval(*self.args, level)
        else:
            low, high = self.md.interval(level)
        low, high = self.scale * low, self.scale * high
        low = np.where(self.exact, 0.0, np.where(self.empty, np.nan, low))
        high = np.where(self.exact, 0.0, np.where(self.empty, np.nan, high))
        low[0], high[0] = 0.0, 0.0
        return low, high


def _baseline(table, m) -> np.ndarray:
    """Error of each slice's best constant prediction from the tallies (mean target, majority
    class, base rate); NaN for the median (absolute error), which needs the rows."""
    if m.baseline == "median" or m.aux < 0:
        return np.full(len(table), np.nan)
    k = table.metric_names.index(m.name)
    n = metric_tallies(table.tallies, k)[0]
    ys, yq = table.tallies[:, m.aux], table.tallies[:, m.aux + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = ys / n
        if m.baseline == "mean":
            return np.where(n > 0, np.maximum(yq / n - mu * mu, 0.0), np.nan)
        p = m.target_shift + mu
        if m.baseline == "majority":
            return np.where(n > 0, np.minimum(p, 1.0 - p), np.nan)
        return np.where(n > 0, p * (1.0 - p), np.nan)


def _defect_test(table, k: int, m, walk) -> dict:
    """Per slice: constant baseline, achievable error and the tests behind the verdict.

    ``p_shortfall``: the lift shortfall, R = error / constant baseline (one minus the lift)
    of the slice against the whole dataset's, with the delta method's variance from each
    row's influence (the overlap of slice and whole dataset included); one-sided, towards a
    lower lift. ``p_worse``: the model reliably worse than the achievable error in the slice
    (see :func:`divergence.lattice.walk_verdict`), by more than on the whole dataset (a paired
    t-test of the per-row differences). ``p_no_shortfall``: the lift reliably no lower (for
    the verdict without rows).
    """
    from scipy import special as sp

    kind = _BASELINE_CODE[m.baseline]
    if walk is None:
        return _defect_from_tallies(table, k, m, kind)
    o = table.outcome(m.name)
    e = np.asarray(o.values, dtype=float)
    y = np.where(np.isnan(e), np.nan, np.asarray(o.target, dtype=float))
    pr = np.where(np.isnan(e), np.nan, np.asarray(o.prediction, dtype=float))
    d = ~np.isnan(e)
    # the whole dataset's constant, ratio and each row's influence on that ratio
    yd, ed = y[d], e[d]
    if kind == 2:
        beta = np.abs(yd - float(np.median(yd)))
    elif kind == 3:
        beta = (yd != (1.0 if yd.mean() > 0.5 else 0.0)).astype(float)
    else:
        beta = (yd - yd.mean()) ** 2
    b0 = float(beta.mean())
    psi0 = np.zeros(len(e))
    if b0 > 0:
        psi0[d] = (ed - (ed.mean() / b0) * beta) / b0
    n_values = np.array([b.n_items for b in table.bins], dtype=np.int64)
    out = walk_verdict(walk(), table.row_codes, np.ascontiguousarray(table.codes, dtype=np.int64), n_values,
                       np.ascontiguousarray(e), np.ascontiguousarray(np.nan_to_num(y)),
                       np.ascontiguousarray(np.nan_to_num(pr)), psi0, int(kind))
    n, big_e, base, psi2, psi_psi0, ach, g1, g2, r2 = (out[:, j] for j in range(9))
    n_all = n[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(base > 0, big_e / base, np.where(big_e > 0, np.inf, np.nan))
        var_r = psi2 / (n * n)
        var_d = np.maximum(var_r + var_r[0] - 2.0 * psi_psi0 / (n * n_all), 0.0)
        p_short = _one_sided(ratio - ratio[0], var_d)
        p_low = _one_sided(ratio[0] - ratio, var_d)
        dof = np.maximum(n - 1.0, 1.0)
        gap = g1 / n
        sd_gap = np.sqrt(np.maximum(g2 - g1 * gap, 0.0) / dof)
        p_worse = _one_sided_t(gap - max(float(gap[0]), 0.0), sd_gap / np.sqrt(n), dof)
    worse = (base == 0) & (big_e > 0)  # the slice's constant is exact while the model errs
    p_short = np.where(worse, 0.0, np.where(~(n > 0) | ~np.isfinite(ratio), np.nan, p_short))
    ok = n > 1
    p_worse = np.where(ok, p_worse, np.nan)
    p_low = np.where(~(n > 0) | ~np.isfinite(ratio), np.nan, p_low)
    for p in (p_short, p_low, p_worse):
        p[0] = np.nan
    # the constant baseline of the additive kinds as the tallies give it (every path alike)
    base = np.where(n > 0, base, np.nan) if kind == 2 else _baseline(table, m)
    return {"baseline": base, "reference": np.where(ok, ach, np.nan), "p_shortfall": p_short,
            "p_no_shortfall": p_low, "p_worse": p_worse, "rows": True}


def _one_sided_t(diff: np.ndarray, se: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """P(T >= diff / se), T Student's t with ``dof`` degrees of freedom (0 or 1 where se is 0)."""
    from scipy import special as sp

    with np.errstate(invalid="ignore", divide="ignore"):
        p = sp.stdtr(dof, -diff / np.where(se > 0, se, 1.0))
        return np.where(se > 0, p, np.where(diff > 0, 0.0, 1.0))


def _defect_from_tallies(table, k: int, m, kind: int) -> dict:
    """Without rows: the constant baseline from the tallies and, for 0/1 error and Brier, a
    conservative lift shortfall test (Cauchy-Schwarz bounds on the covariances the rows
    would give); the achievable error needs the rows."""
    base = _baseline(table, m)
    n, s, q = metric_tallies(table.tallies, k)
    big_e = np.asarray(table.columns[m.name], dtype=float)
    p_short = np.full(len(table), np.nan)
    p_low = np.full(len(table), np.nan)
    if kind in (3, 4):
        with np.errstate(invalid="ignore", divide="ignore"):
            sd_e = np.sqrt(np.maximum(q - s * s / n, 0.0) / n)
            p = m.target_shift + table.tallies[:, m.aux] / n
            sd_b = np.sqrt(base * (1.0 - base)) if kind == 3 else np.sqrt(p * (1.0 - p)) * np.abs(1.0 - 2.0 * p)
            ratio = big_e / base
            sd_r = (sd_e + ratio * sd_b) / base / np.sqrt(n)
            var_d = (sd_r + sd_r[0]) ** 2
            p_short = _one_sided(ratio - ratio[0], var_d)
            p_low = _one_sided(ratio[0] - ratio, var_d)
        p_short = np.where((base == 0) & (big_e > 0), 0.0, np.where(n > 0, p_short, np.nan))
        p_low = np.where((base == 0) & (big_e > 0), 1.0, np.where(n > 0, p_low, np.nan))
        p_short[0], p_low[0] = np.nan, np.nan
    nan = np.full(len(table), np.nan)
    return {"baseline": base, "reference": nan, "p_shortfall": p_short, "p_no_shortfall": p_low, "p_worse": nan,
            "rows": False}


def _one_sided(diff: np.ndarray, var: np.ndarray) -> np.ndarray:
    """P(Z >= diff / sd): one-sided normal p-value (0 or 1 where the variance is 0)."""
    from scipy import special as sp

    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(var)
        p = sp.ndtr(-diff / np.where(sd > 0, sd, 1.0))
        return np.where(sd > 0, p, np.where(diff > 0, 0.0, 1.0))


def _bootstrap_intervals(table, cols, walk, replicates: int, seed: int, confidence: float, top_k, sort_by) -> dict:
    """Percentile bootstrap interval of every slice's outcome, each metric, all at once.

    Poisson(1) weights per row (the Poisson bootstrap: each slice sees its own rows resampled
    with replacement, and the whole dataset the same weights), summed once per distinct
    discretized row and then over each slice's distinct rows by one walk of the lattice. For
    a 0/1 outcome the sums over a distinct row are drawn directly (Poisson of its ones and of
    its zeros: exact in distribution). A slice with no event (or no non-event) has a
    bootstrap distribution of one value: its interval is widened to the Wilson interval.
    """
    from .compression import compress

    n_items = len(table)
    metrics = table.metrics
    per_metric = {m.name: np.ones(n_items, dtype=bool) for m in metrics}
    if top_k is not None or n_items * replicates * len(metrics) > MAX_BOOTSTRAP_CELLS:
        per_metric = {m.name: _slices_to_bootstrap(table, cols, m.name, top_k or 1000, sort_by) for m in metrics}
    wanted = np.logical_or.reduce(list(per_metric.values()))
    if int(wanted.sum()) * replicates * len(metrics) > MAX_BOOTSTRAP_CELLS:
        return {}
    comp = compress(table.row_codes, np.ones((table.n_rows, 1)))
    codes = np.asfortranarray(comp.codes.astype(np.int32))
    inverse = comp.inverse
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(len(comp.codes)))
    n_groups = len(comp.codes)
    rng = np.random.default_rng(seed)
    # replicates in passes, so the per-row weights of one pass stay within BOOTSTRAP_PASS_CELLS
    chunk = max(1, min(replicates, BOOTSTRAP_PASS_CELLS // max(1, table.n_rows)))
    means = np.empty((n_items, len(metrics) * replicates), dtype=np.float32)
    prepared = []
    for m in metrics:
        v = np.asarray(table.outcome(m.name).values, dtype=float)
        d = ~np.isnan(v)
        if m.binary:
            ones = np.bincount(inverse, weights=(d & (v == 1)).astype(float), minlength=n_groups)
            zeros = np.bincount(inverse, weights=(d & (v != 1)).astype(float), minlength=n_groups)
            prepared.append(("binary", ones, zeros))
        else:
            x = np.where(d, v - m.shift, 0.0)[order]
            prepared.append(("real", d[order].astype(float), x))
    shifts = np.array([m.shift for m in metrics], dtype=float)
    for b0 in range(0, replicates, chunk):
        bc = min(chunk, replicates - b0)
        weights = np.empty((n_groups, 2 * len(metrics) * bc), dtype=np.float32)
        for j, (kind, a, b) in enumerate(prepared):
            den, num = (weights[:, cols] for cols in boot_columns(j, bc))
            if kind == "binary":
                num[:] = rng.poisson(a[:, None], size=(n_groups, bc))
                den[:] = rng.poisson(b[:, None], size=(n_groups, bc))
                den += num
            else:
                w = rng.poisson(1.0, size=(table.n_rows, bc)).astype(np.float32)
                den[:] = np.add.reduceat(w * a[:, None].astype(np.float32), starts, axis=0)
                num[:] = np.add.reduceat(w * b[:, None].astype(np.float32), starts, axis=0)
        part = walk_boot_means(walk(), codes, wanted, weights, bc, shifts)
        for j in range(len(metrics)):
            means[:, j * replicates + b0:j * replicates + b0 + bc] = part[:, j * bc:(j + 1) * bc]
    alpha = 1.0 - confidence
    out = {}
    for k, m in enumerate(metrics):
        mine = per_metric[m.name]
        low = np.full(n_items, np.nan)
        high = np.full(n_items, np.nan)
        idx = np.nonzero(mine)[0]
        block = means[:, k * replicates:(k + 1) * replicates]
        block = np.ascontiguousarray(block if idx.size == n_items else block[idx])
        low[idx], high[idx] = _percentiles(block, alpha / 2.0, 1.0 - alpha / 2.0)
        if m.binary:
            n, s, _ = metric_tallies(table.tallies, k)
            ones = np.rint(s)
            w_low, w_high = wilson_interval(ones, n, confidence)
            one_valued = mine & (n > 0) & ((ones == 0) | (ones == n))
            low = np.where(one_valued, np.fmin(low, w_low), low)
            high = np.where(one_valued, np.fmax(high, w_high), high)
        out[m.name] = (low, high)
    return out


def _percentiles(x: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row, two percentiles (linear interpolation, as numpy's) of the finite values: rows
    holding every replicate by one partial sort (in place: ``x`` is reordered), the rest by a
    full sort."""
    out_lo, out_hi = np.full(x.shape[0], np.nan), np.full(x.shape[0], np.nan)
    if x.size == 0:
        return out_lo, out_hi
    finite = np.isfinite(x)
    count = finite.sum(axis=1)
    full = count == x.shape[1]
    b = x.shape[1]

    def positions(q, c):
        pos = (c - 1) * q
        i = np.floor(pos).astype(np.int64)
        return i, np.minimum(i + 1, c - 1), pos - i

    (i1, j1, f1), (i2, j2, f2) = positions(lo, b), positions(hi, b)
    kth = sorted({int(i1), int(j1), int(i2), int(j2)})
    if full.all():
        x.partition(kth, axis=1)
        part = x
    elif full.any():
        part = np.partition(x[full], kth, axis=1)
    if full.any():
        sel = slice(None) if full.all() else full
        out_lo[sel] = part[:, i1].astype(float) * (1.0 - f1) + part[:, j1].astype(float) * f1
        out_hi[sel] = part[:, i2].astype(float) * (1.0 - f2) + part[:, j2].astype(float) * f2
    some = ~full & (count > 0)
    if some.any():
        y = np.where(finite[some], x[some], np.inf).astype(float)
        y.sort(axis=1)
        c = count[some]
        rows = np.arange(y.shape[0])
        for q, target in ((lo, out_lo), (hi, out_hi)):
            i, j, f = positions(q, c)
            target[some] = y[rows, i] * (1.0 - f) + y[rows, j] * f
    return out_lo, out_hi


def _slices_to_bootstrap(table, cols, name, top_k, sort_by) -> np.ndarray:
    n_items = len(table)
    wanted = np.zeros(n_items, dtype=bool)
    k = int(top_k or 1000)
    key = sort_by or f"{name}_divergence"
    if key not in cols:
        raise DivergenceInputError(f"Cannot sort by '{key}': not a column of the result.")
    values = np.asarray(cols[key], dtype=float)
    order = np.argsort(np.where(np.isnan(values), -np.inf, -values), kind="stable")
    wanted[order[:k]] = True
    wanted[0] = True
    return wanted


def _replication_columns(cols, name, m, rem, significant, confidence, others_significant=0) -> np.ndarray:
    """Re-measured value, divergence and interval of every slice on the replication data, and
    whether it replicated: same direction, and the slice-against-rest test there significant
    at the Bonferroni level over the slices being confirmed (those significant here)."""
    n, s, q = rem.n[name], rem.s[name], rem.q[name]
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(n > 0, m.shift + s / np.where(n > 0, n, 1), np.nan)
    overall = value[0]
    n_confirm = max(int(significant[1:].sum()) + int(others_significant), 1)
    level = 1.0 - (1.0 - confidence) / n_confirm
    if m.binary:
        low, high = wilson_interval(np.rint(s), n, level)
    else:
        low, high = t_interval(n, s, q, m.shift, level)
    test = _DivergenceTest.from_tallies(n, s, q, m, m.skew)
    d_low, d_high = test.interval(level)
    div = cols[f"{name}_divergence"]
    same_direction = np.sign(value - overall) == np.sign(div)
    excludes = (d_low > 0) | (d_high < 0)
    replicated = same_direction & excludes & (n > 0)
    replicated[0] = True
    cols[f"{name}_replicated_value"] = value
    cols[f"{name}_replicated_divergence"] = value - overall
    cols[f"{name}_replicated_ci_low"] = low
    cols[f"{name}_replicated_ci_high"] = high
    cols[f"{name}_replicated"] = replicated
    return replicated
