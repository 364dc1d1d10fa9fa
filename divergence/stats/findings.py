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
Once the forward search ends the findings are revisited (:func:`_revise`): a finding the others
explain is dropped (the backward step: a stand-in chosen early, or a slice that read low only
because later findings lift the average), and a finding is swapped for a candidate it explains that
explains it better (a correlated stand-in for the real cohort); the forward search then resumes once
from the revised set.
A candidate left over is *explained by* the finding whose arrival weakened its residual test the
most when that test no longer passes the scan's own bar (the corrected level its own test passed);
one whose residual test still passes it, without passing the follow-up bar, is significant but not
shown to be a different cohort: neither a finding nor explained.

The residual tests: 0/1 outcomes, the Cochran–Mantel–Haenszel statistic (the stratified form of
the hypergeometric test behind Fisher's, with its continuity correction); real outcomes, the
stratified difference of means with weights n₁n₀/(n₁+n₀) and, in each stratum, the slice's
variance taken as at least the rest's (the skew guard's choice, made on both sides). Tallies per
slice and stratum are sums over the distinct rows, one walk of the lattice per finding restricted
to that finding's rows, so nothing is approximated. Its cost (docs/performance.md): on Adult at
support 0.005 about ten times the mining pass, the revision included.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..outcome_rules import WORSE_WHEN
from ..mining.lattice import RowBits, walk_label_entries, walk_order
from .strata import pair_z, split_strata, strata_sums_csr, update_entries
from .stats import fisher_exact_p, mean_difference_test, normal_quantile, rate_difference_interval, slice_means
from ..prepare.tallies import metric_columns, metric_tallies

__all__ = ["Findings", "distinct_findings", "enclosing_findings", "within_difference", "significant_slices", "default_order",
           "worse_sign", "honest_estimate", "MAX_STRATA", "MAX_ENTRIES"]

#: most strata (membership patterns of the findings) followed, and most (candidate, stratum) pairs
#: with rows: past either no finding is added (the findings' overlaps have cut the rows into cells
#: too many and too small to test in; the assessment says so) and the work stays within a scan's
MAX_STRATA = 4096
MAX_ENTRIES = 600_000
#: candidates, strongest by the stratified statistic, whose test is made exact at each step
EXACT_TOP = 64
#: a candidate whose residual |Z| falls this far below the bar is no longer followed step by step
#: (it is tested again given all the findings; if it could then be one, the search goes on)
FREEZE_MARGIN = 1.5
#: how far (in |Z|) below the bar of the last finding a finding's residual test given the others
#: must fall for the backward step to drop it: explained, not a near miss that the forward search
#: would add back (the first finding, which passed no residual test when it was chosen, has none)
DROP_MARGIN = 1.5
#: rounds of revision (backward steps and swaps, each followed by the forward search again)
MAX_REVISIONS = 1
#: candidates a finding explains that are tried in its place, the strongest on their own first
SWAP_RIVALS = 3
#: how much stronger (in |Z|) a candidate's residual given a finding must be than the finding's
#: given it for the candidate to take its place: none, the data's better explanation wins (a margin
#: of 0.5 kept the greedy search's choice between near-equals, and named more cohorts by stand-ins:
#: docs/statistics.md)
SWAP_MARGIN = 0.0
#: the least share of their rows (of the rows of either) a slice shares with a finding to be looked
#: at as a name the data do not tell from it, and how many of those, the most shared first
ALIAS_SHARE = 0.5
ALIAS_TRIES = 3



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
    #: why the search stopped with candidates left that could still have been findings ('' when
    #: it did not: :data:`MAX_STRATA`, :data:`MAX_ENTRIES`, or its time)
    cut: str = ""
    #: for a finding, the row of a slice the data do not tell from it (-1: none, or not looked for):
    #: it explains the finding as the finding explains it (:func:`_aliases`)
    alias: np.ndarray | None = None


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
    """Metric ``k``'s distinct findings among the ``significant`` slices (see the module's text).

    ``scan_level``: the confidence level of the scan's corrected intervals (the bar a slice's own
    test passed); ``family_size``: the tests the scan's correction counts, the size of the family
    of follow-up tests too (any slice of it could have been one); ``budget``: (work per slice and
    distinct row, least work): the work the search may do, in itemsets walked, distinct rows read
    and (candidate, stratum) entries updated (deterministic: the same table gives the same findings
    on any machine, from any engine); past it no finding is added (the search is cut, said in
    ``cut``); ``first_bar``: a |Z| the first finding's own
    test against the rest must reach (a comparison's candidates are significant against no change,
    not against the rest: a model worse everywhere alike has no finding)."""
    n_items = len(table)
    binary = table.metrics[k].binary
    finding = np.zeros(n_items, dtype=bool)
    explained = np.full(n_items, -1, dtype=np.int64)
    cand = np.nonzero(significant)[0]
    if cand.size == 0:
        return Findings(finding, explained, cand, np.zeros(0, dtype=np.int64), "")
    cols = list(metric_columns(k))
    tal = np.asarray(table.tallies, dtype=float)
    strata = _Strata(tal[cand][:, cols], tal[0, cols], binary)  # one stratum to start: every row
    z_own = strata.z()
    prefer = worse_sign(table.metrics[k].name) or 1
    support = np.asarray(table.columns["support"], dtype=float)[cand]
    top = _strongest_first(np.arange(cand.size), z_own)
    exact = strata.exact_z(top, z_own)
    if first_bar is not None and np.abs(exact).max() < first_bar:
        return Findings(finding, explained, cand, np.zeros(0, dtype=np.int64), "")
    chosen = [_strongest(top, exact, prefer, support)]
    position_of = np.full(n_items, -1, dtype=np.int64)
    position_of[cand] = np.arange(cand.size)
    z_scan_own = _z_two_sided(1.0 - scan_level)
    chosen[0] = _coarsest(table, k, cand, position_of, chosen[0], z_own, np.ones(cand.size, dtype=bool), z_scan_own)
    m_follow = max(int(family_size), 1)

    def bar_z(j: int) -> float:  # the j-th finding's bar (j >= 2), as |Z|
        return _z_two_sided(alpha / m_follow if correction == "bonferroni" else alpha / max(m_follow - j + 2, 1))

    cut = ""
    if table.lattice.distinct_codes is None:
        return Findings(finding | _mark(n_items, cand[chosen]), explained, cand, cand[chosen].astype(np.int64), cut)
    tallies0 = (tal[cand][:, cols], tal[0, cols])
    limit = None
    spent = 0
    seen = {frozenset(chosen)}
    rows = None
    for revision in range(MAX_REVISIONS + 1):
        rows = _Rows(table, cand, k) if rows is None else rows.fresh()
        rows.work = spent
        if budget is not None and limit is None:
            limit = max(float(budget[1]), float(budget[0]) * (n_items + rows.codes.shape[0]))
        chosen, alive, z_all, cut = _forward(rows, _Strata(*tallies0, binary), list(chosen), binary, bar_z, prefer,
                                             support, limit, table, k, cand, position_of, z_scan_own)
        spent = rows.work
        if cut or revision == MAX_REVISIONS or (limit is not None and rows.work > limit):
            break
        revised = _revise(rows, chosen, alive, z_own, binary, bar_z)
        if revised is None or frozenset(revised) in seen:
            break
        seen.add(frozenset(revised))
        chosen = revised
    finding[cand[chosen]] = True
    z_pair = rows.pairs(binary)  # given each finding alone, from the last final test's entries
    # a candidate left over is explained by a finding when, with the findings' rows accounted
    # for, it no longer passes the scan's own bar; by the finding that alone weakens it most
    z_scan = _z_two_sided(1.0 - scan_level)
    left = np.nonzero(alive)[0]
    drop = np.abs(z_own[left])[:, None] - np.abs(z_pair[left])
    by = np.argmax(drop, axis=1) if drop.size else np.zeros(0, dtype=np.int64)
    ok = (np.abs(z_all[left]) < z_scan) & (drop[np.arange(left.size), by] > 0) if left.size else np.zeros(0, bool)
    explained[cand[left[ok]]] = cand[np.asarray(rows.order)[by[ok]]]
    rank = cand[chosen].astype(np.int64)
    alias = np.full(n_items, -1, dtype=np.int64)
    for f, x in _aliases(table, k, cand, rows, left[ok], np.asarray(rows.order)[by[ok]], binary, z_scan).items():
        alias[cand[f]] = cand[x]
    return Findings(finding, explained, cand, rank, cut, alias)


