"""Distinct findings and the one default order of a slice table.

Thousands of significant slices are often a handful of cohorts described many ways: a refinement
of a real cohort (its rows are the cohort's, so it diverges too), a wider slice that holds the
cohort's rows (spillover), a near copy of it on a correlated attribute, a disjoint slice that only
looks low because the cohort lifts the whole dataset's value. The distinct findings are the terms
of one fitted model of the per-row outcome over the distinct rows: an intercept plus an indicator
of each chosen slice (binomial for a 0/1 outcome, Gaussian on the metric's scale for a mean;
:mod:`divergence.stats.findings_model`), its terms chosen by likelihood with forward, backward and
exchange steps (:mod:`divergence.stats.findings_search`). The j-th finding's test given the others
passes Holm's step over the scan's family of m tests, α/(m − j + 2) (the first finding: the
metric's own significance bar); no margin and no special rule for the first finding.

Each finding's effect is the model's, given the other findings, with its interval (``effect``),
read beside its divergence from the whole dataset; the names the data do not tell it from are its
ties (``ties``: a candidate whose model with the other findings is within 1.92 of the chosen
model's log-likelihood, best first). A candidate left is *explained by* the finding without which
its test given the findings is strongest, when given all of them it no longer passes the scan's
own bar; one that still passes it without passing the next finding's bar is significant but not
shown to be a different cohort: neither a finding nor explained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..outcome_rules import WORSE_WHEN
from ..prepare.tallies import metric_columns, metric_tallies
from .findings_model import MAX_CELLS, Cells, Rows, scores, small_counts, z_two_sided
from .findings_model import distinct_rows as _distinct_rows  # noqa: F401  (kept for its tests)
from .findings_search import describe, explain, own_gain, search
from .stats import mean_difference_test, rate_difference_interval, slice_means

__all__ = ["Findings", "distinct_findings", "enclosing_findings", "within_difference", "significant_slices", "default_order",
           "worse_sign", "honest_estimate", "MAX_CELLS"]


#: the candidates the search works in on a large table: at first the strongest on their own; after
#: each round, the terms, their neighbours and those that could still be a finding given the terms,
#: with the POOL_MORE strongest of those left out that could (the search goes on until none is left
#: out, POOL_ROUNDS rounds at most: past them the findings say they were cut)
POOL = 1500
POOL_MORE = 300
POOL_ROUNDS = 10


def worse_sign(metric: str) -> int:
    """+1 when up is worse for the metric, -1 when down is, 0 when neither is."""
    return {"up": 1, "down": -1}.get(WORSE_WHEN.get(metric, ""), 0)


@dataclass(frozen=True)
class Findings:
    """A metric's distinct findings: ``finding[i]`` for a distinct finding, ``explained_by[i]``
    the row of the finding that accounts for slice i (-1: none), ``candidates`` the significant
    slices considered and ``rank`` the findings, the one the model needs most first."""

    finding: np.ndarray
    explained_by: np.ndarray
    candidates: np.ndarray
    rank: np.ndarray
    #: why the search stopped with candidates left that could still have been findings ('' when
    #: it did not: :data:`MAX_CELLS`, or its work)
    cut: str = ""
    #: for a finding, the row of the best name tied with it (-1: none): see ``ties``
    alias: np.ndarray | None = None
    #: for a finding (its row), the rows of every name tied with it, best first: the model with that
    #: slice in the finding's place is within 1.92 of the chosen model's log-likelihood
    ties: dict | None = None
    #: per slice, a finding's effect in the model given the other findings and its interval at the
    #: confidence level (a rate difference for a 0/1 outcome, a difference of means for a real one);
    #: NaN for the other slices
    effect: np.ndarray | None = None
    effect_low: np.ndarray | None = None
    effect_high: np.ndarray | None = None


def significant_slices(q: np.ndarray, adj_low: np.ndarray, adj_high: np.ndarray, alpha: float) -> np.ndarray:
    """The slices significant after correction: q at most alpha and the corrected divergence
    interval excluding 0 (the whole dataset, row 0, never)."""
    with np.errstate(invalid="ignore"):
        sig = np.isfinite(q) & (q <= alpha) & ((adj_low > 0) | (adj_high < 0))
    if sig.size:
        sig[0] = False
    return sig


def distinct_findings(table, k: int, significant: np.ndarray, alpha: float, correction: str,
                      scan_level: float, family_size: int, budget: tuple[float, float] | None = None,
                      first_bar: float | None = None) -> Findings:
    """Metric ``k``'s distinct findings (:func:`_distinct_findings`), with one BLAS thread: its
    products are small and many, and threads that fight over the cores make them several times slower."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        return _distinct_findings(table, k, significant, alpha, correction, scan_level, family_size, budget,
                                  first_bar)


