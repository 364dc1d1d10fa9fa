"""Worst-slice statistics: intervals, derived minimum size, multiple-testing control, slice
baselines, achievable error and lift, shrinkage, replication, and one verdict per slice and metric.

The verdict rule (``alpha = 1 - confidence``), applied in this order:

1. Not significant: its q-value (corrected over the family of tests: the metric's slices by
   default, every metric's with ``family="scan"``) is above alpha, or its corrected divergence
   interval contains 0 (for a real-valued outcome the two agree by construction, the test being the interval's inversion;
   for a 0/1 outcome the test is Fisher's and the interval Newcombe's, and a finding needs
   both): ``too small`` below n_min (too few rows to tell), else ``noise`` (no finding: its
   interval, narrower than delta, holds the whole dataset's value). n_min is the defined-row count
   from which the slice's interval is narrower than delta (see :func:`min_size_derivation`),
   independent of the number of slices tested. A significant slice goes on at any size;
   ``M_meets_min_size`` false marks it *indicative*.
2. ``not replicated``: replication data was given and the slice did not replicate (same
   direction, and the replication interval at the Bonferroni-corrected level excluding the
   replication's whole-dataset value).
3. Error metrics with a slice baseline (``error``, ``brier``, ``abs_error``,
   ``squared_error``): ``better`` when the error is below the whole dataset's. When it is
   above, three one-sided tests, each corrected over every slice it is applied to (see
   :func:`_defect_test`): the target ``harder`` (the slice's baseline error above its
   partition's: the slices on the same attributes, each with its own constant), the lift
   ``short`` (the model's gain over the baseline, on the metric's natural scale, below the
   partition's), the model ``beaten`` (a reference fitted within the slice does better than the
   model, by more than on the whole dataset). ``defect``: beaten, or short while not harder;
   ``hard cohort``: harder and not short (and not beaten); ``undetermined`` otherwise (both, or
   neither). Without per-row data (DuckDB, Spark) no defect is claimed: ``hard cohort`` when the
   baseline is reliably harder and the lift reliably no lower (0/1 error and Brier), else
   ``undetermined``.
4. Other metrics: ``above`` or ``below`` the whole dataset.

The whole dataset (row 0) gets the empty verdict ``""``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Mapping

import numpy as np
import pandas as pd

from ..table import Assessment, MinSize
from ..budget import progress_report
from ..errors import DivergenceInputError
from ..mining.lattice import walk_boot_means, walk_order
from ..settings import Replication, Statistics, section
from .findings import default_order, distinct_findings, enclosing_findings, significant_slices, within_difference
from .shrinkage import shrink_lattice
from .verdict_walk import VERDICT_COLUMNS, walk_verdict
from .stats import (MIN_SIZE_POWER, adjust_p, corrected_level, interval_min_size, mean_difference_test,
                    min_slice_size, rate_difference_interval, rest_skew, t_interval, wilson_interval, z_value)
from ..prepare.tallies import boot_columns, metric_tallies
from ..vocabulary import FAMILIES, VERDICTS

__all__ = ["assess", "support_for_min_size", "VERDICTS", "FAMILIES", "DEFAULT_DELTA_RATE", "DEFAULT_DELTA_SD"]


#: default smallest divergence worth acting on, for a rate
DEFAULT_DELTA_RATE = 0.05
#: default for a real-valued outcome, in units of its standard deviation
DEFAULT_DELTA_SD = 0.2
#: cap on slices x replicates x metrics of bootstrap means held in memory (float32); beyond
#: it only the top 1,000 slices per metric (under ``sort_by``) are bootstrapped
MAX_BOOTSTRAP_CELLS = 50_000_000
#: cap on rows x replicates of the Poisson weights drawn in one pass
BOOTSTRAP_PASS_CELLS = 20_000_000

#: the work the search for a metric's distinct findings may do by default, per slice and distinct
#: row (itemsets walked, rows read, entries updated; see divergence.stats.findings): four times what the
#: complete searches of Adult at supports 0.02 to 0.005 use (at most 99 per slice and row), so that
#: the search is complete on real tables and ends on pathological ones; ``Statistics.findings_work``
#: sets it (0: no limit)
FINDINGS_WORK = 400
#: the least work it may do (a small table's search always ends: it takes milliseconds)
FINDINGS_WORK_FLOOR = 200_000

_BASELINE_CODE = {"mean": 1, "median": 2, "majority": 3, "base_rate": 4, "entropy": 5, "majority_class": 6}
_BASELINE_TEXT = {"mean": "the slice's mean target", "median": "the slice's median target",
                  "majority": "the slice's majority class", "base_rate": "the slice's base rate",
                  "entropy": "the slice's base rate (its log loss: the entropy of the slice's labels)",
                  "majority_class": "the slice's majority class (of every class)"}


_BAR_TEXT = {
    "bonferroni": "Bonferroni's bar",
    "holm": "Holm's first step (Holm declares every p at or below it significant)",
    "bh": "Benjamini–Hochberg declares every p at or below it significant, whatever the other slices "
          "(its realised threshold can only be looser)",
}


def min_size_derivation(overall: float, sigma: float, binary: bool, delta: float | None,
                        confidence: float, name: str, *, n_total: int, tests: int = 1,
                        correction: str = "bonferroni", power: float = MIN_SIZE_POWER,
                        skew: float = 0.0) -> MinSize:
    """n_min, the method's minimum slice size, and n_power, the rows a δ divergence needs to be
    found among the scan's tests, each with a sentence saying how (the method's minimum size: docs/statistics.md).

    **n_min** works backwards from delta: the defined-row count from which the interval the table
    shows for the slice (Wilson's for a rate, Student t's for a mean), at ``confidence`` and at the
    whole dataset's value shifted by delta towards the side where that interval is wider, is
    narrower than delta. One number per metric, fixed before any slice is looked at, independent
    of how many slices are tested. A rate's wider side is the one nearer 1/2; a right-skewed real
    outcome (``skew`` above the skew guard's threshold) with a positive mean keeps its coefficient
    of variation, so its slice above is the wider, sigma * (mean + delta) / mean.

    **n_power** answers another question: the rows at which a slice whose outcome truly differs by
    delta is significant at the bar ``alpha / tests`` with probability ``power`` (every correction
    offered passes a p-value at or below that bar), the scan's own test at the slice's side, the
    larger side. It grows with the number of slices tested.
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
    base = dict(delta=delta, confidence=float(confidence), sigma=float(sigma), power=float(power), bar=bar,
                tests=tests, correction=correction, n_total=int(n_total))
    if sigma == 0 and source != "chosen":
        return MinSize(**base, n_min=1, n_power=1, width_at=float(overall), power_text="",
                       text=f"{name} does not vary over the whole dataset (σ = 0): every slice meets the minimum size.")
    if not (delta > 0 and math.isfinite(delta)):
        raise DivergenceInputError(f"delta for '{name}' must be a positive number; got {delta!r}.")
    if binary and delta >= 1:
        raise DivergenceInputError(f"delta for '{name}' is a difference of rates, below 1; got {delta!r}.")
    if not math.isfinite(delta * delta * 1e6):
        raise DivergenceInputError(f"delta for '{name}' is too large to compute with; got {delta!r}.")
    N = int(n_total)
    where = f"rows where {name} is defined"
    level = f"{float(confidence):.0%}".replace(".0%", "%")
    bar_text = (f"p ≤ α/m = {alpha:g}/{tests:,} = {bar:.2g} (m: the tests the p-values are corrected over; "
                f"{_BAR_TEXT.get(correction, correction)})")
    z = z_value(confidence)
    if binary:
        # the wider side: the shifted rate nearer 1/2 (a side beyond 0 or 1 is impossible)
        shifted = [r for r in (overall + delta, overall - delta) if 0.0 <= r <= 1.0] or [min(max(overall, 0.0), 1.0)]
        at = max(shifted, key=lambda r: r * (1.0 - r))
        n_min = interval_min_size(delta, confidence, binary=True, rate=at)
        closed = (2.0 * z) ** 2 * at * (1.0 - at) / delta ** 2
        width_text = (f"the {level} Wilson interval of a slice at the whole dataset's rate {overall:.4g} shifted by δ "
                      f"towards the wider side ({at:.4g})")
        closed_text = f"(2z)²·p(1 − p)/δ² = {closed:,.0f}, the normal approximation"
        sides = {}
        for side, sign in (("above", 1.0), ("below", -1.0)):
            sides[side] = min_slice_size(sign * delta, bar, N, binary=True, overall=overall, power=power)
        found = [v for v in sides.values() if v is not None]
        n_power = max(found) if found else None

        def _side(side, sign):
            rate = overall + sign * delta
            if not 0.0 <= rate <= 1.0:
                return f"{side} impossible (a rate of {rate:.3g})"
            v = sides[side]
            return (f"{side} at the slice's rate p {'+' if sign > 0 else '−'} δ = {rate:.3g}: "
                    + (f"{v:,} rows" if v is not None else "no slice of these rows"))

        test_text = ("Fisher's exact test of the slice against the rest of the rows, its power exact given the "
                     "whole dataset's events, at the slice's side (" + "; ".join(
                         _side(s, g) for s, g in (("above", 1.0), ("below", -1.0))) +
                     f"; n_power is the larger), the whole dataset's rate p = {overall:.4g} over {N:,} {where}")
    else:
        from .stats import SKEW_GUARD

        grows = bool(skew > SKEW_GUARD) and overall > 0 and sigma > 0
        above_sigma = sigma * (overall + delta) / overall if grows else sigma
        at = overall + delta if grows else overall
        n_min = interval_min_size(delta, confidence, binary=False, sigma=above_sigma) if sigma > 0 else 1
        closed = (2.0 * z * above_sigma / delta) ** 2
        width_text = (f"the {level} Student t interval of a slice's mean with the whole dataset's standard deviation "
                      f"σ = {sigma:.4g}" + (f", grown to σ·(μ + δ)/μ = {above_sigma:.4g} on the wider side above "
                                            f"(a right-skewed outcome keeps its spread relative to its mean, "
                                            f"μ = {overall:.4g})" if grows else ""))
        closed_text = f"(2zσ/δ)² = {closed:,.0f}, the normal approximation"
        n_above = (min_slice_size(delta, bar, N, binary=False, sigma=sigma, slice_sigma=above_sigma, power=power)
                   if sigma > 0 else 1)
        n_below = min_slice_size(-delta, bar, N, binary=False, sigma=sigma, power=power) if sigma > 0 else 1
        sides = {"above": n_above, "below": n_below}
        found = [v for v in sides.values() if v is not None]
        n_power = (max(found) if len(found) == 2 else None) if sigma > 0 else 1
        spread = (f"σ = {sigma:.4g} (the outcome's standard deviation over the whole dataset) on both sides"
                  if not grows else
                  f"σ = {sigma:.4g} (the outcome's standard deviation over the whole dataset) for the rest and for a "
                  f"slice below (the skew guard's variance), σ·(μ + δ)/μ = {above_sigma:.4g} for a slice above (a "
                  f"right-skewed outcome's spread grows with its mean, μ = {overall:.4g}): "
                  + "; ".join(f"{side} {v:,} rows" if v is not None else f"{side}: no slice of these rows"
                              for side, v in sides.items()) + "; n_power is the larger")
        test_text = (f"Welch's t-test of the slice against the rest of the rows (skew-guarded), its power from the "
                     f"noncentral t with {spread}, over {N:,} {where}")
    text = (f"n_min = {n_min:,} {where}: from that many, {width_text} is narrower than δ = {delta:.4g} ({source}); "
            f"{closed_text}. Fixed before any slice is looked at, whatever the number of slices tested. A smaller "
            "slice is still shown with its interval: significant, it is a finding marked indicative; not "
            "significant, it is too small to tell."
            + ("" if n_min <= N else f" No slice here has that many ({N:,} {where} in all)."))
    lead = f"To be found among the m = {tests:,} tests at {power:.0%} power, a divergence of δ = {delta:.4g} "
    if n_power is None:
        power_text = (lead + f"would need more than the {N:,} {where} (the bar: {bar_text}; the test: {test_text}).")
    else:
        power_text = (lead + f"needs n_power = {n_power:,} {where}. The bar: {bar_text}. The test: {test_text}; the "
                      "divergence is (1 − n/N) times the slice-minus-rest difference. It grows with the slices tested.")
    return MinSize(**base, n_min=int(n_min), n_power=int(n_power) if n_power is not None else None,
                   width_at=float(at), closed_form=float(closed), sides=sides, text=text, power_text=power_text)


def support_for_min_size(table, metric: str | None = None, size: str = "n_min") -> float:
    """The support threshold at which a slice with the dataset's share of defined rows has
    ``size`` rows: ``"n_min"`` (its interval narrower than δ: every slice mined is measured
    precisely enough) or ``"n_power"`` (a δ divergence found at 80% power among the scan's tests);
    1 when no slice of these rows reaches it."""
    if size not in ("n_min", "n_power"):
        raise DivergenceInputError(f"size must be 'n_min' or 'n_power'; got {size!r}.")
    info = table.assessment.min_size[table.metric(metric).name]
    n_def = float(table.columns[f"{table.metric(metric).name}_count"][0])
    rows = getattr(info, size)
    if rows is None or rows > n_def:  # no slice of these rows reaches it
        return 1.0
    return float(min(1.0, max(rows / max(n_def, 1.0), 1.0 / table.n_rows)))


def assess(
    table,
    statistics: Statistics | None = None,
    *,
    replicate: pd.DataFrame | None = None,
    replication_label: str | None = None,
    holdout: float | None = None,
    exploratory: bool = True,
    family_p: Mapping[str, np.ndarray] | None = None,
    progress=None,
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
    family : ``"metric"`` (default): each metric's slices corrected on their own (a flat metric
        does not borrow the bar of one with many discoveries); ``"scan"``: one family, every slice
        of every metric.
    bootstrap : replicates for bootstrap intervals of every slice (0: none), seeded by ``seed``;
        ``top_k`` (with ``sort_by``) keeps them for the top slices only.
    replicate : a second table with the same columns, on which every slice is re-measured
        (default: the one :func:`divergence.mine` kept in ``table``, e.g. a holdout's rows).
    holdout : for bookkeeping only (mine() splits the rows); describes the replication.
    exploratory : False for a scan from a pre-registered slice plan.
    family_p : per metric, the p-values of other slices tested alongside these (e.g. the mined
        slices, when a slice typed by hand is measured): the correction and the replication bar
        count them as members of the same family.
    progress : told each step of the statistics as it starts: stage "statistics", ``step`` (what it
        is doing), ``fraction`` (the steps done of all of them).
    """
    st = section(Statistics, statistics, keywords)
    replicate, replication_label, holdout = _replication_input(table, replicate, replication_label, holdout)
    alpha = 1.0 - st.confidence
    # the mined columns only: a table assessed before is assessed afresh
    mined = {"support", "count"} | {f"{m.name}{suffix}" for m in table.metrics
                                    for suffix in ("", "_count", "_divergence", "_t", "_p")}
    cols = {k: v for k, v in table.columns.items() if k in mined}
    has_rows = table.kept_rows is not None and table.kept_rows.outcomes is not None
    rem = None
    if replicate is not None:
        from .replication import remeasure

        rem = remeasure(table, replicate)
    has_errors = any(m.baseline is not None for m in table.metrics)
    step = _Steps(progress, len(table) - 1, ["the tests of every slice"]
                  + (["the verdicts' reference models"] if has_errors else [])
                  + (["bootstrap intervals"] if st.bootstrap and has_rows else [])
                  + [f"distinct findings of {m.name}" for m in table.metrics])
    step(step.names[0])
    walk = _Walk(table)
    # one test per slice and metric: its p-value and its divergence interval at any level
    tests = {m.name: _DivergenceTest(table, k, m) for k, m in enumerate(table.metrics)}
    fam = _family(table.metric_names, cols, family_p, alpha, st.correction, st.family)
    if has_errors:
        step("the verdicts' reference models")
    defects = _defects(table, walk if has_rows else None, alpha, st.correction, st.family)
    boot: dict = {}
    if st.bootstrap and has_rows:
        step("bootstrap intervals")
        boot = _bootstrap_intervals(table, cols, walk, int(st.bootstrap), st.seed, st.confidence, st.top_k,
                                    st.sort_by, on_progress=lambda x: step("bootstrap intervals", x))
    min_size: dict = {}
    n_tested: dict = {}
    for k, m in enumerate(table.metrics):
        min_size[m.name], n_tested[m.name] = _metric_columns(table, k, m, cols, tests[m.name], fam, defects, rem,
                                                             boot, st, alpha)
    # estimates honest at the top, distinct findings and the default order (divergence.stats.findings)
    findings_cut = _findings_columns(table, cols, tests, alpha, st.correction, fam.level, fam.size,
                                     st.findings_work, step=step)
    assessment = Assessment(
        confidence=st.confidence, correction=st.correction, bootstrap=int(st.bootstrap), seed=int(st.seed),
        top_k=st.top_k, n_tested=n_tested, min_size=min_size, family=st.family, family_size=fam.size,
        corrected_level=fam.level, exploratory=bool(exploratory),
        replication=(replication_label or ("held-out rows" if holdout else "second table")) if rem is not None
        else None,
        replication_rows=rem.n_rows if rem is not None else None,
        bootstrap_skipped=bool(st.bootstrap) and not boot,
        intervals="analytic and bootstrap" if boot else "analytic",
        verdicts_from="rows" if has_rows else "tallies",
        findings_cut=findings_cut,
    )
    out = table.with_columns(columns=cols, assessment=assessment)
    if st.scores:
        from ..scores import add_scores

        out = add_scores(out, st.scores)
    return out


def _replication_input(table, replicate: pd.DataFrame | None, label: str | None,
                       holdout: float | None) -> tuple[pd.DataFrame | None, str | None, float | None]:
    """The rows to re-measure every slice on, their name and the holdout's share: those given, else
    those :func:`divergence.mine` kept in the table (one row per query for a table of queries)."""
    if replicate is None and table.replication is not None:  # kept by mine()
        replicate, label, holdout = table.replication.rows, table.replication.label, table.replication.holdout
    elif replicate is not None and (table.params or {}).get("query"):  # rows, for a table of queries
        replicate = _per_query(table, replicate)
    if holdout is not None:
        holdout = Replication(kind="holdout", share=holdout).share
    return replicate, label, holdout


class _Steps:
    """The statistics' steps, told to ``progress`` as each begins and as it goes."""

    def __init__(self, progress, slices: int, names: list[str]) -> None:
        self.progress, self.slices, self.names = progress, slices, names

    def __call__(self, what: str, within: float | None = None) -> None:
        """A step begins (``within`` None) or has done that share of its work."""
        if self.progress is not None:
            k = self.names.index(what) + (within or 0.0)
            extra = {} if within is None else {"step_fraction": float(within)}
            self.progress(progress_report("statistics", self.slices, fraction=k / len(self.names), step=what,
                                          steps=len(self.names), **extra))


class _Walk:
    """The lattice's walk order, computed on first use and kept (the verdicts and the bootstrap share it)."""

    def __init__(self, table) -> None:
        self.table, self.order = table, None

    def __call__(self):
        if self.order is None:
            self.order = walk_order(self.table.lattice.parent, self.table.codes)
        return self.order


@dataclasses.dataclass(frozen=True)
class _Family:
    """The multiple-testing family: per metric its slices' tested p-values, the other slices' counted
    alongside them, the q-values of both (this table's first), the corrected level and the family's size."""

    p: dict
    others: dict
    q: dict
    level: dict
    size: dict


def _family(names: list[str], cols: dict, family_p: Mapping[str, np.ndarray] | None, alpha: float,
            correction: str, family: str) -> _Family:
    """One family (every slice of every metric) or one per metric; other slices' p-values tested
    alongside these count in the family (after this table's)."""
    p_all = {name: _tested(cols[f"{name}_p"]) for name in names}
    others = {}
    for name in names:
        o = np.asarray((family_p or {}).get(name, ()), dtype=float)
        others[name] = o[np.isfinite(o)]
    q_all, level, size = _correct({n: np.concatenate([p_all[n], others[n]]) for n in names}, alpha, correction,
                                  family)
    return _Family(p=p_all, others=others, q=q_all, level=level, size=size)


@dataclasses.dataclass(frozen=True)
class _Defects:
    """The defect test of error metrics (harder cohort, lift shortfall, beaten by a reference), per
    metric, and its q-values and corrected levels over every slice it is applied to."""

    parts: dict
    q: dict
    level: dict


def _defects(table, walk, alpha: float, correction: str, family: str) -> _Defects:
    """The defect test of each error metric (``walk``: the lattice's walk when the rows are kept)."""
    parts = {m.name: _defect_test(table, k, m, walk) for k, m in enumerate(table.metrics) if m.baseline is not None}
    q, level = {}, {}
    for test in DEFECT_TESTS + ("normal",):
        q[test], level[test], _ = _correct(
            {n: d["p"][test] if test in d["p"] else d.get("p_normal", np.full(len(d["baseline"]), np.nan))
             for n, d in parts.items()}, alpha, correction, family)
    return _Defects(parts=parts, q=q, level=level)


def _metric_columns(table, k: int, m, cols: dict, test: "_DivergenceTest", fam: _Family, defects: _Defects, rem,
                    boot: dict, st: Statistics, alpha: float) -> tuple[dict, int]:
    """One metric's columns up to its verdict: the outcome's interval, the divergence's intervals and
    bounds, the q-value, the minimum size, the error metrics' baseline columns, the replication and
    bootstrap columns; returns the minimum size's derivation and the tests counted."""
    name = m.name
    n_items = len(table)
    n, s, q2 = metric_tallies(table.tallies, k)
    overall = float(cols[name][0])
    div = cols[f"{name}_divergence"]
    # intervals of the slice's outcome
    if m.binary:
        low, high = wilson_interval(np.rint(s), n, st.confidence)
        sigma = math.sqrt(max(overall * (1.0 - overall), 0.0))
    else:
        low, high = t_interval(n, s, q2, m.shift, st.confidence)
        sigma = math.sqrt(max(q2[0] / n[0] - (s[0] / n[0]) ** 2, 0.0))
    cols[f"{name}_ci_low"], cols[f"{name}_ci_high"] = low, high
    # the divergence: its interval at the confidence level and at the corrected level
    d_low, d_high = test.interval(st.confidence)
    a_low, a_high = test.interval(fam.level[name])
    cols[f"{name}_divergence_ci_low"], cols[f"{name}_divergence_ci_high"] = d_low, d_high
    cols[f"{name}_divergence_adj_low"], cols[f"{name}_divergence_adj_high"] = a_low, a_high
    qv = fam.q[name][:n_items]
    cols[f"{name}_q"] = qv
    tested = int(np.isfinite(fam.p[name]).sum()) + int(fam.others[name].size)
    others_significant = int((fam.q[name][n_items:] <= alpha).sum())
    significant = np.isfinite(qv) & (qv <= alpha) & ((a_low > 0) | (a_high < 0))
    # a bound that holds for every slice at once: the top of a list sorted by it is no luckier
    b_low, b_high = test.interval(1.0 - alpha / max(int(fam.size.get(name) or 1), 1))
    cols[f"{name}_divergence_bound"] = np.where(b_low > 0, b_low, np.where(b_high < 0, b_high,
                                                np.where(np.isfinite(b_low), 0.0, np.nan)))
    info = min_size_derivation(overall, sigma, m.binary, st.delta_for(name), st.confidence, name,
                               n_total=int(n[0]), tests=fam.size[name], correction=st.correction,
                               skew=float(getattr(m, "skew", 0.0)) if not m.binary else 0.0)
    meets = n >= info.n_min
    cols[f"{name}_meets_min_size"] = meets
    part = defects.parts.get(name)
    if part is not None:  # slice baseline, achievable error, lift (error metrics)
        cols[f"{name}_baseline"] = part["baseline"]
        cols[f"{name}_columns_reference"] = part["free"]
        cols[f"{name}_reference"] = part["reference"]
        _with_interval(cols, f"{name}_harder", part, "harder", defects.level["harder"].get(name))
        cols[f"{name}_harder_q"] = defects.q["harder"][name]
        cols[f"{name}_lift"] = part["lift"]
        _with_interval(cols, f"{name}_lift_shortfall", part, "short", defects.level["short"].get(name))
        cols[f"{name}_lift_shortfall_q"] = defects.q["short"][name]
        cols[f"{name}_worse_q"] = defects.q["beaten"][name]
    replicated = None
    if rem is not None:
        replicated = _replication_columns(cols, name, m, rem, significant, st.confidence, others_significant)
    cols[f"{name}_boot_low"], cols[f"{name}_boot_high"] = boot.get(name, (np.full(n_items, np.nan),) * 2)
    cols[f"{name}_verdict"] = _verdicts(div, significant, meets, replicated, part,
                                        {t: defects.q[t][name] for t in defects.q} if part is not None else None,
                                        alpha)
    return info, tested


def _verdicts(div: np.ndarray, significant: np.ndarray, meets: np.ndarray, replicated: np.ndarray | None,
              part: dict | None, defect_q: dict | None, alpha: float) -> np.ndarray:
    """Each slice's verdict (the whole dataset's is empty): not significant, too small to have shown
    a δ divergence or big enough and none there; significant, not replicated, or its direction (an
    error metric's above the whole dataset by the defect test's words)."""
    verdict = np.full(len(div), "", dtype=object)
    rest = np.ones(len(div), dtype=bool)
    rest[0] = False
    verdict[rest & ~significant & ~meets] = "too small"
    verdict[rest & ~significant & meets] = "noise"
    rest &= significant
    if replicated is not None:
        verdict[rest & ~replicated] = "not replicated"
        rest &= replicated
    if part is not None and defect_q is not None:
        above = rest & (div > 0)
        verdict[rest & (div < 0)] = "better"
        verdict[above] = _error_verdicts({t: q[above] for t, q in defect_q.items()}, alpha, part["rows"])
    else:
        verdict[rest & (div > 0)] = "above"
        verdict[rest & (div < 0)] = "below"
    verdict[rest & (div == 0)] = "noise"
    return verdict


def _per_query(table, replicate: pd.DataFrame) -> pd.DataFrame:
    """A query-level table's replication rows as one row per query, as mine() turns its own (unless
    they are that already: every metric a column)."""
    q = table.params["query"]
    if set(q["metrics"]) <= set(getattr(replicate, "columns", ())):
        return replicate
    from ..prepare.queries import query_table

    rq = query_table(replicate, query=q["query"], relevance=q["relevance"], rank=q["rank"], rank_by=q["rank_by"],
                     ascending=q["ascending"], metrics=q["metrics"], attributes=list(table.attributes), candidates=())
    return rq.frame.assign(**rq.values)


def _findings_columns(table, cols: dict, tests: dict, alpha: float, correction: str, level: dict,
                      family_size: dict, work: float | None = FINDINGS_WORK, step=None) -> dict:
    """Per metric: the lattice-aware shrunk divergence (:func:`divergence.stats.shrinkage.shrink_lattice`),
    the bound nearest zero of the simultaneous (Bonferroni) interval over the family, the distinct
    findings (``M_finding``, ``M_explained_by``) and each slice's position in the default order
    (``M_order``); see :mod:`divergence.stats.findings`. Each metric's search is given a budget of work
    (``work`` per slice and distinct row, None or 0 for none); past it, the findings found stand
    and a note says so (``assessment.findings_cut``)."""
    budget = (float(work), FINDINGS_WORK_FLOOR) if work else None
    n_items = len(table)
    cut = {}
    significant = {}
    subsets: dict = {}  # the lattice's one-item-shorter subsets, looked up once for every metric
    for k, m in enumerate(table.metrics):
        name = m.name
        n, s, q = metric_tallies(table.tallies, k)
        shrunk = shrink_lattice(table.codes, n, s, q, m.binary, table.index_of, subsets=subsets,
                                parent=table.lattice.parent)
        shrunk = np.where(n > 0, shrunk, np.nan)
        shrunk[0] = 0.0
        cols[f"{name}_divergence_shrunk"] = shrunk
        significant[name] = significant_slices(cols[f"{name}_q"], cols[f"{name}_divergence_adj_low"],
                                               cols[f"{name}_divergence_adj_high"], alpha)
    itemsets = table.itemsets
    for k, m in enumerate(table.metrics):
        name = m.name
        if step is not None:
            step(f"distinct findings of {name}")
        if table.lattice.distinct_codes is not None:
            # each metric's search is given about the work of the scan (deterministic units, see
            # divergence.stats.findings.distinct_findings): a scan with findings costs about twice one without
            found = distinct_findings(table, k, significant[name], alpha, correction, level[name],
                                      int(family_size.get(name) or 1), budget=budget,
                                      first_bar=_metric_bar(cols[f"{name}_p"], alpha, correction,
                                                            int(family_size.get(name) or 1)))
            finding, by = found.finding, found.explained_by
            ties = found.ties or {}
            effect = (found.effect, found.effect_low, found.effect_high) if found.effect is not None \
                else (np.full(n_items, np.nan),) * 3
            if found.cut:
                cut[name] = (f"{name}: the search for distinct findings stopped after {int(finding.sum()):,} "
                             f"({found.cut}); the significant slices they do not explain are listed as significant, "
                             "neither a finding nor explained.")
        else:  # no distinct rows to test on (a slice typed by hand): no finding is claimed
            finding, by = np.zeros(n_items, dtype=bool), np.full(n_items, -1)
            ties, effect = {}, (np.full(n_items, np.nan),) * 3
        explained = np.full(n_items, "", dtype=object)
        explained[by >= 0] = itemsets[by[by >= 0]]
        cols[f"{name}_finding"] = finding
        cols[f"{name}_explained_by"] = explained
        # every name the data do not tell a finding from, best first
        aliases = np.full(n_items, "", dtype=object)
        for f, names in ties.items():
            aliases[f] = " | ".join(str(itemsets[x]) for x in names)
        cols[f"{name}_alias"] = aliases
        # the finding's effect in the model, given the other findings, and the verdict's direction with it
        cols[f"{name}_effect"], cols[f"{name}_effect_ci_low"], cols[f"{name}_effect_ci_high"] = effect
        _verdict_follows_effect(cols, name, finding, np.asarray(effect[0], dtype=float), alpha,
                                table.kept_rows is not None and table.kept_rows.outcomes is not None)
        # a finding lying wholly inside another is distinct for how it differs from the rest of that one
        within = enclosing_findings(table, k, finding)
        holder = np.full(n_items, "", dtype=object)
        holder[within >= 0] = itemsets[within[within >= 0]]
        rest, diff, low, high = within_difference(table, k, within, 1.0 - alpha)
        cols[f"{name}_within"] = holder
        cols[f"{name}_within_rest"] = rest
        cols[f"{name}_within_difference"] = diff
        cols[f"{name}_within_ci_low"] = low
        cols[f"{name}_within_ci_high"] = high
        cols[f"{name}_order"] = default_order(cols, name, significant[name])
    return cut


def _verdict_follows_effect(cols: dict, name: str, finding: np.ndarray, effect: np.ndarray, alpha: float,
                            rows: bool) -> None:
    """A finding's verdict takes the direction of its effect in the model (given the other findings)
    where that differs from its divergence from the whole dataset: a slice below the whole dataset
    only because another finding raises it, yet worse than its own rows' share of the model."""
    verdict = cols[f"{name}_verdict"]
    div = np.asarray(cols[f"{name}_divergence"], dtype=float)
    flip = finding & np.isfinite(effect) & (effect != 0) & (np.sign(effect) != np.sign(div))
    flip &= np.isin(verdict.astype(str), ("better", "above", "below", "defect", "hard cohort", "undetermined"))
    if not flip.any():
        return
    verdict = verdict.copy()
    error = f"{name}_worse_q" in cols
    up, down = flip & (effect > 0), flip & (effect < 0)
    if error:
        verdict[down] = "better"
        if up.any():
            q = {"harder": cols[f"{name}_harder_q"], "short": cols[f"{name}_lift_shortfall_q"],
                 "beaten": cols[f"{name}_worse_q"]}
            verdict[up] = _error_verdicts({t: np.asarray(v, dtype=float)[up] for t, v in q.items()}, alpha, rows)
    else:
        verdict[up], verdict[down] = "above", "below"
    cols[f"{name}_verdict"] = verdict


def _metric_bar(p: np.ndarray, alpha: float, correction: str, family: int) -> float | None:
    """The |Z| a metric's first distinct finding must reach: the scan's correction applied to this
    metric's slices alone (its largest p-value significant there, as a two-sided normal deviate; no
    finding when none is). Over a family of several metrics, Benjamini-Hochberg's realised bar is
    loosened by another metric's discoveries (a flat FNR borrows FPR's), while a meeting reads each
    metric's findings on their own; the later findings' Holm bar is over the scan's family already.
    None (no bar beyond the family's) when the family holds this metric's tests only."""
    from .stats import normal_quantile

    p = np.asarray(p, dtype=float)[1:]
    p = p[np.isfinite(p)]
    if family <= p.size:
        return None
    if p.size == 0:
        return math.inf
    q = adjust_p(p, correction)
    passed = p[q <= alpha]
    return float(-normal_quantile(max(float(passed.max()), 1e-300) / 2.0)) if passed.size else math.inf


def _error_verdicts(q: dict, alpha: float, rows: bool) -> np.ndarray:
    """The verdict of error slices significantly above the whole dataset, from the corrected
    q-values of the tests of :func:`_defect_test` (NaN: not shown, as not significant).

    With rows: ``defect`` when a reference fitted within the slice beats the model by more than
    on the whole dataset (``beaten``), or when the lift is reliably short of its partition's
    while the baseline is not reliably harder; ``hard cohort`` when, not beaten, the baseline is
    reliably harder and the lift, compared, not reliably short; otherwise ``undetermined`` (both,
    neither, or a 0/1 target's lift not compared because its baseline is at chance). Without rows (tallies): ``hard cohort`` when the baseline is reliably harder and
    the lift reliably no lower, else ``undetermined``."""
    def sig(name):
        return np.asarray(q[name], dtype=float) <= alpha

    harder, short = sig("harder"), sig("short")
    out = np.full(harder.shape[0], "undetermined", dtype=object)
    if not rows:
        out[harder & sig("normal")] = "hard cohort"
        return out
    beaten = sig("beaten")
    tested = np.isfinite(np.asarray(q["short"], dtype=float))  # the lift compared (not at chance)
    out[~beaten & harder & tested & ~short] = "hard cohort"
    out[beaten | (short & ~harder)] = "defect"
    return out


def _with_interval(cols: dict, column: str, part: dict, test: str, level, estimate: bool = True) -> None:
    """A defect test's estimate (``column``, unless ``estimate`` is False) and its interval at the
    level its q-values are corrected to (``column_low``, ``column_high``: each end the one-sided
    bound at that level, so the q-value is at most alpha exactly when the low end is above 0)."""
    from scipy import special as sp

    est, se, dof = part["est"][test], part["se"][test], part["dof"]
    if estimate:
        cols[column] = est
    a = 1.0 - (level if level is not None else 0.95)
    with np.errstate(invalid="ignore"):
        t = sp.stdtrit(dof, 1.0 - a)
        cols[f"{column}_low"] = np.where(np.isfinite(se), est - t * se, np.nan)
        cols[f"{column}_high"] = np.where(np.isfinite(se), est + t * se, np.nan)


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
    Welch interval of :func:`divergence.stats.stats.mean_difference_test` (whose inversion is the
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
    if m.baseline == "majority_class":
        return _majority_class_error(table, m)
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
        if m.baseline == "entropy":
            return np.where(n > 0, _entropy(p), np.nan)
        return np.where(n > 0, p * (1.0 - p), np.nan)


def _majority_class_error(table, m) -> np.ndarray:
    """Per slice, the error of predicting its majority class on its rows: 1 - (the largest class's
    rows) / (rows), the class counts walked over the kept rows (NaN without them)."""
    from ..mining.lattice import walk_tallies

    if table.kept_rows is None or table.kept_rows.outcomes is None:
        return np.full(len(table), np.nan)
    o = table.outcome(m.name)
    y = np.where(np.isnan(o.values), np.nan, np.asarray(o.target, dtype=float))
    ok = ~np.isnan(y)
    onehot = np.zeros((len(y), int(np.nanmax(y)) + 1 if ok.any() else 1))
    onehot[np.flatnonzero(ok), y[ok].astype(np.int64)] = 1.0
    counts = walk_tallies(walk_order(table.lattice.parent, table.codes), table.kept_rows.codes, onehot)
    n = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, 1.0 - counts.max(axis=1) / n, np.nan)


def _entropy(p: np.ndarray) -> np.ndarray:
    """The log loss of predicting the share ``p`` of positives on rows with that share: -p log p -
    (1 - p) log(1 - p) (0 at p = 0 or 1)."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return -(np.where(p > 0, p * np.log(p), 0.0) + np.where(p < 1, (1.0 - p) * np.log1p(-p), 0.0))


#: the tests behind a defect or a hard cohort (each one-sided, corrected over every slice)
DEFECT_TESTS = ("harder", "short", "beaten")
#: where the 0/1 error's and Brier's natural scale ends (the error of a coin flip)
_CHANCE = {3: 0.5, 4: 0.25}


def _natural_scale(kind: int):
    """The scale on which an error metric's lift is compared (a function and its derivative):
    the one on which a noisier target moves the baseline's error and the model's alike, so a
    noisier target leaves the lift unchanged. Squared error: the error itself (independent noise
    adds its variance to both); absolute error: its square (exact for normal errors, whose mean
    absolute value is proportional to their standard deviation); 0/1 error: -log(1 - 2 error)
    (labels flipped with probability eta multiply 1 - 2 error of every predictor by 1 - 2 eta);
    Brier: -log(1 - 4 Brier) (for calibrated scores, 1 - 4 Brier is multiplied by (1 - 2 eta)^2).
    The two logs end at chance (an error of 1/2, a Brier score of 1/4): NaN there."""
    if kind == 2:
        return (lambda x: x * x), (lambda x: 2.0 * x)
    if kind in _CHANCE:
        k = 1.0 / _CHANCE[kind]

        def phi(x):
            x = np.asarray(x, dtype=float)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(x < 1.0 / k, -np.log1p(-k * x), np.nan)

        def dphi(x):
            x = np.asarray(x, dtype=float)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(x < 1.0 / k, k / (1.0 - k * x), np.nan)

        return phi, dphi
    return (lambda x: x), (lambda x: np.ones_like(np.asarray(x, dtype=float)))


def attribute_groups(codes: np.ndarray) -> np.ndarray:
    """Per itemset, the id of its set of attributes: itemsets with the same id are cells of one
    partition of the rows (the whole dataset's id is that of the empty set)."""
    present = np.ascontiguousarray(codes >= 0)
    if present.shape[1] == 0:
        return np.zeros(present.shape[0], dtype=np.int64)
    packed = np.packbits(present, axis=1)
    view = packed.view(np.dtype((np.void, packed.shape[1])))[:, 0]
    return np.unique(view, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _elsewhere(group, n, base, err, c_bb, c_be, c_ee, dphi) -> dict:
    """Per itemset, its partition's pooled baseline and error (the slices on the same attributes,
    each with its own constant: the slice compared with the other values of its attributes) and
    the variances and covariances the tests need (each row's influence, cell by cell)."""
    ok = (n > 0) & np.isfinite(base) & np.isfinite(err) & np.isfinite(c_bb) & np.isfinite(c_ee)
    w = np.where(ok, n, 0.0)
    g = group
    size = int(g.max(initial=-1)) + 1

    def total(x):
        return np.bincount(g, weights=np.where(ok, x, 0.0), minlength=size)

    nj = total(w)
    with np.errstate(invalid="ignore", divide="ignore"):
        bj = total(w * np.nan_to_num(base)) / nj
        ej = total(w * np.nan_to_num(err)) / nj
        aj, gj = dphi(bj), dphi(ej)
        db = np.nan_to_num(base) - bj[g]
        de = np.nan_to_num(err) - ej[g]
        var_b = (total(c_bb) + total(w * db * db)) / (nj * nj)
        dl = aj[g] * db - gj[g] * de
        var_l = (aj * aj * total(c_bb) - 2.0 * aj * gj * total(c_be) + gj * gj * total(c_ee) + total(w * dl * dl)) \
            / (nj * nj)
    return {"n": nj[g], "base": bj[g], "err": ej[g], "a": aj[g], "g": gj[g], "var_base": var_b[g],
            "var_lift": var_l[g]}


def _part_base(group: np.ndarray, n: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Per itemset, its partition's pooled baseline (see :func:`_elsewhere`)."""
    ok = (n > 0) & np.isfinite(base)
    w = np.where(ok, n, 0.0)
    size = int(group.max(initial=-1)) + 1
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = np.bincount(group, weights=w * np.nan_to_num(base), minlength=size) / \
            np.bincount(group, weights=w, minlength=size)
    return pooled[group]


def _defect_test(table, k: int, m, walk) -> dict:
    """Per slice: the constant baseline, the achievable errors and the three one-sided tests
    behind the verdict of an error metric (see :func:`_error_verdicts`), from the moment sums of
    :func:`divergence.stats.verdict_walk.walk_verdict`. "Elsewhere" is the slice's partition: the slices on
    the same attributes (the other values of its items), each with its own constant, pooled; a
    comparison with the whole dataset instead would credit the whole dataset's constant with the
    variance between those values, and a slice on a feature the model uses would always look
    easier than it is. Each difference has its variance by the delta method from each row's
    influence (the slice is one of the pooled cells; the whole dataset holds the slice).

    The baseline is the slice's constant for a real-valued target (its error measures how much
    the target varies); for a 0/1 target (0/1 error, Brier) the constant's error is the class
    balance only, blind to noisier labels, so the baseline there is the best model-free
    reference fitted within the slice (its constant, or one majority class or base rate per
    item of an attribute it does not fix, leave-one-out).

    ``harder``: the baseline's error minus the partition's; ``short``: the lift shortfall, the
    partition's lift minus the slice's, the lift being phi(baseline) - phi(model error) on the
    metric's natural scale phi (:func:`_natural_scale`; the difference itself where the scale
    ends); ``beaten``: phi(E) - phi(A) (A the achievable error, any reference, the model's offset
    removed included) minus the whole dataset's: the model falls short of a reference fitted
    within the slice by more than it does on the whole dataset.
    """
    kind = _BASELINE_CODE[m.baseline]
    if walk is None or kind in (5, 6):  # the log loss's and the classes' references are not walked: from the tallies
        return _defect_from_tallies(table, k, m, kind)
    o = table.outcome(m.name)
    e = np.asarray(o.values, dtype=float)
    y = np.where(np.isnan(e), np.nan, np.asarray(o.target, dtype=float))
    pr = np.where(np.isnan(e), np.nan, np.asarray(o.prediction, dtype=float))
    n_values = np.array([b.n_items for b in table.bins], dtype=np.int64)
    out = walk_verdict(walk(), table.kept_rows.codes, np.ascontiguousarray(table.codes, dtype=np.int64), n_values,
                       np.ascontiguousarray(e), np.ascontiguousarray(np.nan_to_num(y)),
                       np.ascontiguousarray(np.nan_to_num(pr)), int(kind))
    c = {name: out[:, j] for j, name in enumerate(VERDICT_COLUMNS)}
    n, big_e, ach, free = c["n"], c["error"], c["achievable"], c["free"]
    binary = kind in _CHANCE
    phi, dphi = _natural_scale(kind)
    ident, one = _natural_scale(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if binary:
            base = np.where(n >= 2, free, np.nan)
            c_bb = c["free2"] - n * free * free
            c_be = c["free_err"] - n * free * big_e
        else:
            base = c["baseline"]
            c_bb = c["beta2"] - n * base * base
            c_be = c["beta_err"] - n * base * big_e
        c_ee = c["err2"] - n * big_e * big_e
        group = attribute_groups(table.codes)
        est, se = {}, {}
        # harder: the baseline against its partition's
        part = _elsewhere(group, n, base, big_e, c_bb, c_be, c_ee, one)
        est["harder"] = base - part["base"]
        se["harder"] = np.sqrt(np.maximum(c_bb / (n * n) + part["var_base"] - 2.0 * c_bb / (n * part["n"]), 0.0))

        def shortfall(phi, dphi):
            p = _elsewhere(group, n, base, big_e, c_bb, c_be, c_ee, dphi)
            a_s, g_s = dphi(base), dphi(big_e)
            lift = phi(base) - phi(big_e)
            own = a_s * a_s * c_bb - 2.0 * a_s * g_s * c_be + g_s * g_s * c_ee
            cross = a_s * p["a"] * c_bb - (a_s * p["g"] + g_s * p["a"]) * c_be + g_s * p["g"] * c_ee
            var = np.maximum(own / (n * n) + p["var_lift"] - 2.0 * cross / (n * p["n"]), 0.0)
            return lift, (phi(p["base"]) - phi(p["err"])) - lift, np.sqrt(var)

        lift, short, short_se = shortfall(phi, dphi)
        if binary:
            # where the model's error reaches chance (the baselines below it), the difference
            # itself; where a baseline does, these columns predict nothing there and the lift is
            # not compared (noise would shrink a difference on any other scale)
            lift_i, short_i, short_se_i = shortfall(ident, one)
            chance = _CHANCE[kind]
            informed = (base < chance) & (_part_base(group, n, base) < chance)
            use = np.isfinite(short) & np.isfinite(short_se)
            lift, short, short_se = (np.where(use, x, np.where(informed, y, np.nan))
                                     for x, y in ((lift, lift_i), (short, short_i), (short_se, short_se_i)))
        est["short"], se["short"] = short, short_se

        # beaten: (phi(E) - phi(A)) of the slice minus the whole dataset's
        def beaten(phi, dphi):
            ge, ga = dphi(big_e), dphi(ach)
            c_rr = c["ref2"] - n * ach * ach
            c_re = c["ref_err"] - n * ach * big_e
            x_rr0 = c["ref_ref0"] - ach * c["ref0"]
            x_er0 = c["err_ref0"] - big_e * c["ref0"]
            own = ge * ge * c_ee - 2.0 * ge * ga * c_re + ga * ga * c_rr
            cross = ge * ge[0] * c_ee - ge * ga[0] * x_er0 - ga * ge[0] * c_re + ga * ga[0] * x_rr0
            n0 = n[0]
            var = np.maximum(own / (n * n) + own[0] / (n0 * n0) - 2.0 * cross / (n * n0), 0.0)
            gap = phi(big_e) - phi(ach)
            return gap - gap[0], np.sqrt(var)

        est["beaten"], se["beaten"] = beaten(phi, dphi)
        if binary:
            b_i, s_i = beaten(ident, one)
            use = np.isfinite(est["beaten"]) & np.isfinite(se["beaten"])
            est["beaten"], se["beaten"] = np.where(use, est["beaten"], b_i), np.where(use, se["beaten"], s_i)
    dof = np.maximum(n - 1.0, 1.0)
    p = {}
    for name in DEFECT_TESTS:
        q = _one_sided_t(est[name], se[name], dof)
        q = np.where((n >= 2) & np.isfinite(est[name]) & np.isfinite(se[name]), q, np.nan)
        q[0] = np.nan
        p[name] = q
    # the constant baseline of the additive kinds as the tallies give it (every path alike)
    constant = np.where(n > 0, c["baseline"], np.nan) if kind == 2 else _baseline(table, m)
    return {"baseline": constant, "reference": np.where(n >= 2, ach, np.nan), "free": np.where(n >= 2, free, np.nan),
            "lift": lift, "est": est, "se": se, "dof": dof, "p": p, "rows": True}


def _one_sided_t(diff: np.ndarray, se: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """P(T >= diff / se), T Student's t with ``dof`` degrees of freedom (0 or 1 where se is 0)."""
    from scipy import special as sp

    with np.errstate(invalid="ignore", divide="ignore"):
        p = sp.stdtr(dof, -diff / np.where(se > 0, se, 1.0))
        return np.where(se > 0, p, np.where(diff > 0, 0.0, 1.0))


def _defect_from_tallies(table, k: int, m, kind: int) -> dict:
    """Without rows: the constant baseline from the tallies and, for 0/1 error and Brier (the
    target's tallies give their constant baseline's variance), the baseline against its
    partition's and the lift shortfall, the latter with a conservative variance (Minkowski's
    bound on the covariances the rows would give). The references need the rows; so does the
    variance of a real target's baseline."""
    base = _baseline(table, m)
    n, s, q = metric_tallies(table.tallies, k)
    big_e = np.asarray(table.columns[m.name], dtype=float)
    nan = np.full(len(table), np.nan)
    est = {name: nan.copy() for name in DEFECT_TESTS}
    se = {name: nan.copy() for name in DEFECT_TESTS}
    lift = base - big_e
    if kind in (3, 4, 5, 6):
        with np.errstate(invalid="ignore", divide="ignore"):
            ones = m.target_shift * n + table.tallies[:, m.aux] if m.aux >= 0 else np.full(len(n), np.nan)
            zeros = n - ones
            p = ones / n
            # a row's baseline error: 1 off the slice's majority class; (y - p)^2 for the base rate;
            # -log p on a positive and -log(1 - p) on a negative for the log loss's
            if kind in (3, 6):  # a row's baseline error is 0 or 1
                s_bb = n * base
            elif kind == 4:
                s_bb = ones * (1 - p) ** 4 + zeros * p ** 4
            else:
                s_bb = (ones * np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0) ** 2
                        + zeros * np.where(p < 1, np.log1p(-np.where(p < 1, p, 0.0)), 0.0) ** 2)
            c_bb = s_bb - n * base * base
            c_ee = np.maximum(q - s * s / n, 0.0)
            c_be = -np.sqrt(np.maximum(c_bb, 0.0) * c_ee)  # the worst case for the variance below
            group = attribute_groups(table.codes)
            one = _natural_scale(1)[1]
            part = _elsewhere(group, n, base, big_e, c_bb, c_be, c_ee, one)
            est["harder"] = base - part["base"]
            se["harder"] = np.sqrt(np.maximum(c_bb / (n * n) + part["var_base"] - 2.0 * c_bb / (n * part["n"]), 0.0))
            lift = base - big_e
            est["short"] = (part["base"] - part["err"]) - lift
            sd = (np.sqrt(np.maximum(c_ee, 0.0)) + np.sqrt(np.maximum(c_bb, 0.0))) / n
            se["short"] = sd + np.sqrt(np.maximum(part["var_lift"], 0.0))
    p = {}
    dof = np.maximum(n - 1.0, 1.0)
    for name in DEFECT_TESTS:
        pv = _one_sided_t(est[name], se[name], dof)
        pv = np.where((n >= 2) & np.isfinite(est[name]) & np.isfinite(se[name]), pv, np.nan)
        pv[0] = np.nan
        p[name] = pv
    # the lift reliably no lower: the shortfall reliably below 0
    p_normal = _one_sided_t(-est["short"], se["short"], dof)
    p_normal = np.where(np.isfinite(p["short"]), p_normal, np.nan)
    return {"baseline": base, "reference": nan, "free": nan, "lift": lift, "est": est, "se": se, "dof": dof, "p": p,
            "p_normal": p_normal, "rows": False}


def _bootstrap_intervals(table, cols, walk, replicates: int, seed: int, confidence: float, top_k, sort_by,
                         on_progress=None) -> dict:
    """Percentile bootstrap interval of every slice's outcome, each metric, all at once.

    Poisson(1) weights per row (the Poisson bootstrap: each slice sees its own rows resampled
    with replacement, and the whole dataset the same weights), summed once per distinct
    discretized row and then over each slice's distinct rows by one walk of the lattice. For
    a 0/1 outcome the sums over a distinct row are drawn directly (Poisson of its ones and of
    its zeros: exact in distribution). A slice with no event (or no non-event) has a
    bootstrap distribution of one value: its interval is widened to the Wilson interval.
    """
    from ..prepare.compression import compress

    n_items = len(table)
    metrics = table.metrics
    per_metric = {m.name: np.ones(n_items, dtype=bool) for m in metrics}
    if top_k is not None or n_items * replicates * len(metrics) > MAX_BOOTSTRAP_CELLS:
        per_metric = {m.name: _slices_to_bootstrap(table, cols, m.name, top_k or 1000, sort_by) for m in metrics}
    wanted = np.logical_or.reduce(list(per_metric.values()))
    if int(wanted.sum()) * replicates * len(metrics) > MAX_BOOTSTRAP_CELLS:
        return {}
    comp = compress(table.kept_rows.codes, np.ones((table.n_rows, 1)))
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
        done = (lambda x, b0=b0, bc=bc: on_progress((b0 + x * bc) / replicates)) if on_progress else None
        part = walk_boot_means(walk(), codes, wanted, weights, bc, shifts, on_progress=done)
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


class _Columns:
    """A table's metrics with other columns: what :func:`divergence.scores.score_values` reads."""

    def __init__(self, table, columns) -> None:
        self.columns, self.metric = columns, table.metric


def _slices_to_bootstrap(table, cols, name, top_k, sort_by) -> np.ndarray:
    n_items = len(table)
    wanted = np.zeros(n_items, dtype=bool)
    k = int(top_k or 1000)
    key = sort_by or f"{name}_divergence"
    from ..scores import is_score, parse_score, score_values

    if key not in cols and is_score(key):  # a peer's score: computed for this choice
        cols = dict(cols, **{key: score_values(_Columns(table, cols), name, parse_score(key))})
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