def _aliases(table, k: int, cand: np.ndarray, rows: "_Rows", explained: np.ndarray, by: np.ndarray, binary: bool,
             z_scan: float) -> dict:
    """For each finding (a candidate position), a candidate it explains that explains it as well,
    the other findings given: the finding's residual test given that candidate no longer passes the
    scan's bar either. The data do not tell the two apart (a cohort and a near copy of it on a
    correlated attribute, the cohort and itself with an item that holds on almost all of its rows);
    the search named the one whose test was stronger. Not a refinement of the finding (a part of it,
    which "explained by" tells). Looked for among the candidates sharing at
    least :data:`ALIAS_SHARE` of their rows with the finding (the rows of either), the most shared
    first, :data:`ALIAS_TRIES` of them."""
    order = [int(f) for f in rows.order]
    if not order or explained.size == 0 or len(order) > 62:
        return {}
    n = np.asarray(table.tallies[:, metric_columns(k)[0]], dtype=float)
    codes = table.codes
    test = _ResidualTest(rows, binary)
    uniq, inverse = test._pattern(order)
    out = {}
    for i, f in enumerate(order):
        mine = explained[by == f]
        if mine.size == 0:
            continue
        fc, xc = codes[cand[f]], codes[cand[mine]]
        # a refinement of the finding is a part of it, told by "explained by"; another name is wanted
        other = np.any((fc >= 0) & (xc != fc), axis=1)
        mine, xc = mine[other], xc[other]
        if mine.size == 0:
            continue
        clash = np.any((fc >= 0) & (xc >= 0) & (xc != fc), axis=1)
        both = np.where(fc >= 0, fc, xc)
        shared = np.asarray(table.index_of(both), dtype=np.int64)
        nf, nx = n[cand[f]], n[cand[mine]]
        inter = np.where((shared >= 0) & ~clash, n[np.maximum(shared, 0)], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = inter / (nf + nx - inter)
        near = np.nonzero(share >= ALIAS_SHARE)[0]
        if near.size == 0:
            continue
        near = near[np.lexsort((cand[mine[near]], -share[near]))][:ALIAS_TRIES]
        label_lo, h_lo = test.without(order, i, uniq, inverse)
        for j in near:
            if abs(test._z(f, *test.with_member(label_lo, h_lo, int(mine[j])))) < z_scan:
                out[f] = int(mine[j])
                break
    return out


def _forward(rows: "_Rows", strata: "_Strata", chosen: list, binary: bool, bar_z, prefer: int, support: np.ndarray,
             budget: float | None, table, k: int, cand: np.ndarray, position_of: np.ndarray, z_scan_own: float
             ) -> tuple[list, np.ndarray, np.ndarray, str]:
    """The forward search from the findings ``chosen`` (one: the first finding; more: a revision's,
    whose strata are split at once and every candidate then tested in one walk): again and again the candidate whose residual test given the findings is strongest
    joins them while it passes its bar; then every candidate left is tested given all the findings,
    and the search goes on from there while one could be a finding. Returns the findings, the
    candidates left (a mask), their residual statistics given every finding, and why it was cut."""
    alive = np.ones(cand.size, dtype=bool)
    alive[chosen] = False
    active = alive.copy()
    cut = ""
    z_all = np.zeros(cand.size)
    # work kept for the final test of every candidate: a walk of all their lattice over every row
    reserve = float(rows.final_work(alive))
    resume = len(chosen) > 1
    if resume:  # findings carried over from a revision: their strata, then every candidate tested at once
        active[:] = False
        for f in chosen:
            if not rows.add_rows_only(f):
                return chosen[:len(rows.order)], alive, z_all, "their overlaps cut the rows into too many cells to test in"
    while True:
        while not resume:
            if not rows.add(strata, chosen[-1], active):
                cut = "their overlaps cut the rows into too many cells to test in"
                alive[chosen.pop()] = True  # not a finding its rows can be accounted for as
                break
            if not active.any():
                break
            if budget is not None and rows.work > budget - reserve:
                cut = "the work it was given, about what the scan did, ran out"
                break
            z = strata.z()
            j = len(chosen) + 1
            frozen = active & (np.abs(z) < bar_z(j) - FREEZE_MARGIN)
            if frozen.any():  # far below the bar: checked again once the findings are known
                strata.drop(np.nonzero(frozen)[0])
                active &= ~frozen
            left = np.nonzero(active)[0]
            if left.size == 0:
                break
            # the strongest by the exact test among the strongest by the stratified statistic
            top = _strongest_first(left, z)
            exact = strata.exact_z(top, z)
            if np.abs(exact).max() < bar_z(j):
                break
            best = _strongest(top, exact, prefer, support)
            best = _coarsest(table, k, cand, position_of, int(best), z, active, z_scan_own)
            chosen.append(int(best))
            alive[best] = False
            active[best] = False
            strata.drop(np.array([best]))
        resume = False
        # every candidate left, tested given all the findings (and each finding alone)
        z_all, _ = rows.final(np.nonzero(alive)[0], binary, pairs=False)
        if cut:
            break
        if budget is not None and rows.work > budget - reserve:
            break  # no work left to look again
        j = len(chosen) + 1
        left = np.nonzero(alive)[0]
        again = left[np.abs(z_all[left]) >= bar_z(j) - FREEZE_MARGIN]
        if again.size == 0 or np.abs(z_all[again]).max() < bar_z(j):
            break
        # a candidate checked again could be a finding: follow it step by step from here
        strata = rows.strata_of(again, binary)
        active = np.zeros(cand.size, dtype=bool)
        active[again] = True
        top = _strongest_first(again, z_all)
        exact = strata.exact_z(top, strata.z())
        if np.abs(exact).max() < bar_z(j):
            break
        best = _strongest(top, exact, prefer, support)
        chosen.append(int(best))
        alive[best] = False
        active[best] = False
        strata.drop(np.array([best]))
    return chosen, alive, z_all, cut


def _revise(rows: "_Rows", chosen: list, alive: np.ndarray, z_own: np.ndarray, binary: bool, bar_z) -> list | None:
    """The findings revisited once the forward search has ended (None: nothing to change).

    Backward: a finding whose residual test given the other findings falls :data:`DROP_MARGIN`
    below the bar of the last of them (``bar_z(len(chosen))``) is dropped, the farthest below first,
    again while one does; the first finding, chosen by its test against the whole dataset and never
    by a residual one, is dropped once it falls below that bar at all: a stand-in chosen early
    that the later findings account for, or a slice that read low only because they lift the
    average. Swap: a finding and a candidate it explains (the candidate's own test weakened most by
    that finding) are tested against each other, both ways, the other findings given; when the
    candidate's residual given the finding is stronger than the finding's given the candidate (by
    :data:`SWAP_MARGIN`), the candidate explains the finding better and takes its place (if it
    passes the finding's bar in its stead). A finding's refinements are not its rivals; a wider
    slice is (a refinement chosen first is replaced by its cohort). Every finding's best swap at
    once (a rival taken once, the largest gain first), then the backward step again: all with direct
    tests, so that one final walk of the search (the forward search resumed) follows."""
    if not chosen:
        return None
    test = _ResidualTest(rows, binary)
    first = chosen[0]

    def backward(kept: list) -> list:
        kept = list(kept)
        while len(kept) >= 2:
            # the first finding was chosen by its test against the whole dataset, which the others'
            # rows lift or lower, and never by a residual test: it gets no margin
            need = np.full(len(kept), bar_z(len(kept)) - DROP_MARGIN)
            need[[i for i, f in enumerate(kept) if f == first]] += DROP_MARGIN
            short = np.asarray(test.leave_one_out(kept)) - need
            weakest = int(np.argmin(short))
            if short[weakest] >= 0:
                break
            kept.pop(weakest)
        return kept

    kept = backward(chosen)
    left = np.nonzero(alive)[0]
    if left.size and list(rows.order) == list(chosen):
        swapped = _swaps(test, rows, kept, left, z_own, binary, bar_z)
        if swapped != kept:
            kept = backward(swapped)
    return None if kept == list(chosen) else kept


def _swaps(test: "_ResidualTest", rows: "_Rows", kept: list, left: np.ndarray, z_own: np.ndarray, binary: bool,
           bar_z) -> list:
    """Each finding of ``kept`` swapped for the candidate it explains that explains it better (see
    :func:`_revise`); the attribution of the candidates ``left`` to the findings is the last final
    test's (each finding alone, so it holds for any set of them)."""
    column = {f: i for i, f in enumerate(rows.order)}
    z_pair = rows.pairs(binary)[left]
    drop = np.abs(z_own[left])[:, None] - np.abs(z_pair)
    by = np.argmax(drop, axis=1)
    explains = drop[np.arange(left.size), by] > 0
    fast = len(kept) <= 62
    if fast:
        uniq, inverse = test._pattern(kept)
        label_all, h_all = inverse, uniq.size
    swaps = []
    for i, f in enumerate(kept):
        mine = left[explains & (by == column[f])]
        # a refinement of the finding is not a rival: the finding explains it (the search takes the
        # coarsest of the alike, :func:`_coarsest`), and a near copy of it differs from it on noise
        fc = rows.cand_codes[f]
        mine = mine[np.any((fc >= 0) & (rows.cand_codes[mine] != fc), axis=1)]
        # strongest on their own first; ties (slices of the same rows) in the itemsets' own order, so
        # that any engine's table, whatever its row order, gives the same findings
        keys = tuple(rows.cand_codes[mine].T[::-1]) + (-np.abs(z_own[mine]),)
        rivals = mine[np.lexsort(keys)[:SWAP_RIVALS]] if mine.size else mine
        others = [g for g in kept if g != f]
        if rivals.size and fast:
            label_lo, h_lo = test.without(kept, i, uniq, inverse)
        best, gain = None, SWAP_MARGIN
        for x in rivals:
            b = abs(test._z(int(x), label_all, h_all)) if fast else abs(test.z(int(x), others + [f]))
            if b <= gain:  # the finding's |z| given it is at least 0
                continue
            a = abs(test._z(f, *test.with_member(label_lo, h_lo, int(x)))) if fast else abs(test.z(f, others + [int(x)]))
            if b - a <= gain:
                continue
            # given the others alone: their strata are ``kept``'s with f's bit cleared (the same
            # strata, numbered alike, as computed afresh: no second pass over the rows)
            if others and abs(test._z(int(x), label_lo, h_lo) if fast else test.z(int(x), others)) < bar_z(len(kept)):
                continue
            best, gain = int(x), b - a
        if best is not None:
            swaps.append((gain, i, best))
    out = list(kept)
    taken: set = set()
    for gain, i, x in sorted(swaps, key=lambda t: (-t[0], t[1])):  # each finding's best, a rival taken once
        if x not in taken:
            out[i] = x
            taken.add(x)
    return out


class _ResidualTest:
    """A candidate's residual test given any set of findings, from the distinct rows' membership
    (the same statistic as the search's, computed directly: for the few tests a revision makes)."""

    def __init__(self, rows: "_Rows", binary: bool) -> None:
        self.codes = rows.codes[rows.used]
        self.w = rows.uw
        self.cand_codes = rows.cand_codes
        self.binary = binary
        self._members: dict = {}

    def member(self, position: int) -> np.ndarray:
        got = self._members.get(position)
        if got is None:
            c = self.cand_codes[position]
            items = np.nonzero(c >= 0)[0]
            got = np.all(self.codes[:, items] == c[items], axis=1)
            self._members[position] = got
        return got

    def _labels(self, given: list) -> tuple[np.ndarray, int]:
        """Each row's stratum (its pattern of membership in ``given``), numbered 0 to h - 1."""
        if not given:
            return np.zeros(self.codes.shape[0], dtype=np.int64), 1
        if len(given) > 62:
            bits = np.column_stack([self.member(g) for g in given])
            _, label = np.unique(np.packbits(bits, axis=1), axis=0, return_inverse=True)
            label = label.ravel()
            return label, int(label.max()) + 1
        uniq, label = self._pattern(given)
        return label, uniq.size

    def _z(self, position: int, label: np.ndarray, h: int) -> float:
        totals = _sums_by(label, self.w, h)
        mine = self.member(position)
        tallies = _sums_by(label[mine], self.w[mine], h)
        keep = np.nonzero(tallies[:, 0] > 0.5)[0]
        st = _Strata.from_entries(1, np.zeros(keep.size, dtype=np.int64), keep, tallies[keep], totals, self.binary)
        return float(st.exact_z(np.zeros(1, dtype=np.int64), st.z())[0])

    def z(self, position: int, given: list) -> float:
        """The residual statistic of candidate ``position`` given the findings ``given``, signed."""
        label, h = self._labels(given)
        return self._z(position, label, h)

    def _pattern(self, findings: list) -> tuple[np.ndarray, np.ndarray]:
        """The rows' patterns of membership in ``findings`` (at most 62, one bit each): the distinct
        patterns, sorted, and each row's place among them."""
        pattern = np.zeros(self.codes.shape[0], dtype=np.int64)
        for i, g in enumerate(findings):
            pattern |= self.member(g).astype(np.int64) << i
        uniq, inverse = np.unique(pattern, return_inverse=True)
        return uniq, inverse.ravel()

    def without(self, findings: list, i: int, uniq: np.ndarray, inverse: np.ndarray) -> tuple[np.ndarray, int]:
        """The strata of ``findings`` but the i-th, from their patterns (``_pattern``)."""
        sub, small = np.unique(uniq & ~np.int64(1 << i), return_inverse=True)
        return small.ravel()[inverse], sub.size

    def with_member(self, label: np.ndarray, h: int, position: int) -> tuple[np.ndarray, int]:
        """The strata ``label`` split by membership in candidate ``position``, renumbered."""
        both = label * 2 + self.member(position)
        present = np.bincount(both, minlength=2 * h) > 0
        return (np.cumsum(present) - 1)[both], int(present.sum())

    def leave_one_out(self, findings: list) -> list[float]:
        """|z| of each finding given all the others: the strata of every finding computed once, each
        finding's own bit then left out of its rows' pattern."""
        if len(findings) > 62:
            return [abs(self.z(f, [g for g in findings if g != f])) for f in findings]
        uniq, inverse = self._pattern(findings)
        return [abs(self._z(f, *self.without(findings, i, uniq, inverse))) for i, f in enumerate(findings)]

def _coarsest(table, k: int, cand: np.ndarray, position_of: np.ndarray, best: int, z: np.ndarray,
              active: np.ndarray, z_scan: float) -> int:
    """The finding to take for the strongest candidate ``best``: a wider candidate (a subset of its
    items) from which it does not differ (its rows against the wider slice's other rows, not
    significant at the scan's bar) and whose own residual test passes the scan's bar, the strongest
    of them; else ``best``. A lucky refinement of a real cohort can test a little stronger than the
    cohort: the refinement is explained by the cohort, not the other way round. ``best`` passed the
    finding's bar already, so the wider slice need only pass the scan's (a weak cohort whose lucky
    refinement alone reaches a later finding's Holm bar is named, not its refinement); the number of
    findings is the same either way."""
    from itertools import combinations

    codes = table.codes[cand[best]]
    items = np.nonzero(codes >= 0)[0]
    if items.size < 2 or items.size > 12:
        return best
    subs = []
    for size in range(1, items.size):
        for keep in combinations(items, size):
            row = np.full(codes.size, -1, dtype=codes.dtype)
            row[list(keep)] = codes[list(keep)]
            subs.append(row)
    rows = np.asarray(table.index_of(np.array(subs)), dtype=np.int64)
    pos = position_of[np.maximum(rows, 0)]
    ok = (rows >= 0) & (pos >= 0)
    pos = pos[ok]
    pos = pos[active[pos] & (np.abs(z[pos]) >= z_scan)]
    if pos.size == 0:
        return best
    n, s, q = (np.asarray(table.tallies[:, c], dtype=float) for c in metric_columns(k))
    i, g = cand[best], cand[pos]
    inside = _contribution(np.tile([n[i], s[i], q[i]], (g.size, 1)), np.column_stack([n[g], s[g], q[g]]),
                           table.metrics[k].binary)
    with np.errstate(invalid="ignore", divide="ignore"):
        zi = np.where(inside[1] > 1e-12, np.abs(inside[0]) / np.sqrt(np.where(inside[1] > 1e-12, inside[1], 1.0)), 0.0)
    alike = pos[zi < z_scan]
    if alike.size == 0:
        return best
    return int(alike[np.argmax(np.abs(z[alike]))])


def _mark(n: int, rows: np.ndarray) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    out[rows] = True
    return out


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
    """The strata (patterns of membership in the findings) and, for each candidate followed and
    stratum it has rows in, the candidate's tallies there (defined count, shifted sum, sum of
    squares): its *entries*, held per candidate (candidate c's at ``start[c]:start[c + 1]``).
    The residual test's numerator and variance are sums of one term per entry, recomputed after
    each split (compiled: :func:`divergence.stats.strata.strata_sums`)."""

    def __init__(self, per_slice: np.ndarray, total: np.ndarray, binary: bool) -> None:
        r = per_slice.shape[0]
        self._set(binary, r, np.arange(r, dtype=np.int64), np.arange(1, r + 1, dtype=np.int64),
                  np.zeros(r, dtype=np.int64), np.ascontiguousarray(per_slice, dtype=float),
                  np.asarray(total, dtype=float)[None, :].copy(), np.ones(r, dtype=bool))

    def _set(self, binary, r, beg, end, stratum, tallies, totals, tracked) -> None:
        self.binary, self.r = binary, r
        self.beg, self.end, self.stratum, self.tallies = beg, end, stratum, tallies
        self.totals = np.ascontiguousarray(totals, dtype=float)
        #: the candidates followed (the others' entries are dropped at the next split)
        self.tracked = tracked
        self._sums()

    @classmethod
    def from_entries(cls, r: int, cand: np.ndarray, stratum: np.ndarray, tallies: np.ndarray, totals: np.ndarray,
                     binary: bool) -> "_Strata":
        """The strata of entries (``cand``, ``stratum``, ``tallies``; each candidate's
        consecutive)."""
        beg, end = _runs(cand, r)
        out = cls.__new__(cls)
        out._set(binary, r, beg, end, np.ascontiguousarray(stratum, dtype=np.int64),
                 np.ascontiguousarray(tallies, dtype=float), totals, end > beg)
        return out

    def __len__(self) -> int:
        return self.totals.shape[0]

    def n_entries(self, among: np.ndarray | None = None) -> int:
        """The entries of the candidates followed (of those of them in the mask ``among``)."""
        keep = self.tracked if among is None else self.tracked & among
        return int((self.end - self.beg)[keep].sum())

    def drop(self, candidates: np.ndarray) -> None:
        """Stop following these candidates (their statistic reads 0; their entries go at the next split)."""
        self.tracked[candidates] = False
        self.num[candidates] = 0.0
        self.var[candidates] = 0.0
        self.single[candidates] = 0.0

    def split(self, mode: np.ndarray, old: np.ndarray, new_totals: np.ndarray, w_cand: np.ndarray, w_j: np.ndarray,
              w_t: np.ndarray) -> None:
        """A finding's rows, in the strata ``old`` (sorted), leave them for new strata (one per
        old stratum, appended in that order, with totals ``new_totals``): per candidate followed,
        ``mode`` 1 (a refinement of the finding) moves its entries whole, mode 2 moves its
        tallies in the finding (the walk's entries ``w_cand``, ``w_j`` (the place of the old
        stratum in ``old``), ``w_t``), mode 0 keeps them (it has no row in the finding)."""
        h = len(self)
        old_index = np.full(h, -1, dtype=np.int64)
        old_index[old] = np.arange(old.size)
        w_beg, w_end = _runs(w_cand, self.r)
        cap = self.stratum.size + w_cand.size
        out_start = np.zeros(self.r + 1, dtype=np.int64)
        out_stratum = np.empty(cap, dtype=np.int64)
        out_tallies = np.empty((cap, 3))
        m = split_strata(self.beg, self.end, self.stratum, self.tallies, self.tracked, mode.astype(np.int64), old_index,
                         h, w_beg, w_end, np.ascontiguousarray(w_j, dtype=np.int64),
                         np.ascontiguousarray(w_t, dtype=float), np.full(max(old.size, 1), -1, dtype=np.int64),
                         np.zeros(max(old.size, 1), dtype=np.int64), out_start, out_stratum, out_tallies)
        self.totals[old] -= new_totals
        self._set(self.binary, self.r, out_start[:-1], out_start[1:], out_stratum[:m], out_tallies[:m],
                  np.concatenate([self.totals, new_totals]), self.tracked)

    def _sums(self) -> None:
        # per candidate, the sums of its entries' terms; for a 0/1 outcome also the count of strata
        # that inform its test and the sums of their events, rows, stratum events and stratum rows
        # (one stratum's own when the count is 1)
        self.num, self.var, self.single = strata_sums_csr(self.beg, self.end, self.stratum, self.tallies,
                                                          self.totals, self.binary, self.tracked)

    def z(self) -> np.ndarray:
        """Each candidate's stratified statistic (signed: above or below the other rows of its
        strata), 0 where no stratum holds both its rows and others."""
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.sqrt(np.maximum(self.var, 0.0))
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
    """Each entry's terms of the residual test (a candidate's tallies in a stratum, and the
    stratum's): 0/1 outcome, observed minus expected events and the hypergeometric variance
    (Cochran–Mantel–Haenszel); real outcome, w·(mean₁ − mean₀) and w²·(var₁/n₁ + var₀/n₀),
    w = n₁n₀/(n₁+n₀), var₁ at least var₀."""
    n1, s1, q1 = tallies[:, 0], tallies[:, 1], tallies[:, 2]
    big_n, big_s, big_q = total[:, 0], total[:, 1], total[:, 2]
    n0 = big_n - n1
    ok = (n1 > 0.5) & (n0 > 0.5)
    with np.errstate(invalid="ignore", divide="ignore"):
        if binary:
            m = np.rint(big_s)
            safe = np.where(ok, big_n, 1.0)
            expected = n1 * m / safe
            var = n1 * n0 * m * (big_n - m) / (safe * safe * np.maximum(big_n - 1.0, 1.0))
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


#: the last tables' distinct rows (:func:`_distinct_rows`), shared by their metrics: (the codes array,
#: held weakly, its distinct rows and each row's place among them)
_DISTINCT_CACHE: list = []


def _distinct_rows(codes) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, axis=0, return_inverse=True)``, the same rows in the same (lexicographic)
    order, from one integer key per row where the codes fit one (mixed radix): a sort of a million
    int64 keys instead of a million structured rows (1.7 s to 0.1 s at 10⁶ distinct rows). Kept for
    the table's other metric."""
    import weakref

    for ref, out in _DISTINCT_CACHE:
        if ref() is codes:
            return out
    arr = np.asarray(codes)
    out = None
    if arr.ndim == 2 and arr.shape[1] and arr.shape[0]:
        low = arr.min(axis=0).astype(np.int64)
        radix = arr.max(axis=0).astype(np.int64) - low + 1
        if float(np.log2(radix.astype(float)).sum()) < 62.0:
            key = np.zeros(arr.shape[0], dtype=np.int64)
            for a in range(arr.shape[1]):
                key = key * radix[a] + (arr[:, a].astype(np.int64) - low[a])
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            out = (arr[first], inverse.reshape(-1))
    if out is None:
        u, inverse = np.unique(arr, axis=0, return_inverse=True)
        out = (u, inverse.reshape(-1))
    try:
        _DISTINCT_CACHE.insert(0, (weakref.ref(codes), out))
        del _DISTINCT_CACHE[2:]
    except TypeError:  # not an array that can be held weakly: not kept
        pass
    return out