def _distinct_findings(table, k: int, significant: np.ndarray, alpha: float, correction: str,
                       scan_level: float, family_size: int, budget: tuple[float, float] | None = None,
                       first_bar: float | None = None) -> Findings:
    """Metric ``k``'s distinct findings among the ``significant`` slices (see the module's text).

    ``scan_level``: the confidence level of the scan's corrected intervals (the bar a slice's own
    test passed); ``family_size``: the tests the scan's correction counts, the size of the family
    of follow-up tests too (any slice of it could have been one); ``budget``: (work per slice and
    distinct row, least work): the work the search may do, in itemsets walked, distinct rows read
    and entries written (deterministic: the same table gives the same findings on any machine);
    past it no finding is added (said in ``cut``); ``first_bar``: a |Z| the first finding's test
    must reach (a comparison's candidates are significant against no change, not against the rest:
    a model worse everywhere alike has no finding; a metric's own bar in a family of several)."""
    n_items = len(table)
    binary = table.metrics[k].binary
    finding = np.zeros(n_items, dtype=bool)
    explained = np.full(n_items, -1, dtype=np.int64)
    nan = np.full(n_items, np.nan)
    cand = np.nonzero(significant)[0]
    empty = Findings(finding, explained, cand, np.zeros(0, dtype=np.int64), "", np.full(n_items, -1, np.int64), {},
                     nan, nan.copy(), nan.copy())
    if cand.size == 0 or table.lattice.distinct_codes is None:
        return empty
    cols = list(metric_columns(k))
    tal = np.asarray(table.tallies, dtype=float)
    everyone = Rows(table, cand, k)
    m_follow = max(int(family_size), 1)

    def bar(j: int) -> float:  # the j-th finding's bar, as |Z|
        if j <= 1:
            return float(first_bar) if first_bar is not None else 0.0
        return z_two_sided(alpha / m_follow if correction == "bonferroni" else alpha / max(m_follow - j + 2, 1))

    key = _itemset_order(np.asarray(table.codes)[cand])
    limit = None if budget is None else max(float(budget[1]), float(budget[0]) * (n_items + everyone.n))
    prefer = worse_sign(table.metrics[k].name) or 1
    own_all = (np.arange(cand.size, dtype=np.int64), np.zeros(cand.size, dtype=np.int64),
               np.ascontiguousarray(tal[cand][:, cols]))
    one = Cells(everyone, [], binary)
    z_own = _own_scores(one, own_all, cand.size)
    pool = np.sort(_strongest(np.abs(z_own), POOL)) if cand.size > POOL else np.arange(cand.size)
    terms: list = []
    beta = None
    cut = ""
    for round_ in range(POOL_ROUNDS):
        rows = everyone.restricted(cand[pool])
        rows.work = everyone.work
        local = {int(x): j for j, x in enumerate(pool)}
        own = (own_all[0][:pool.size], own_all[1][:pool.size], own_all[2][pool])
        state, cut = search(rows, binary, pool.size, own, bar, prefer, key[pool], limit,
                            start=[local[x] for x in terms], start_beta=beta)
        everyone.work = rows.work
        terms = [int(pool[x]) for x in state.terms]
        beta = state.cells.fit.beta
        cells = state.cells  # the same distinct rows: the pool's model is everyone's
        z_all, by = _given_terms(everyone, cells, z_own, bar(len(terms) + 1), z_two_sided(1.0 - scan_level))
        out = np.ones(cand.size, dtype=bool)
        out[pool] = False
        passing = np.abs(z_all) >= bar(len(terms) + 1)
        more = np.nonzero(out & passing)[0]
        if more.size == 0 or cut:
            break
        if round_ == POOL_ROUNDS - 1:
            cut = f"{POOL_ROUNDS} rounds ran out with {more.size:,} candidates not yet tried"
            break
        pool = _next_pool(state, pool, terms, passing, more, z_all)
    ties, effects = describe(state, key[pool], 1.0 - alpha)
    finding[cand[terms]] = True
    by[terms] = -1
    explained[cand[by >= 0]] = cand[np.asarray(terms, dtype=np.int64)[by[by >= 0]]] if terms else explained[cand[by >= 0]]
    gain = [own_gain(state, i) for i in range(len(terms))]
    rank = cand[np.asarray(terms, dtype=np.int64)[np.argsort(-np.asarray(gain), kind="stable")]] if terms \
        else np.zeros(0, dtype=np.int64)
    alias = np.full(n_items, -1, dtype=np.int64)
    tied = {}
    effect, low, high = nan.copy(), nan.copy(), nan.copy()
    for x, f in zip(state.terms, terms):
        names = [int(cand[pool[y]]) for y in ties.get(x, [])]
        tied[int(cand[f])] = names
        if names:
            alias[cand[f]] = names[0]
        effect[cand[f]], low[cand[f]], high[cand[f]] = effects[x]
    return Findings(finding, explained, cand, rank.astype(np.int64), cut, alias, tied, effect, low, high)


