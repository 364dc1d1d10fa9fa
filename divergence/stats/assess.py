"""Worst-slice statistics: intervals, derived minimum size, multiple-testing control, slice
baselines, achievable error and lift, shrinkage, replication, and one verdict per slice and metric.

The verdict rule (``alpha = 1 - confidence``), applied in this order:

1. Not significant: its q-value (corrected over the family of tests: the metric's slices by
   default, every metric's with ``family="scan"``) is above alpha, or its corrected divergence
   interval contains 0 (for a real-valued outcome the two agree by construction, the test being
   the interval's inversion; for a 0/1 outcome the test is Fisher's and the interval Newcombe's,
   and a finding needs both): ``too small`` below n_min (too few rows to tell), else ``noise``
   (no finding: its interval, narrower than delta, holds the whole dataset's value). n_min is the
   defined-row count from which the slice's interval is narrower than delta (see
   :func:`~divergence.stats.min_size.min_size_derivation`),
   independent of the number of slices tested. A significant slice goes on at any size;
   ``M_meets_min_size`` false marks it *indicative*.
2. ``not replicated``: replication data was given and the slice did not replicate (same
   direction, and the replication interval at the Bonferroni-corrected level excluding the
   replication's whole-dataset value).
3. Error metrics with a slice baseline (``error``, ``brier``, ``abs_error``,
   ``squared_error``): ``better`` when the error is below the whole dataset's. When it is
   above, three one-sided tests, each corrected over every slice it is applied to (see
   :mod:`~divergence.stats.defect_tests`): the target ``harder`` (the slice's baseline error above its
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

:func:`assess` runs the steps, each in its module: the tests of every slice and their family
(``slice_tests``), the minimum size (``min_size``), the error metrics' defect tests
(``defect_tests``), the replication (``replication_columns``), the bootstrap
(``bootstrap_intervals``), then the verdict here and the distinct findings (``findings_columns``).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..budget import progress_report
from ..mining.lattice import Walk, walk_order
from ..prepare.tallies import metric_tallies
from ..scores import add_scores
from ..settings import Statistics, section
from ..table import Assessment, MinSize
from ..vocabulary import FAMILIES, VERDICTS
from .bootstrap_intervals import bootstrap_intervals
from .defect_tests import Defects, error_verdicts, measure_defects, with_interval
from .findings_columns import findings_columns
from .min_size import DEFAULT_DELTA_RATE, DEFAULT_DELTA_SD, min_size_derivation, support_for_min_size
from .replication import remeasure
from .replication_columns import replication_columns, replication_input
from .slice_tests import DivergenceTest, TestingFamily, testing_family
from .stats import t_interval, wilson_interval
from .verdict_predictions import add_moved_tests, promote_moved_defects

__all__ = ["assess", "support_for_min_size", "min_size_derivation", "VERDICTS", "FAMILIES", "DEFAULT_DELTA_RATE",
           "DEFAULT_DELTA_SD"]


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
    replicate, replication_label, holdout = replication_input(table, replicate, replication_label, holdout)
    alpha = 1.0 - st.confidence
    # the mined columns only: a table assessed before is assessed afresh
    mined = {"support", "count"} | {f"{m.name}{suffix}" for m in table.metrics
                                    for suffix in ("", "_count", "_divergence", "_t", "_p")}
    cols = {k: v for k, v in table.columns.items() if k in mined}
    has_rows = table.kept_rows is not None and table.kept_rows.outcomes is not None
    rem = None
    if replicate is not None:
        rem = remeasure(table, replicate)
    has_errors = any(m.baseline is not None for m in table.metrics)
    step = _Steps(progress, len(table) - 1, ["the tests of every slice"]
                  + (["the verdicts' reference models"] if has_errors else [])
                  + (["bootstrap intervals"] if st.bootstrap and has_rows else [])
                  + [f"distinct findings of {m.name}" for m in table.metrics])
    step(step.names[0])
    walk = _Walk(table)
    # one test per slice and metric: its p-value and its divergence interval at any level
    tests = {m.name: DivergenceTest(table, k, m) for k, m in enumerate(table.metrics)}
    fam = testing_family(table.metric_names, cols, family_p, alpha, st.correction, st.family)
    if has_errors:
        step("the verdicts' reference models")
    defects = measure_defects(table, walk if has_rows else None, alpha, st.correction, st.family)
    if has_rows:
        add_moved_tests(table, defects.parts, walk)
    boot: dict = {}
    if st.bootstrap and has_rows:
        step("bootstrap intervals")
        boot = bootstrap_intervals(table, cols, walk, int(st.bootstrap), st.seed, st.confidence, st.top_k,
                                    st.sort_by, on_progress=lambda x: step("bootstrap intervals", x))
    min_size: dict = {}
    n_tested: dict = {}
    for k, m in enumerate(table.metrics):
        min_size[m.name], n_tested[m.name] = _metric_columns(table, k, m, cols, tests[m.name], fam, defects, rem,
                                                             boot, st, alpha)
    # estimates honest at the top, distinct findings and the default order (divergence.stats.findings)
    findings_cut = findings_columns(table, cols, tests, alpha, st.correction, fam.level, fam.size,
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
        out = add_scores(out, st.scores)
    return out


class _Steps:
    """The statistics' steps, told to ``progress`` as each begins and as it goes."""

    def __init__(self, progress, slices: int, names: list[str]) -> None:
        self.progress, self.slices, self.names = progress, slices, names

    def __call__(self, what: str, within: float | None = None) -> None:
        """A step begins (``within`` None) or has done that share of its work."""
        if self.progress is not None:
            k = self.names.index(what) + (within or 0.0)
            extra: dict[str, Any] = {} if within is None else {"step_fraction": float(within)}
            self.progress(progress_report("statistics", self.slices, fraction=k / len(self.names), step=what,
                                          steps=len(self.names), **extra))


