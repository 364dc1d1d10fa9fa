"""The assessment's last step, per metric: the lattice-aware shrunk divergence, the distinct
findings (what each significant slice is explained by, its aliases, its effect in the model and, for
a finding inside another, how it differs from the rest of that one) and the default order
(:func:`findings_columns`); the searches themselves are :mod:`divergence.stats.findings`'.
"""
from __future__ import annotations

import math

import numpy as np

from ..prepare.tallies import metric_tallies
from .defect_tests import error_verdicts
from .findings import default_order, distinct_findings, enclosing_findings, significant_slices, within_difference
from .shrinkage import shrink_lattice
from .stats import adjust_p, normal_quantile

__all__ = ["findings_columns", "FINDINGS_WORK", "FINDINGS_WORK_FLOOR"]


#: the work the search for a metric's distinct findings may do by default, per slice and distinct
#: row (itemsets walked, rows read, entries updated; see divergence.stats.findings): four times what the
#: complete searches of Adult at supports 0.02 to 0.005 use (at most 99 per slice and row), so that
#: the search is complete on real tables and ends on pathological ones; ``Statistics.findings_work``
#: sets it (0: no limit)
FINDINGS_WORK = 400
#: the least work it may do (a small table's search always ends: it takes milliseconds)
FINDINGS_WORK_FLOOR = 200_000


def findings_columns(table, cols: dict, tests: dict, alpha: float, correction: str, level: dict,
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
    del subsets  # the shrinkage's lookups (hash tables of the lattice): not held through the findings' peak
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
        explained[by >= 0] = _names(table, by[by >= 0])
        cols[f"{name}_finding"] = finding
        cols[f"{name}_explained_by"] = explained
        # every name the data do not tell a finding from, best first
        aliases = np.full(n_items, "", dtype=object)
        for f, names in ties.items():
            aliases[f] = " | ".join(table.itemsets_of(names))
        cols[f"{name}_alias"] = aliases
        # the finding's effect in the model, given the other findings, and the verdict's direction with it
        cols[f"{name}_effect"], cols[f"{name}_effect_ci_low"], cols[f"{name}_effect_ci_high"] = effect
        # a finding lying wholly inside another is distinct for how it differs from the rest of that one
        within = enclosing_findings(table, k, finding)
        holder = np.full(n_items, "", dtype=object)
        holder[within >= 0] = _names(table, within[within >= 0])
        rest, diff, low, high = within_difference(table, k, within, 1.0 - alpha)
        _verdict_follows_effect(cols, name, finding, np.asarray(effect[0], dtype=float), alpha,
                                table.kept_rows is not None and table.kept_rows.outcomes is not None, diff)
        cols[f"{name}_within"] = holder
        cols[f"{name}_within_rest"] = rest
        cols[f"{name}_within_difference"] = diff
        cols[f"{name}_within_ci_low"] = low
        cols[f"{name}_within_ci_high"] = high
        cols[f"{name}_order"] = default_order(cols, name, significant[name])
    return cut


def _names(table, rows: np.ndarray) -> np.ndarray:
    """The readable itemsets of ``rows`` (an object array; each distinct row's name made once: they
    are a metric's few findings)."""
    uniq, inverse = np.unique(rows, return_inverse=True)
    return np.asarray(table.itemsets_of(uniq), dtype=object)[inverse.ravel()]


def _verdict_follows_effect(cols: dict, name: str, finding: np.ndarray, effect: np.ndarray, alpha: float,
                            rows: bool, within_difference: np.ndarray | None = None) -> None:
    """A finding's verdict takes the direction of its effect in the model (given the other findings)
    where that differs from its divergence from the whole dataset: a slice below the whole dataset
    only because another finding raises it, yet worse than its own rows' share of the model. An
    error metric's finding that the effect would call ``better`` while it is worse than the whole
    dataset and than the rest of the finding holding it (``within_difference`` > 0: its lower
    effect only offsets overlapping findings that do not add, as a defect inside a hard cohort's
    noise) is ``undetermined``: neither direction is honest alone."""
    verdict = cols[f"{name}_verdict"]
    div = np.asarray(cols[f"{name}_divergence"], dtype=float)
    flip = finding & np.isfinite(effect) & (effect != 0) & (np.sign(effect) != np.sign(div))
    at = np.flatnonzero(flip)  # the verdicts of these few read as text, not every slice's
    flip[at] = np.isin(verdict[at].astype(str), ("better", "above", "below", "defect", "hard cohort", "undetermined"))
    if not flip.any():
        return
    verdict = verdict.copy()
    error = f"{name}_worse_q" in cols
    up, down = flip & (effect > 0), flip & (effect < 0)
    if error:
        verdict[down] = "better"
        if within_difference is not None:
            inside_worse = down & (np.nan_to_num(np.asarray(within_difference, dtype=float)) > 0)
            verdict[inside_worse] = "undetermined"
        if up.any():
            q = {"harder": cols[f"{name}_harder_q"], "short": cols[f"{name}_lift_shortfall_q"],
                 "beaten": cols[f"{name}_worse_q"]}
            verdict[up] = error_verdicts({t: np.asarray(v, dtype=float)[up] for t, v in q.items()}, alpha, rows)
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
    p = np.asarray(p, dtype=float)[1:]
    p = p[np.isfinite(p)]
    if family <= p.size:
        return None
    if p.size == 0:
        return math.inf
    q = adjust_p(p, correction)
    passed = p[q <= alpha]
    return float(-normal_quantile(max(float(passed.max()), 1e-300) / 2.0)) if passed.size else math.inf

