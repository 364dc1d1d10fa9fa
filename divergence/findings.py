"""Distinct findings and the one default order of a slice table.

Thousands of significant slices are often a handful of cohorts described many ways: a
refinement of a real cohort (its rows are the cohort's, so it diverges too), a wider slice that
holds the cohort's rows (spillover), a disjoint slice that only looks low because the cohort lifts
the whole dataset's value. A slice S is *explained by* a stronger finding F when, once the rows
the findings mark out are accounted for, S no longer diverges: the **residual test** compares S's
rows with the other rows *of the same stratum*, the strata being the patterns of membership in the
findings chosen so far (in no finding, in F only, in F and G, ...). With one finding F this is
S∖F against rest∖F (the spillover and the slice that looks low) combined with S∩F against F∖S
(a refinement of F no different from F); a stratum where S holds every row (S = F, S = F∩G) says
nothing, so a slice made of findings' rows is explained by them.

Selection is forward and greedy, strongest first: the first finding is the significant slice
whose test against the rest is strongest; then, again and again, the candidate whose residual test
given the findings chosen so far is strongest joins them if that test passes its bar, and the
procedure stops at the first candidate that fails. The j-th finding's bar (j ≥ 2) is Holm's
step-down over the scan's family of m tests, α/(m−j+2) (Bonferroni's α/m when the scan uses
Bonferroni), whatever the scan's own correction: the chance that any finding after the first is
false, given the real ones, is then at most α (Benjamini–Hochberg's constants αj/m would let a
second, false finding through in up to 2α of the scans of a world with one real cohort). The family
is the scan's, not the candidates', because the candidates were chosen by the same data (a slice
significant by luck has a residual test about as strong as its own), and any slice of the family
could have been a follow-up test.
A candidate left over is *explained by* the finding whose arrival weakened its residual test the
most when that test no longer passes the scan's own bar (the corrected level its own test passed);
one whose residual test still passes it, without passing the follow-up bar, is significant but not
shown to be a different cohort: neither a finding nor explained.

The residual tests: 0/1 outcomes, the Cochran–Mantel–Haenszel statistic (the stratified form of
the hypergeometric test behind Fisher's, with its continuity correction); real outcomes, the
stratified difference of means with weights n₁n₀/(n₁+n₀) and, in each stratum, the slice's
variance taken as at least the rest's (the skew guard's choice, made on both sides). Tallies per
slice and stratum are sums over the distinct rows, one walk of the lattice per finding restricted
to that finding's rows, so nothing is approximated and the cost is a fraction of a mining pass.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .lattice import walk_order, walk_tallies
from .stats import fisher_exact_p, normal_quantile
from .tallies import metric_columns

__all__ = ["Findings", "distinct_findings", "significant_slices", "default_order", "WORSE_WHEN",
           "worse_sign", "honest_estimate", "MAX_STRATA"]

#: the direction in which a metric is worse (up: error rates and errors; down: rates of success
#: and a ranking's gain); metrics not listed have no worse direction (an outcome column)
WORSE_WHEN = {"fpr": "up", "fnr": "up", "error": "up", "fdr": "up", "for": "up", "brier": "up",
              "abs_error": "up", "squared_error": "up", "tpr": "down", "tnr": "down", "accuracy": "down",
              "precision": "down", "npv": "down", "gamma": "down"}
#: most strata (membership patterns of the findings) followed; past it no finding is added
MAX_STRATA = 4096
#: candidates, strongest by the stratified statistic, whose test is made exact at each step
EXACT_TOP = 64


def worse_sign(metric: str) -> int:
    """+1 when up is worse for the metric, -1 when down is, 0 when neither is."""
    return {"up": 1, "down": -1}.get(WORSE_WHEN.get(metric, ""), 0)


@dataclass(frozen=True)
class Findings:
    """A metric's distinct findings: ``finding[i]`` for a distinct finding, ``explained_by[i]``
    the row of the finding that accounts for slice i (-1: none), ``candidates`` the significant
    slices considered and ``rank`` the findings in the order they were chosen."""

    finding: np.ndarray
    explained_by: np.ndarray
    candidates: np.ndarray
    rank: np.ndarray


def significant_slices(q: np.ndarray, adj_low: np.ndarray, adj_high: np.ndarray, alpha: float) -> np.ndarray:
    """The slices significant after correction: q at most alpha and the corrected divergence
    interval excluding 0 (the whole dataset, row 0, never)."""
    with np.errstate(invalid="ignore"):
        sig = np.isfinite(q) & (q <= alpha) & ((adj_low > 0) | (adj_high < 0))
    if sig.size:
        sig[0] = False
    return sig


def distinct_findings(table, k: int, significant: np.ndarray, alpha: float, correction: str,
                      scan_level: float, family_size: int) -> Findings:
    """Metric ``k``'s distinct findings among the ``significant`` slices (see the module's text).

    ``scan_level``: the confidence level of the scan's corrected intervals (the bar a slice's own
    test passed); ``family_size``: the tests the scan's correction counts, the size of the family
    of follow-up tests too (any slice of it could have been one)."""
    n_items = len(table)
    binary = table.metrics[k].binary
    finding = np.zeros(n_items, dtype=bool)
    explained = np.full(n_items, -1, dtype=np.int64)
    cand = np.nonzero(significant)[0]
    if cand.size == 0:
        return Findings(finding, explained, cand, np.zeros(0, dtype=np.int64))
    cols = list(metric_columns(k))
    tal = np.asarray(table.tallies, dtype=float)
    strata = _Strata(tal[cand][:, cols], tal[0, cols], binary)  # one stratum to start: every row
    z_own = strata.z()
    prefer = worse_sign(table.metrics[k].name) or 1
    support = np.asarray(table.columns["support"], dtype=float)[cand]
    top = np.argsort(-np.abs(z_own), kind="stable")[:EXACT_TOP]
    chosen = [_strongest(top, strata.exact_z(top, z_own), prefer, support)]
    rows = _Rows(table, cand, k) if table.distinct_codes is not None else None
    z_before = z_own
    best_drop = np.full(cand.size, -np.inf)
    attributed = np.full(cand.size, -1, dtype=np.int64)
    alive = np.ones(cand.size, dtype=bool)
    alive[chosen[0]] = False
    m_follow = max(int(family_size), 1)
    while rows is not None and alive.any():
        newest = chosen[-1]
        if not rows.add(strata, int(cand[newest])):
            break  # too many strata: the candidates left are attributed as they stand
        z = strata.z()
        drop = np.abs(z_before) - np.abs(z)
        better = alive & (drop > best_drop)
        best_drop[better], attributed[better] = drop[better], newest
        z_before = z
        j = len(chosen) + 1  # the next finding would be the j-th
        bar = alpha / m_follow if correction == "bonferroni" else alpha / max(m_follow - j + 2, 1)
        left = np.nonzero(alive)[0]
        # the strongest by the exact test among the strongest by the stratified statistic
        top = left[np.argsort(-np.abs(z[left]), kind="stable")[:EXACT_TOP]]
        exact = strata.exact_z(top, z)
        best = _strongest(top, exact, prefer, support)
        if np.abs(exact).max() < _z_two_sided(bar):
            break
        chosen.append(int(best))
        alive[best] = False
    for c in chosen:
        finding[cand[c]] = True
    # a candidate left over is explained by a finding when, with the findings' rows accounted
    # for, it no longer passes the scan's own bar and a finding's arrival weakened it; one that
    # still passes it is significant but not shown distinct: it is neither
    z_scan = _z_two_sided(1.0 - scan_level)
    rest = alive & (np.abs(z_before) < z_scan) & (best_drop > 0) & (attributed >= 0)
    explained[cand[rest]] = cand[attributed[rest]]
    rank = cand[chosen].astype(np.int64)
    return Findings(finding, explained, cand, rank)


def _strongest(at: np.ndarray, z: np.ndarray, prefer: int, support: np.ndarray) -> int:
    """The candidate of ``at`` with the largest |z|; among those as strong (a slice and its
    complement on a two-valued attribute test alike), the one on the metric's worse side (above
    for a metric with no worse direction), then the smaller."""
    strength = np.abs(z)
    near = strength >= strength.max() * (1.0 - 1e-9)
    keys = (support[at], -(np.sign(z) * prefer), ~near)
    return int(at[np.lexsort(keys)[0]])


def _z_two_sided(p: float) -> float:
    """|Z| at which a two-sided normal test has p-value ``p``."""
    p = min(max(float(p), 1e-300), 1.0)
    return float(-normal_quantile(p / 2.0))


class _Strata:
    """The strata (patterns of membership in the findings) and, per stratum, the candidates with
    rows in it and their tallies there (defined count, shifted sum, sum of squares). The residual
    test's numerator and variance are sums over strata, kept per candidate and updated where a
    stratum splits."""

    def __init__(self, per_slice: np.ndarray, total: np.ndarray, binary: bool) -> None:
        self.binary = binary
        r = per_slice.shape[0]
        self.members = [np.arange(r)]
        self.tallies = [per_slice.astype(float)]
        self.totals = [np.asarray(total, dtype=float)]
        self.num = np.zeros(r)
        self.var = np.zeros(r)
        # 0/1 outcomes: the count of strata that inform each candidate's test and the sums of their
        # events, rows, stratum events and stratum rows (one stratum's own when the count is 1)
        self.single = np.zeros((r, 5))
        self._add(0, +1.0)

    def __len__(self) -> int:
        return len(self.totals)

    def _add(self, h: int, sign: float) -> None:
        num, var = _contribution(self.tallies[h], self.totals[h], self.binary)
        np.add.at(self.num, self.members[h], sign * num)
        np.add.at(self.var, self.members[h], sign * var)
        if self.binary:
            t, total = self.tallies[h], self.totals[h]
            inform = (t[:, 0] > 0.5) & (total[0] - t[:, 0] > 0.5)
            cells = np.column_stack([inform, inform * np.rint(t[:, 1]), inform * t[:, 0],
                                     inform * round(total[1]), inform * total[0]]).astype(float)
            np.add.at(self.single, self.members[h], sign * cells)

    def split(self, h: int, members: np.ndarray, part: np.ndarray, total: np.ndarray) -> None:
        """Move ``part`` (the tallies of ``members``, candidates' positions, sorted) and ``total``
        out of stratum ``h`` into a new stratum."""
        self._add(h, -1.0)
        at = np.searchsorted(self.members[h], members)
        self.tallies[h][at] -= part
        self.totals[h] = self.totals[h] - total
        still = self.tallies[h][:, 0] > 0.5  # sums taken apart leave rounding dust
        self.members[h], self.tallies[h] = self.members[h][still], self.tallies[h][still]
        self._add(h, +1.0)
        self.members.append(members)
        self.tallies.append(part)
        self.totals.append(np.asarray(total, dtype=float))
        self._add(len(self.totals) - 1, +1.0)

    def z(self) -> np.ndarray:
        """Each candidate's stratified statistic (signed: above or below the other rows of its
        strata), 0 where no stratum holds both its rows and others."""
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.maximum(self.var, 0.0)
            den = np.sqrt(var)
            num = self.num
            if self.binary:  # the continuity correction, on the sum over strata
                num = np.sign(num) * np.maximum(np.abs(num) - 0.5, 0.0)
            return np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1.0), 0.0)

    def exact_z(self, at: np.ndarray, z: np.ndarray) -> np.ndarray:
        """:meth:`z` of the candidates ``at``, with Fisher's exact test where a single stratum
        informs a 0/1 candidate's test (the normal approximation overstates the upper tail of a
        small slice with few events), as a signed normal deviate."""
        out = np.asarray(z[at], dtype=float).copy()
        if not self.binary:
            return out
        for j, c in enumerate(at):
            count, ones, n1, m, big_n = (float(x) for x in self.single[c])
            if round(count) == 1 and n1 < big_n:
                p = float(fisher_exact_p(np.array([ones]), np.array([n1]), m, big_n)[0])
                out[j] = np.sign(out[j]) * _z_two_sided(p) if np.isfinite(p) else 0.0
        return out


def _contribution(tallies: np.ndarray, total: np.ndarray, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """One stratum's terms of the residual test for the candidates with rows in it: 0/1 outcome,
    observed minus expected events and the hypergeometric variance (Cochran–Mantel–Haenszel);
    real outcome, w·(mean₁ − mean₀) and w²·(var₁/n₁ + var₀/n₀), w = n₁n₀/(n₁+n₀), var₁ at least
    var₀."""
    n1, s1, q1 = tallies[:, 0], tallies[:, 1], tallies[:, 2]
    big_n, big_s, big_q = float(total[0]), float(total[1]), float(total[2])
    n0 = big_n - n1
    ok = (n1 > 0.5) & (n0 > 0.5)
    with np.errstate(invalid="ignore", divide="ignore"):
        if binary:
            m = round(big_s)
            expected = n1 * m / big_n
            var = n1 * n0 * m * (big_n - m) / (big_n * big_n * max(big_n - 1.0, 1.0))
            return np.where(ok, np.rint(s1) - expected, 0.0), np.where(ok, var, 0.0)
        s0, q0 = big_s - s1, big_q - q1
        safe0 = np.where(n0 > 0.5, n0, 1.0)
        safe1 = np.where(n1 > 0.5, n1, 1.0)
        mean1, mean0 = s1 / safe1, s0 / safe0
        var0 = np.maximum(q0 - s0 * mean0, 0.0) / np.maximum(n0 - 1.0, 1.0)
        var1 = np.where(n1 > 1.5, np.maximum(q1 - s1 * mean1, 0.0) / np.maximum(n1 - 1.0, 1.0), 0.0)
        var1 = np.fmax(var1, var0)
        w = n1 * n0 / np.where(ok, n1 + n0, 1.0)
        return (np.where(ok, w * (mean1 - mean0), 0.0),
                np.where(ok, w * w * (var1 / safe1 + var0 / safe0), 0.0))


class _Rows:
    """The distinct rows of a table, their stratum, and the walk that tallies the candidates'
    rows within a finding's rows."""

    def __init__(self, table, cand: np.ndarray, k: int) -> None:
        self.codes = np.asarray(table.distinct_codes)
        self.w = np.asarray(table.distinct_tallies, dtype=float)[:, list(metric_columns(k))]
        self.label = np.zeros(self.codes.shape[0], dtype=np.int64)
        self.slice_codes = table.codes
        needed = _with_ancestors(table.parent, cand)
        self.position = np.searchsorted(needed, cand)
        remap = np.full(len(table), -1, dtype=np.int64)
        remap[needed] = np.arange(needed.size)
        parent = np.where(table.parent[needed] >= 0, remap[np.maximum(table.parent[needed], 0)], -1)
        self.walk = walk_order(parent, table.codes[needed])

    def add(self, strata: _Strata, finding: int) -> bool:
        """Split every stratum by membership in the slice ``finding``; False when the strata would
        pass :data:`MAX_STRATA` (nothing changed)."""
        f = self.slice_codes[finding]
        inside = np.ones(self.codes.shape[0], dtype=bool)
        for a in np.nonzero(f >= 0)[0]:
            inside &= self.codes[:, a] == f[a]
        old = np.unique(self.label[inside])
        h = len(strata)
        if h + old.size > MAX_STRATA:
            return False
        pos = np.searchsorted(old, self.label[inside])
        # per distinct row of the finding, its tallies in the column block of its old stratum
        weights = np.zeros((int(inside.sum()), 3 * old.size))
        rows = np.arange(weights.shape[0])
        for c in range(3):
            weights[rows, 3 * pos + c] = self.w[inside, c]
        part = walk_tallies(self.walk, np.asfortranarray(self.codes[inside], dtype=np.int32), weights)
        part = part[self.position]
        total = np.zeros((old.size, 3))
        np.add.at(total, pos, self.w[inside])
        for j, o in enumerate(old):
            block = part[:, 3 * j:3 * j + 3]
            members = np.nonzero(block[:, 0] > 0.5)[0]
            strata.split(int(o), members, block[members], total[j])
        self.label[inside] = h + pos
        return True