class _Rows:
    """The distinct rows of a table, their stratum, and the walks that tally the candidates' rows
    within a finding's rows."""

    def __init__(self, table, cand: np.ndarray, k: int) -> None:
        # identical rows merged (an engine may hand over every row): the same work, and the same
        # findings, whichever engine mined the table
        codes, inverse = _distinct_rows(table.lattice.distinct_codes)
        w = np.asarray(table.lattice.distinct_tallies, dtype=float)[:, list(metric_columns(k))]
        merged = np.zeros((codes.shape[0], 3))
        np.add.at(merged, inverse.ravel(), w)
        self.codes, self.w = np.ascontiguousarray(codes), merged
        #: the rows with a weight for this metric (a row where it is undefined adds to no tally:
        #: the walks skip it)
        self.used = np.any(merged != 0, axis=1)
        #: the rows with weight, their weights, and the rows holding each item as bitsets
        self.uw = np.ascontiguousarray(merged[self.used])
        self.row_bits = RowBits(self.codes[self.used], table.codes)
        self.slice_codes = table.codes
        self.parent = table.lattice.parent
        self.cand = cand
        self.cand_codes = table.codes[cand]
        self._reset()

    def _reset(self) -> None:
        self.label = np.zeros(self.codes.shape[0], dtype=np.int64)
        #: the findings accounted for (candidate positions, in order) and, per stratum, which of
        #: them its rows are in, and the stratum it was split from (-1: the first)
        self.order: list[int] = []
        self.bits = np.zeros((1, 0), dtype=bool)
        self.split_from = np.full(1, -1, dtype=np.int64)
        #: the work done: itemsets walked, distinct rows read, entries updated
        self.work = 0
        #: the entries of the last final test (see :meth:`final`)
        self._last: dict | None = None
        self._walk_info: tuple | None = None

    def fresh(self) -> "_Rows":
        """The same rows with no finding accounted for (the rows, weights and bitsets shared)."""
        out = _Rows.__new__(_Rows)
        out.__dict__.update(self.__dict__)
        out._reset()
        return out

    def final_work(self, alive: np.ndarray) -> int:
        """The work of a final test of the candidates ``alive``: their lattice walked over every row."""
        return int(_with_ancestors(self.parent, self.cand[alive]).size + self.codes.shape[0] + 4 * alive.sum())

    def _walk_entries(self, positions: np.ndarray, rows: np.ndarray, labels: np.ndarray, n_labels: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidate position, label, tallies) of the candidates ``positions`` on the distinct
        rows ``rows`` (a mask; the rows without weight are skipped) of each label (``labels``,
        one per distinct row, read on the rows of the mask), the labels each one's rows hold:
        one walk of their lattice."""
        needed = _with_ancestors(self.parent, self.cand[positions])
        remap = np.full(len(self.parent), -1, dtype=np.int64)
        remap[needed] = np.arange(needed.size)
        parent = np.where(self.parent[needed] >= 0, remap[np.maximum(self.parent[needed], 0)], -1)
        walk = walk_order(parent, self.slice_codes[needed])
        slot = np.full(needed.size, -1, dtype=np.int64)
        slot[remap[self.cand[positions]]] = positions
        last = self._last
        c, lab, tallies = walk_label_entries(walk, None, labels[self.used], self.uw, n_labels, slot,
                                             last["entries"][0].size if last is not None and rows.all() else 0,
                                             bits=self.row_bits, rows=rows[self.used])
        self.work += int(needed.size + rows.sum() + c.size)
        keep = tallies[:, 0] > 0.5
        if keep.all():
            return c, lab, tallies
        return c[keep], lab[keep], tallies[keep]

    def _inside(self, position: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidate ``position``'s codes, its items' attributes, and its distinct rows (a mask)."""
        f = self.slice_codes[self.cand[position]]
        items = np.nonzero(f >= 0)[0]
        inside = np.ones(self.codes.shape[0], dtype=bool)
        for a in items:
            inside &= self.codes[:, a] == f[a]
        return f, items, inside

    def add_rows_only(self, position: int) -> bool:
        """:meth:`add` with no candidate followed: the finding's rows to their new strata (a resumed
        search tests every candidate afterwards in one walk); False past :data:`MAX_STRATA`."""
        _, _, inside = self._inside(position)
        h = self.bits.shape[0]
        old = np.flatnonzero(np.bincount(self.label[inside], minlength=h))
        if h + old.size > MAX_STRATA:
            return False
        self.work += int(inside.sum())
        self._split(old, inside, np.searchsorted(old, self.label[inside]), h)
        self.order.append(int(position))
        return True

    def add(self, strata: _Strata, position: int, active: np.ndarray) -> bool:
        """Split every stratum by membership in the slice ``finding``; False when the strata would
        pass :data:`MAX_STRATA` or the entries of the candidates followed :data:`MAX_ENTRIES`
        (nothing changed).

        A candidate holding every item of the finding moves whole; one fixing an attribute of the
        finding to another value has no row in it; the others' rows in it come from one walk of
        their lattice over the finding's distinct rows."""
        f, items, inside = self._inside(position)
        h = len(strata)
        old = np.flatnonzero(np.bincount(self.label[inside], minlength=h))
        if h + old.size > MAX_STRATA:
            return False
        self.work += int(inside.sum()) + strata.n_entries()
        pos = np.searchsorted(old, self.label[inside])
        total = _sums_by(pos, self.w[inside], old.size)
        mine = self.cand_codes[:, items]
        refines = np.all(mine == f[items], axis=1) & active
        compatible = np.all((mine < 0) | (mine == f[items]), axis=1) & ~refines & active
        walked = np.nonzero(compatible)[0]
        if walked.size:
            labels = np.zeros(self.codes.shape[0], dtype=np.int64)
            labels[inside] = pos
            w_cand, w_j, w_t = self._walk_entries(walked, inside, labels, old.size)
        else:
            w_cand, w_j, w_t = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3))
        moved = strata.n_entries(refines)
        if strata.n_entries() + moved + w_cand.size > MAX_ENTRIES:
            return False
        mode = np.where(refines, 1, np.where(compatible, 2, 0))
        strata.split(mode, old, total, w_cand, w_j, w_t)
        self._split(old, inside, pos, h)
        self.order.append(int(position))
        return True

    def _split(self, old: np.ndarray, inside: np.ndarray, pos: np.ndarray, h: int) -> None:
        """The rows of a finding (``inside``, of the strata ``old``) to their new strata."""
        self.label[inside] = h + pos
        bits = np.zeros((h + old.size, self.bits.shape[1] + 1), dtype=bool)
        bits[:h, :-1] = self.bits
        bits[h:, :-1] = self.bits[old]
        bits[h:, -1] = True
        self.bits = bits
        self.split_from = np.concatenate([self.split_from, old])

    def _totals(self) -> np.ndarray:
        return _sums_by(self.label, self.w, self.bits.shape[0])

    def _entries(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries (candidate, stratum, tallies) of these candidates under the strata of every
        finding accounted for: from the last final test's entries when it had them (updated by a
        walk over the rows of the findings since, the only rows whose stratum changed), else one
        walk of their lattice over every distinct row."""
        last = self._last
        n_labels = self.bits.shape[0]
        if last is not None and np.all(last["have"][positions]):
            keep = np.zeros(self.cand.size, dtype=bool)
            keep[positions] = True
            h0 = last["strata"]
            changed = self.label >= h0
            if not changed.any() or n_labels == h0:
                c, lab, tallies = last["entries"]
                sel = keep[c]
                return c[sel], lab[sel], tallies[sel]
            # candidates with rows in a finding since: not fixing one of its attributes otherwise
            since = [self.slice_codes[self.cand[p]] for p in self.order[last["findings"]:]]
            touched = np.zeros(self.cand.size, dtype=bool)
            for f in since:
                items = np.nonzero(f >= 0)[0]
                mine = self.cand_codes[:, items]
                touched |= np.all((mine < 0) | (mine == f[items]), axis=1)
            walked = np.nonzero(touched & keep)[0]
            w_cand, w_lab, w_t = self._walk_entries(walked, changed, np.maximum(self.label - h0, 0), n_labels - h0) \
                if walked.size else (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)))
            ancestor = np.arange(n_labels, dtype=np.int64)
            for s in range(h0, n_labels):
                ancestor[s] = ancestor[self.split_from[s]]
            c0, lab0, t0 = last["entries"]
            beg, end = _runs(c0, self.cand.size)
            w_beg, w_end = _runs(w_cand, self.cand.size)
            cap = c0.size + w_cand.size
            out_c = np.empty(cap, dtype=np.int64)
            out_l = np.empty(cap, dtype=np.int64)
            out_t = np.empty((cap, 3))
            m = update_entries(beg, end, lab0, t0, keep, w_beg, w_end, np.ascontiguousarray(w_lab + h0),
                               np.ascontiguousarray(w_t), ancestor, np.full(n_labels, -1, dtype=np.int64),
                               np.zeros((n_labels, 3)), np.zeros(self.cand.size + 1, dtype=np.int64), out_c, out_l,
                               out_t)
            self.work += int(c0.size)
            return out_c[:m], out_l[:m], out_t[:m]
        everything = np.ones(self.codes.shape[0], dtype=bool)
        return self._walk_entries(positions, everything, self.label, n_labels)

    def strata_of(self, positions: np.ndarray, binary: bool) -> _Strata:
        """The strata entries of these candidates under every finding accounted for."""
        c, lab, tallies = self._entries(positions)
        return _Strata.from_entries(self.cand.size, c, lab, tallies, self._totals(), binary)

    def final(self, positions: np.ndarray, binary: bool, pairs: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Each candidate's residual statistic given every finding accounted for, and (``pairs``)
        given each finding alone (columns in the order of :attr:`order`): full-length arrays, 0
        elsewhere. The entries are kept for the next final test (and :meth:`pairs`)."""
        r = self.cand.size
        z_all = np.zeros(r)
        if positions.size == 0:
            return z_all, (np.zeros((r, len(self.order))) if pairs else None)
        totals = self._totals()
        c, lab, tallies = self._entries(positions)
        have = np.zeros(r, dtype=bool)
        have[positions] = True
        self._last = {"entries": (c, lab, tallies), "strata": self.bits.shape[0], "findings": len(self.order),
                      "have": have, "positions": positions}
        z_all[positions] = _Strata.from_entries(r, c, lab, tallies, totals, binary).z()[positions]
        return z_all, (self.pairs(binary) if pairs else None)

    def pairs(self, binary: bool) -> np.ndarray:
        """Each candidate of the last final test, its residual statistic given each finding alone
        (columns in the order of :attr:`order`; 0 for the other candidates)."""
        r, k = self.cand.size, len(self.order)
        z_pair = np.zeros((r, k))
        last = self._last
        if last is None or not k:
            return z_pair
        c, lab, tallies = last["entries"]
        positions = last["positions"]
        z_pair[positions] = pair_z(c, lab, tallies, self.bits, self._totals(), positions, r, binary)
        return z_pair