class _Walk:
    """The lattice's walk order, computed on first use and kept (the verdicts and the bootstrap share it)."""

    def __init__(self, table) -> None:
        self.table = table
        self.order: Walk | None = None

    def __call__(self):
        if self.order is None:
            self.order = walk_order(self.table.lattice.parent, self.table.codes)
        return self.order


def _metric_columns(table, k: int, m, cols: dict, test: DivergenceTest, fam: TestingFamily, defects: Defects, rem,
                    boot: dict, st: Statistics, alpha: float) -> tuple[MinSize, int]:
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
        with_interval(cols, f"{name}_harder", part, "harder", defects.level["harder"].get(name))
        cols[f"{name}_harder_q"] = defects.q["harder"][name]
        cols[f"{name}_lift"] = part["lift"]
        with_interval(cols, f"{name}_lift_shortfall", part, "short", defects.level["short"].get(name))
        cols[f"{name}_lift_shortfall_q"] = defects.q["short"][name]
        cols[f"{name}_worse_q"] = defects.q["beaten"][name]
    replicated = None
    if rem is not None:
        replicated = replication_columns(cols, name, m, rem, significant, st.confidence, others_significant)
    cols[f"{name}_boot_low"], cols[f"{name}_boot_high"] = boot.get(name, (np.full(n_items, np.nan),) * 2)
    cols[f"{name}_verdict"] = _verdicts(div, significant, meets, replicated, part,
                                        {t: defects.q[t][name] for t in defects.q} if part is not None else None,
                                        alpha)
    if part is not None and part.get("moved_p") is not None:
        cols[f"{name}_verdict"] = promote_moved_defects(cols[f"{name}_verdict"], part["moved_p"], part["p"]["harder"],
                                                        1.0 - fam.level[name])
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
        verdict[above] = error_verdicts({t: q[above] for t, q in defect_q.items()}, alpha, part["rows"])
    else:
        verdict[rest & (div > 0)] = "above"
        verdict[rest & (div < 0)] = "below"
    verdict[rest & (div == 0)] = "noise"
    return verdict