def _with_ancestors(parent: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows`` and every itemset on their paths to the whole dataset (row 0), sorted."""
    keep = np.zeros(parent.size, dtype=bool)
    keep[0] = True
    frontier = np.asarray(rows, dtype=np.int64)
    while frontier.size:
        frontier = frontier[~keep[frontier]]
        keep[frontier] = True
        frontier = parent[frontier]
        frontier = frontier[frontier >= 0]
    return np.nonzero(keep)[0]


def honest_estimate(columns: dict, metric: str) -> np.ndarray:
    """The estimate the default order reads: the replicated divergence where replication data
    measured the slice, else the shrunk divergence, else the divergence."""
    est = np.asarray(columns.get(f"{metric}_divergence_shrunk", columns[f"{metric}_divergence"]), dtype=float)
    rep = columns.get(f"{metric}_replicated_divergence")
    if rep is not None:
        rep = np.asarray(rep, dtype=float)
        est = np.where(np.isfinite(rep), rep, est)
    return est


def default_order(columns: dict, metric: str, significant: np.ndarray) -> np.ndarray:
    """Each slice's position in the default order (the whole dataset 0, then 1, 2, ...).

    Slices that meet the minimum size come before those that do not; within each, distinct
    findings first, then the other significant slices, then the rest; within each group the
    side where the metric is worse first (both sides alike for a metric with no worse direction),
    then the largest honest estimate (:func:`honest_estimate`) in size, then the larger support."""
    n_items = len(columns["support"])
    est = honest_estimate(columns, metric)
    sign = worse_sign(metric)
    meets = np.asarray(columns.get(f"{metric}_meets_min_size", np.ones(n_items, dtype=bool)), dtype=bool)
    finding = np.asarray(columns.get(f"{metric}_finding", np.zeros(n_items, dtype=bool)), dtype=bool)
    group = np.where(finding, 0, np.where(significant, 1, 2))
    side = np.where((sign * est < 0), 1, 0) if sign else np.zeros(n_items, dtype=np.int64)
    size = np.where(np.isfinite(est), -np.abs(est), np.inf)
    support = -np.asarray(columns["support"], dtype=float)
    keys = (np.arange(n_items), support, size, side, group, ~meets)
    order = np.lexsort(keys)  # the last key is the first criterion
    order = order[order != 0]
    position = np.zeros(n_items, dtype=np.int64)
    position[order] = np.arange(1, n_items)
    return position