def _sums_by(label: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """Per label (0 to n - 1), the sums of the rows of ``w`` that have it."""
    return np.column_stack([np.bincount(label, weights=w[:, j], minlength=n) for j in range(w.shape[1])])


def _strongest_first(at: np.ndarray, z: np.ndarray, count: int = EXACT_TOP) -> np.ndarray:
    """The (at most) ``count`` candidates of ``at`` with the largest |z|, strongest first (ties
    in the order of ``at``): ``at[np.argsort(-|z[at]|, kind="stable")[:count]]`` without sorting
    them all."""
    neg = -np.abs(z[at])
    if at.size > count:
        kth = np.partition(neg, count - 1)[count - 1]
        pick = np.flatnonzero(neg <= kth)
    else:
        pick = np.arange(at.size)
    return at[pick[np.argsort(neg[pick], kind="stable")][:count]]


def _runs(cand: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``r`` candidates' entries begin and end in ``cand`` (each candidate's
    consecutive; begin = end for a candidate without entries)."""
    beg = np.zeros(r, dtype=np.int64)
    end = np.zeros(r, dtype=np.int64)
    if cand.size:
        first = np.flatnonzero(np.concatenate([[True], cand[1:] != cand[:-1]]))
        who = cand[first]
        if np.bincount(who, minlength=r).max() > 1:
            raise AssertionError("a candidate's entries are not consecutive")
        beg[who] = first
        end[who] = np.concatenate([first[1:], [cand.size]])
    return beg, end


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
    keys = (np.arange(n_items), support, size, side, ~meets, group)
    order = np.lexsort(keys)  # the last key is the first criterion
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

