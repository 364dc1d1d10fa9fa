"""A comparison's statistics of the change, typed: :class:`ChangeStatistics` (one metric's numbers
for every slice), how they are named in the table (:func:`change_column`), and the steps computing
what is not a test: the derived minimum size from δ on the per-row difference
(:func:`change_min_size`), the verdicts (:func:`change_verdicts`) and the distinct findings of the
change with the default order (:func:`change_findings`)."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DivergenceInputError
from ..stats.paired import paired_proportion_interval
from ..stats.stats import MIN_SIZE_POWER, corrected_level, interval_min_size, paired_min_size, smallest_enough, z_value
from ..table import MetricInfo, MinSize, SliceTable

__all__ = ["CompareMetric", "ChangeStatistics", "change_column", "TABLE_FIELDS", "DETAIL_FIELDS",
           "change_min_size", "change_verdicts", "change_findings", "DEFAULT_DELTA_RATE", "DEFAULT_DELTA_SD"]


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


#: a metric's columns in a comparison's table, in the table's order: the field of
#: :class:`ChangeStatistics` holding each, and its column's suffix after ``M_`` ('' is the metric itself)
TABLE_FIELDS = {"value": "", "reference": "reference", "change": "change", "change_ci_low": "change_ci_low",
                "change_ci_high": "change_ci_high", "change_p": "change_p", "change_q": "change_q",
                "meets_min_size": "meets_min_size", "verdict": "verdict", "finding": "finding",
                "explained_by": "explained_by", "order": "order"}
#: a metric's numbers beside the table (``Comparison.details``), in their order: the discordant counts
#: of a 0/1 outcome (``n10``: the model 1 and the reference 0) or the two tests' p-values of a real
#: one, then the rows where the metric is defined
DETAIL_FIELDS = ("n10", "n01", "p_t", "p_pooled", "count")


def change_column(metric: str, key: str) -> str:
    """The column (of the table, or of ``Comparison.details``) holding a metric's ``key``, a field of
    :class:`ChangeStatistics`: ``change_column("fpr", "change_q")`` is ``fpr_change_q``."""
    suffix = TABLE_FIELDS.get(key, key)
    return metric if suffix == "" else f"{metric}_{suffix}"


@dataclass(frozen=True)
class ChangeStatistics:
    """One metric of a comparison for every slice, typed (as :class:`divergence.table.MetricStatistics`
    for a scan): position i is the table's slice i, the whole dataset first. The model's value, the
    reference's on the same rows, the change and its interval, p and q, the minimum size, verdict,
    finding and default order; beside them the rows measured and the tests' details. The q-values
    onwards are None while :func:`divergence.compare` is still computing them."""

    metric: CompareMetric
    value: np.ndarray
    reference: np.ndarray
    change: np.ndarray
    change_ci_low: np.ndarray
    change_ci_high: np.ndarray
    change_p: np.ndarray
    #: rows where the metric is defined
    count: np.ndarray
    change_q: np.ndarray | None = None
    meets_min_size: np.ndarray | None = None
    verdict: np.ndarray | None = None
    finding: np.ndarray | None = None
    explained_by: np.ndarray | None = None
    order: np.ndarray | None = None
    n10: np.ndarray | None = None
    n01: np.ndarray | None = None
    p_t: np.ndarray | None = None
    p_pooled: np.ndarray | None = None
    min_size: MinSize | None = None

    @property
    def name(self) -> str:
        return self.metric.name

    def column(self, key: str) -> str:
        """The column holding ``key`` (:func:`change_column`)."""
        return change_column(self.name, key)

    def columns(self) -> dict[str, np.ndarray]:
        """The metric's columns of the comparison's table, in its order (those computed)."""
        return {change_column(self.name, k): getattr(self, k) for k in TABLE_FIELDS if getattr(self, k) is not None}

    def details(self) -> dict[str, np.ndarray]:
        """The metric's numbers beside the table (``Comparison.details``), in their order."""
        return {change_column(self.name, k): getattr(self, k) for k in DETAIL_FIELDS if getattr(self, k) is not None}

    @classmethod
    def of(cls, metric: CompareMetric, columns: Mapping[str, np.ndarray], details: Mapping[str, np.ndarray],
           min_size: MinSize | None = None) -> ChangeStatistics:
        """The statistics of ``metric`` read from a comparison's table ``columns`` and ``details``."""
        found = {k: source[change_column(metric.name, k)] for keys, source in ((TABLE_FIELDS, columns),
                                                                               (DETAIL_FIELDS, details))
                 for k in keys if change_column(metric.name, k) in source}
        return cls(metric=metric, min_size=min_size, **found)


def change_findings(mined: SliceTable, support: np.ndarray, changes: Sequence[ChangeStatistics], per_metric: Mapping,
                    alpha: float, correction: str, allp: np.ndarray, n_tested: int) -> list[ChangeStatistics]:
    """Distinct findings of the change (:mod:`divergence.stats.findings` on the per-row difference model
    minus reference): a slice worse (or better) only because it holds a worse (better) finding's
    rows is explained by it; a model worse everywhere alike has no finding. Each metric's statistics
    with its ``finding``, ``explained_by`` and ``order`` (the default order: slices of at least the minimum size
    first, then the distinct findings, the other significant slices and the rest, the change in the
    bad direction first, largest first)."""
    from ..stats.findings import default_order, distinct_findings, significant_slices

    level = corrected_level(allp, alpha, correction)
    n_items = len(mined)
    itemsets = mined.itemsets
    out = []
    for s in changes:
        m, info = s.name, s.metric
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
                                    columns={"support": support})
        if s.change_q is None:
            raise ValueError(f"The findings of {m}'s change need its q-values.")
        significant = significant_slices(s.change_q, s.change_ci_low, s.change_ci_high, alpha)
        if mined.lattice.distinct_codes is not None:
            found = distinct_findings(table, 0, significant, alpha, correction, level, n_tested,
                                      budget=(4.0, 200_000.0),
                                      first_bar=z_value(level))
            finding, by = found.finding, found.explained_by
        else:
            finding, by = np.zeros(n_items, dtype=bool), np.full(n_items, -1)
        explained = np.full(n_items, "", dtype=object)
        explained[by >= 0] = itemsets[by[by >= 0]]
        cols = {"support": support, s.column("meets_min_size"): s.meets_min_size, s.column("finding"): finding}
        out.append(dataclasses.replace(s, finding=finding, explained_by=explained,
                                       order=default_order(cols, m, significant, estimate=s.change)))
    return out


def change_min_size(info: CompareMetric, diffs: np.ndarray, reference_sd: float, delta, confidence: float, tests: int,
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


def change_verdicts(info: CompareMetric, change, low, high, q, meets, alpha: float, delta: float) -> np.ndarray:
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