def _itemset_order(codes: np.ndarray) -> np.ndarray:
    """Each itemset's place in the itemsets' own order: fewer items first, then by their codes
    attribute by attribute (an absent attribute first). One integer key per itemset (mixed radix)
    sorted where the codes fit 62 bits, else numpy's lexsort of the same keys: the same order."""
    key = np.empty(codes.shape[0], dtype=np.int64)
    length = (codes >= 0).sum(axis=1)
    radix = codes.max(axis=0, initial=-1).astype(np.int64) + 2 if codes.size else np.zeros(0, dtype=np.int64)
    if codes.shape[0] and float(np.log2(radix.astype(float)).sum() + np.log2(codes.shape[1] + 1.0)) < 62.0:
        whole = length.astype(np.int64)
        for a in range(codes.shape[1]):
            whole = whole * radix[a] + (codes[:, a].astype(np.int64) + 1)
        order = np.argsort(whole, kind="stable")
    else:
        order = np.lexsort(tuple(codes.T[::-1]) + (length,))
    key[order] = np.arange(codes.shape[0])
    return key


#: entries read at once when every candidate is tested given the terms (:func:`_given_terms`)
GIVEN_BLOCK = 25_000


def _given_terms(everyone: Rows, cells: Cells, z_own: np.ndarray, bar_next: float, z_scan: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate's z given the terms (``cells``' model) and the term that explains it
    (:func:`explain`), from one walk of every candidate read :data:`GIVEN_BLOCK` entries at a time:
    each candidate's test reads its own entries only, so the blocks give the same bits as the whole
    walk at once, while the entries held at once are a block's (every candidate's were the search's
    largest holding: 29 MiB on Adult). The z is read against the next finding's bar and the scan's
    own: below both, only its sign."""
    n_cand = z_own.size
    z_all = np.zeros(n_cand)
    by = np.full(n_cand, -1, dtype=np.int64)
    entries = 0
    every = np.arange(len(cells))
    floor = min(bar_next, z_scan)
    # a 0/1 outcome's small candidates are checked once after every block (one pass of the binomial
    # tests, not one per block), from their rows, events and expected events kept here
    counts = np.zeros((n_cand, 3)) if cells.binary else None
    for c, lab, t in everyone.entry_blocks(cells.label, len(cells), GIVEN_BLOCK):
        if not c.size:
            continue
        # the block's candidates, numbered from 0 in their order (each one's entries are together)
        first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        at = c[first]
        local = np.repeat(np.arange(first.size), np.diff(np.r_[first, c.size]))
        # a 0/1 outcome's score sums give each candidate's rows in each term (explain's) in their pass
        rows = np.zeros((at.size, cells.k + 1)) if cells.binary and cells.k else None
        got = np.zeros((at.size, 3)) if counts is not None else None
        z_all[at] = scores(cells, every, local, lab, t, at.size, floor=np.inf if counts is not None else floor,
                           rows=rows, counts=got).z
        if counts is not None:
            counts[at] = got
        by[at] = explain(cells, local, lab, t, z_own[at], rows)
        entries += int(c.size)
    if counts is not None:
        z_all = small_counts(z_all, np.abs(z_all) >= floor, counts[:, 0], counts[:, 1], counts[:, 2])
    by[np.abs(z_all) >= z_scan] = -1  # still passes the scan's bar given every term: not explained
    everyone.work += everyone.walk_work(entries) + entries * (cells.k + 1)
    return z_all, by


def _strongest(a: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` of ``np.argsort(-a, kind="stable")`` (the k largest, largest first, ties to
    the smaller index), by a partition: the whole sort of 60,000 candidates for the 1,500 of a pool
    cost a few milliseconds a metric."""
    n = a.size
    if k >= n or np.isnan(a).any():
        return np.argsort(-a, kind="stable")[:k]
    v = np.partition(a, n - k)[n - k]  # the k-th largest
    above = np.flatnonzero(a > v)
    take = np.concatenate([above, np.flatnonzero(a == v)[:k - above.size]])
    take.sort()
    return take[np.argsort(-a[take], kind="stable")]


def _own_scores(one: Cells, own_all: tuple, n_cand: int) -> np.ndarray:
    """Each candidate's z on its own (the model of no term), read in full where it decides: the
    pool takes the :data:`POOL` largest |z|, and elsewhere only the sign is read. The binomial
    check of a small candidate only lowers |z|, so it is spent on the strongest until the pool's
    last is above every unchecked |z| (the same pool as checking all; with no term the candidates'
    tests are apart)."""
    zero = np.zeros(1, dtype=np.int64)
    z = scores(one, zero, own_all[0], own_all[1], own_all[2], n_cand, floor=np.inf).z
    if n_cand <= POOL:
        return z
    absz = np.abs(z)
    order = _strongest(absz, 2 * POOL + 1)  # the first block and the one after it
    done = 0
    while done < n_cand:
        upto = min(n_cand, max(2 * POOL, 2 * done))
        if order.size < min(n_cand, upto + 1):
            order = np.argsort(-absz, kind="stable")
        at = order[done:upto]
        z[at] = scores(one, zero, np.arange(at.size, dtype=np.int64), own_all[1][at], own_all[2][at], at.size).z
        done = upto
        last = np.partition(np.abs(z[order[:done]]), done - POOL)[done - POOL]
        if done < n_cand and last > abs(z[order[done]]):
            break
    return z


def _next_pool(state, pool: np.ndarray, terms: list, passing: np.ndarray, more: np.ndarray, z_all: np.ndarray
               ) -> np.ndarray:
    """The candidates the next round works in: the terms, their neighbours (the names an exchange or
    a tie looks at), those that could still be a finding given the terms, and the :data:`POOL_MORE`
    strongest of the candidates left out that could (the rest cannot change the next round's
    steps, and each round's cost grows with its candidates)."""
    keep = np.zeros(z_all.size, dtype=bool)
    keep[terms] = True
    if state.terms:
        keep[pool[state.neighbours().any(axis=1)]] = True
    keep[pool[passing[pool]]] = True
    keep[more[np.argsort(-np.abs(z_all[more]), kind="stable")[:POOL_MORE]]] = True
    return np.flatnonzero(keep)


def honest_estimate(columns: dict, metric: str) -> np.ndarray:
    """The estimate the default order reads: the replicated divergence where replication data
    measured the slice, else the shrunk divergence, else the divergence."""
    est = np.asarray(columns.get(f"{metric}_divergence_shrunk", columns[f"{metric}_divergence"]), dtype=float)
    rep = columns.get(f"{metric}_replicated_divergence")
    if rep is not None:
        rep = np.asarray(rep, dtype=float)
        est = np.where(np.isfinite(rep), rep, est)
    return est


def default_order(columns: dict, metric: str, significant: np.ndarray, estimate: np.ndarray | None = None
                  ) -> np.ndarray:
    """Each slice's position in the default order (the whole dataset 0, then 1, 2, ...).

    Distinct findings first, then the other significant slices, then the rest; within each group
    the slices that meet the minimum size before those that do not (n_min is the size at which a
    divergence of only δ is seen at 80% power: a distinct finding below it diverges by far more
    and leads the slices it explains, while a slice that is neither significant nor big enough
    comes last); then the side where the metric is worse first (both sides alike for a metric
    with no worse direction), then the largest honest estimate (:func:`honest_estimate`, or
    ``estimate``) in size, then the larger support."""
    n_items = len(columns["support"])
    est = honest_estimate(columns, metric) if estimate is None else np.asarray(estimate, dtype=float)
    sign = worse_sign(metric)
    meets = np.asarray(columns.get(f"{metric}_meets_min_size", np.ones(n_items, dtype=bool)), dtype=bool)
    finding = np.asarray(columns.get(f"{metric}_finding", np.zeros(n_items, dtype=bool)), dtype=bool)
    group = np.where(finding, 0, np.where(significant, 1, 2))
    side = np.where((sign * est < 0), 1, 0) if sign else np.zeros(n_items, dtype=np.int64)
    size = np.where(np.isfinite(est), -np.abs(est), np.inf)
    support = -np.asarray(columns["support"], dtype=float)
    # group, minimum size and side in one small key; lexsort is stable, so ties keep the table's order
    first = group * 4 + (~meets) * 2 + side
    order = np.lexsort((support, size, first))  # the last key is the first criterion
    order = order[order != 0]
    position = np.zeros(n_items, dtype=np.int64)
    position[order] = np.arange(1, n_items)
    return position


def enclosing_findings(table, k: int, finding: np.ndarray) -> np.ndarray:
    """Per slice: the tightest other finding of metric ``k`` that holds every row it is measured on
    (its index; -1 for none, and for every slice not a finding). Such a finding is distinct only
    because it differs from the rest of the one holding it (issue 30): a meeting reads it against
    that, not against the whole dataset. Rows, not items, decide: a slice typed otherwise can still
    lie wholly inside another (a column that determines another)."""
    finding = np.asarray(finding, dtype=bool)
    idx = np.nonzero(finding)[0]
    out = np.full(len(finding), -1, dtype=np.int64)
    if idx.size < 2 or table.lattice.distinct_codes is None:
        return out
    codes = np.asarray(table.lattice.distinct_codes)
    measured = np.asarray(table.lattice.distinct_tallies, dtype=float)[:, metric_columns(k)[0]] > 0
    codes = codes[measured]
    n = metric_tallies(table.tallies, k)[0]
    bits = {}
    for i in idx:
        c = np.asarray(table.codes[i])
        items = np.nonzero(c >= 0)[0]
        inside = np.all(codes[:, items] == c[items], axis=1) if items.size else np.ones(codes.shape[0], bool)
        bits[int(i)] = np.packbits(inside)
    for i in idx:
        best = -1
        for j in idx:
            if j == i or n[j] <= n[i] or (best >= 0 and n[j] >= n[best]):
                continue
            if not np.any(bits[int(i)] & ~bits[int(j)]):  # no row of i outside j
                best = int(j)
        out[i] = best
    return out


def within_difference(table, k: int, within: np.ndarray, level: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per slice inside another finding (``within[i] >= 0``): the rest of that finding's value, the
    slice's value minus it, and that difference's interval at ``level`` (Newcombe's for a rate,
    Welch's for a mean, the skew guard on both sides); NaN elsewhere. The rest is the enclosing
    finding's rows outside the slice (its tallies minus the slice's: the slice's rows are all in it)."""
    m = table.metrics[k]
    n, s, q = metric_tallies(table.tallies, k)
    rows = np.nonzero(np.asarray(within) >= 0)[0]
    rest_value = np.full(len(n), np.nan)
    diff, low, high = rest_value.copy(), rest_value.copy(), rest_value.copy()
    if rows.size == 0:
        return rest_value, diff, low, high
    j = np.asarray(within)[rows]
    n1, s1, q1 = n[rows], s[rows], q[rows]
    n0, s0, q0 = n[j] - n1, s[j] - s1, q[j] - q1
    mean1, mean0 = slice_means(n1, s1, m.shift), slice_means(n0, s0, m.shift)
    rest_value[rows] = mean0
    diff[rows] = mean1 - mean0
    if m.binary:
        lo, hi = rate_difference_interval(np.rint(s1), n1, np.rint(s0), n0, level)
    else:
        lo, hi = mean_difference_test(n1, s1, q1, n0, s0, q0, np.nan).interval(level)
    low[rows], high[rows] = lo, hi
    return rest_value, diff, low, high

