"""The search for the terms of the findings' model (:mod:`divergence.stats.findings_model`), by
likelihood, with three kinds of step repeated until none changes the terms:

- **forward**: the candidate with the largest likelihood gain joins the terms, as long as its
  test given the terms passes the bar of the next finding (the j-th finding's: Holm's step over the
  scan's family of m tests, α/(m − j + 2), Bonferroni's α/m when the scan uses Bonferroni; the
  first finding's, the metric's own significance bar, any candidate passing it);
- **backward**: the term whose test given the others falls farthest below the bar of the last
  finding is dropped, again while one does;
- **exchange**: a term is replaced by the candidate that, with the other terms, fits better (the
  model's likelihood rises): a cohort in place of a slice that only looked low because the cohort
  lifts the average, a cohort in place of its superset, a near copy the data favour.

Then, for each term: the names it could have had (a candidate whose model with the other terms
is within :data:`TIE` of the chosen model's log-likelihood), best first; for each candidate left,
the term that explains it (its test given all the terms no longer passes the scan's own bar, and
leaving that term out strengthens it most); and the term's effect given the others with its
interval.
"""
from __future__ import annotations

import math

import numpy as np

from .findings_kernel import split_entries
from .findings_model import (
    MAX_CELLS,
    MAX_TERMS,
    Cells,
    Rows,
    Scores,
    by_cells,
    candidate_cells,
    fit_with,
    scores,
    z_two_sided,
)

__all__ = ["search", "describe", "explain", "own_gain", "TIE"]

#: a name is tied with a term when its model with the other terms is this close in log-likelihood
#: (χ²₁ at 95%, halved)
TIE = 1.92
#: candidates whose gain is refitted exactly (0/1 outcome) when choosing one, the largest by the
#: score statistic first
EXACT_TOP = 6
#: the candidates an exchange or a tie looks at for each term: those whose rows go with the term's
#: most (near copies, wider and narrower slices, slices sharing most rows, large disjoint ones)
NEIGHBOURS = 64
#: an exchange (0/1 outcome) refits the candidates whose score statistic's half comes within this of
#: the term's own gain, the SWAP_TOP largest
SWAP_SLACK = 1.0
SWAP_TOP = 3
#: the names tried as ties of a term (0/1 outcome: each refitted), the strongest by the score first
TIES_TRIED = 10
#: rounds of forward, backward and exchange steps at most (a round that changes nothing ends it)
MAX_ROUNDS = 25


class _State:
    """The terms, their cells, and every candidate's entries in those cells."""

    def __init__(self, rows: Rows, terms: list, binary: bool, n_cand: int, own: tuple | None = None,
                 start: np.ndarray | None = None, before: _State | None = None, bar=None) -> None:
        self.rows, self.terms, self.binary, self.n_cand = rows, list(terms), binary, n_cand
        #: the bar of the j-th finding (None: the z of every candidate is read in full)
        self.bar = bar
        self.cells: Cells
        if before is not None and before.terms == self.terms[:-1]:
            self.cells = before.cells.adding(rows.member(self.terms[-1]), rows.w, start)
        else:
            self.cells = Cells(rows, self.terms, binary, start)
        if not self.terms and own is not None:  # one cell: every candidate's own tallies
            self.c, self.lab, self.t = own
        elif before is not None and before.terms == self.terms[:-1] and rows.whole_tallies:
            self.c, self.lab, self.t = _split(before, self.cells, rows.member(self.terms[-1]))
        else:
            # each candidate's entries consecutive, the candidates in the walk's order
            self.c, self.lab, self.t = rows.entries(self.cells.label, len(self.cells))
        self.begin = np.zeros(n_cand, dtype=np.int64)
        self.end = np.zeros(n_cand, dtype=np.int64)
        if self.c.size:
            first = np.flatnonzero(np.r_[True, self.c[1:] != self.c[:-1]])
            self.begin[self.c[first]] = first
            self.end[self.c[first]] = np.r_[first[1:], self.c.size]
        self.identity = np.arange(len(self.cells))
        # only the next finding's bar reads these z (and the sign below it): the binomial check of
        # a small candidate, which only lowers |z|, is spent on those that reach the bar
        self.full = scores(self.cells, self.identity, self.c, self.lab, self.t, n_cand,
                           floor=bar(len(self.terms) + 1) if bar is not None else 0.0)
        rows.work += int(self.c.size) * (len(self.terms) + 1)
        self._others: dict = {}
        self._near: np.ndarray | None = None

    @property
    def ll(self) -> float:
        return self.cells.fit.ll

    def entries_of(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.begin[position], self.end[position]
        return self.lab[a:b], self.t[a:b]

    def entries_of_many(self, positions: np.ndarray) -> np.ndarray:
        """The places of candidates ``positions``' entries (each candidate's in its own order: the
        sums over a candidate's entries are the same bits as over a mask of every entry)."""
        begin, end = self.begin[positions], self.end[positions]
        lens = end - begin
        return np.repeat(begin - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))

    def neighbours(self) -> np.ndarray:
        """Per term (columns), whether each candidate is among the :data:`NEIGHBOURS` whose rows go
        with the term's most (the largest |correlation| of the two indicators over the rows: near
        copies, wider and narrower slices, slices sharing most rows, large disjoint ones)."""
        if self._near is None:
            k = len(self.terms)
            if self.n_cand <= NEIGHBOURS:
                self._near = np.ones((self.n_cand, k), dtype=bool)
                return self._near
            bits = self.cells.X[:, 1:]
            big_n = float(self.cells.tot[:, 0].sum())
            n_c = np.bincount(self.c, weights=self.t[:, 0], minlength=self.n_cand) / big_n
            both = _shares(self.c, self.lab, self.t[:, 0], bits, self.n_cand) / big_n
            n_t = (self.cells.tot[:, 0] @ bits) / big_n
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = (both - n_c[:, None] * n_t[None, :]) / np.sqrt(
                    (n_c * (1 - n_c))[:, None] * (n_t * (1 - n_t))[None, :])
            corr = np.nan_to_num(np.abs(corr))
            near = np.zeros((self.n_cand, k), dtype=bool)
            top = np.argpartition(-corr, NEIGHBOURS - 1, axis=0)[:NEIGHBOURS]
            near[top, np.arange(k)[None, :]] = True
            self._near = near
        return self._near

    def others(self, i: int) -> tuple[Cells, np.ndarray, Scores]:
        """The model of the terms but the i-th: its cells, the map from this model's cells, and the
        score tests given it of the terms and of the i-th term's neighbours (:meth:`neighbours`; the
        others read 0 and not free)."""
        got = self._others.get(i)
        if got is None:
            cells, where = self.cells.without(i, self.rows.w, self.rows.whole_tallies)
            wanted = self.neighbours()[:, i].copy()
            wanted[self.terms] = True
            sel = self.entries_of_many(np.flatnonzero(wanted))
            terms = np.zeros(self.n_cand, dtype=bool)
            terms[self.terms] = True
            # the z read given the others is the terms' own (backward); the neighbours' gains
            got = (cells, where, scores(cells, where, self.c[sel], self.lab[sel], self.t[sel], self.n_cand, terms))
            self.rows.work += int(self.c.size) + int(sel.size) * len(self.terms) + len(cells) * len(self.terms) ** 2
            self._others[i] = got
        return got

    def ll_with(self, cells: Cells, where: np.ndarray, position: int) -> float:
        """The log-likelihood of the model of ``cells`` with candidate ``position`` added."""
        lab, t = self.entries_of(position)
        self.rows.work += 20 * len(cells) * (len(self.terms) + 1) ** 2  # a Newton fit on twice the cells
        return fit_with(cells, candidate_cells(cells, where, lab, t), information=False).ll


def _split(before: _State, cells: Cells, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries of ``before``'s terms and one more (``cells``), the new term's rows ``inside``:
    each entry of ``before`` split in two, its rows in the new term (one walk over those rows only)
    and the rest (its tallies less theirs: exact, the tallies being whole numbers); each candidate's
    entries consecutive, the candidates in ``before``'s order (one compiled pass: split_entries)."""
    old = before.cells
    k = len(before.terms)
    c_in, lab_in, t_in = before.rows.entries(old.label, len(old), rows=inside)
    map_out = np.searchsorted(cells.uniq, old.uniq)
    map_in = np.searchsorted(cells.uniq, old.uniq | (np.int64(1) << k))
    size = before.c.size + c_in.size
    c, lab, t = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64), np.empty((size, before.t.shape[1]))
    used = split_entries(before.c, before.lab, np.ascontiguousarray(before.t), c_in, lab_in, np.ascontiguousarray(t_in),
                         map_out, map_in, before.n_cand, c, lab, t)
    return c[:used], lab[:used], t[:used]


def _shares(c: np.ndarray, lab: np.ndarray, n: np.ndarray, bits: np.ndarray, n_cand: int) -> np.ndarray:
    """Per candidate and term (columns of ``bits``, cells x terms), the candidate's rows in the term."""
    return by_cells(c, lab, n, n_cand, bits) if bits.shape[1] else np.zeros((n_cand, 0))


def _choose(at: np.ndarray, gain: np.ndarray, z: np.ndarray, prefer: int, key: np.ndarray) -> int:
    """The candidate of ``at`` with the largest gain; among those as good (a slice and its
    complement on a two-valued attribute fit alike), the one on the metric's worse side, then the
    one of fewer items, then the first in the itemsets' own order (the same on any engine)."""
    g = gain[at]
    near = g >= g.max() - 1e-9 * max(1.0, abs(float(g.max())))
    order = np.lexsort((key[at], -(np.sign(z[at]) * prefer), ~near))
    return int(at[order[0]])


def _exact_best(state: _State, cells: Cells, where: np.ndarray, sc, at: np.ndarray, base_ll: float, prefer: int,
                key: np.ndarray, top_n: int = 0) -> tuple[int, float]:
    """The candidate of ``at`` whose model with ``cells``' terms has the largest log-likelihood, and
    that log-likelihood (exact: refitted for a 0/1 outcome, among the :data:`EXACT_TOP` largest by
    the score statistic)."""
    if not state.binary:
        best = _choose(at, sc.gain, sc.z, prefer, key)
        return best, base_ll + float(sc.gain[best])
    top = at[np.argsort(-sc.gain[at], kind="stable")[:top_n or EXACT_TOP]]
    exact = np.full(sc.gain.size, -np.inf)
    for x in top:
        exact[x] = state.ll_with(cells, where, int(x)) - cells.fit.ll
    best = _choose(top, exact, sc.z, prefer, key)
    return best, base_ll + float(exact[best])


def search(rows: Rows, binary: bool, n_cand: int, own: tuple, bar, prefer: int, key: np.ndarray,
           limit: float | None, start: list | None = None, start_beta: np.ndarray | None = None
           ) -> tuple[_State, str]:
    """The terms (candidate positions) and the state of their model; why the search was cut ('' when it
    was not). ``bar(j)``: the |z| the j-th finding's test must reach; ``key``: each candidate's place in
    the itemsets' own order (ties); ``start``: the terms to start from (none), ``start_beta`` their
    model's coefficients (the fit starts there)."""
    state = _State(rows, list(start or []), binary, n_cand, own, start=start_beta if start else None, bar=bar)
    seen: set = set()
    cut = ""

    def over() -> bool:
        return limit is not None and rows.work > limit

    for _ in range(MAX_ROUNDS):
        # forward
        while len(state.terms) < MAX_TERMS:
            if over():
                cut = "the work it was given, about what the scan did, ran out"
                break
            sc = state.full
            ok = sc.free & (np.abs(sc.z) >= bar(len(state.terms) + 1))
            ok[state.terms] = False
            at = np.nonzero(ok)[0]
            if at.size == 0:
                break
            best, _ = _exact_best(state, state.cells, state.identity, sc, at, 0.0, prefer, key)
            nxt = _State(rows, state.terms + [best], binary, n_cand, start=np.append(state.cells.fit.beta, 0.0),
                         before=state, bar=bar)
            if len(nxt.cells) > MAX_CELLS:
                cut = "their overlaps cut the rows into too many cells to test in"
                break
            state = nxt
        # backward: the terms' tests given the others, where the full model's Wald test does not
        # already put them well past the bar (a term's test is the score test given the others)
        while state.terms:
            k = len(state.terms)
            z = _backward_z(state, bar(k))
            short = z - bar(k)
            worst = int(np.argmin(short))
            if short[worst] >= 0:
                break
            state = _State(rows, [f for i, f in enumerate(state.terms) if i != worst], binary, n_cand, own,
                           start=np.delete(state.cells.fit.beta, worst + 1), bar=bar)
        now = tuple(sorted(state.terms))
        if now in seen or cut or over() or not state.terms:
            break
        seen.add(now)
        # exchange: each term's best swap that raises the likelihood; the swaps of different terms
        # taken together when the model they make fits at least as well as the best one alone
        swaps = []
        for i, f in enumerate(state.terms):
            if over():
                cut = "the work it was given, about what the scan did, ran out"
                break
            cells, where, sc = state.others(i)
            mine = own_gain(state, i)
            room = sc.free.copy()
            room[state.terms] = False
            at = np.nonzero(room & (sc.gain > mine - (SWAP_SLACK if binary else 0.0)))[0]
            if at.size == 0:
                continue
            x, gain = _exact_best(state, cells, where, sc, at, 0.0, prefer, key, SWAP_TOP)
            rise = gain - mine
            if rise > 1e-7 * max(1.0, mine):
                swaps.append((-rise, i, x))
        if not swaps:
            break
        swaps.sort()
        chosen, taken = [], set()
        for _, i, x in swaps:
            if x not in taken:
                chosen.append((i, x))
                taken.add(x)
        state = _swapped(state, chosen[:1]) if len(chosen) == 1 else _together(state, chosen, -swaps[0][0])
    return state, cut


#: a term whose Wald z in the full model passes the bar by this much is not tested given the others
#: in a backward step of a state the exchange does not visit (the exchange tests every term)
WALD_MARGIN = 1.5


def _backward_z(state: _State, bar: float) -> np.ndarray:
    """Each term's |z| given the others: the score test of the model without it, computed for the
    terms whose Wald z in the full model comes within :data:`WALD_MARGIN` of ``bar`` and for every
    term whose model without it is already at hand; the others read their Wald z."""
    wald = np.abs(_wald(state))
    z = np.empty(len(state.terms))
    for i, f in enumerate(state.terms):
        if i in state._others or not wald[i] >= bar + WALD_MARGIN:
            z[i] = abs(state.others(i)[2].z[f])
        else:
            z[i] = wald[i]
    return z


def _weights(fit) -> np.ndarray:
    """A real outcome's fit's cell weights (set by every Gaussian fit)."""
    assert fit.weight is not None
    return fit.weight


def _covariance(state: _State) -> np.ndarray:
    """The coefficients' covariance in the model of every term: the inverse information for a 0/1
    outcome, the sandwich for a real one (each cell's own residuals, weighted as in the fit)."""
    fit, X = state.cells.fit, state.cells.X
    if state.binary:
        return fit.hinv
    m = X.T @ (X * (_weights(fit) ** 2 * fit.sandwich_resid(state.cells.tot[:, 0]))[:, None])
    return fit.hinv @ m @ fit.hinv


def _wald(state: _State) -> np.ndarray:
    """Each term's Wald z in the model of every term."""
    se = np.sqrt(np.maximum(np.diag(_covariance(state))[1:], 1e-300))
    return state.cells.fit.beta[1:] / se


def _swapped(state: _State, swaps: list) -> _State:
    """The state with each ``(i, x)`` of ``swaps``: candidate x in the i-th term's place."""
    terms = list(state.terms)
    beta = state.cells.fit.beta.copy()
    for i, x in swaps:
        terms[i] = x
        beta[i + 1] = 0.0
    return _State(state.rows, terms, state.binary, state.n_cand, start=beta, bar=state.bar)


def _together(state: _State, swaps: list, best_rise: float) -> _State:
    """The state with every swap of ``swaps`` (best first) when it fits at least as well as the
    first alone would (its log-likelihood rise, ``best_rise``, exact for a 0/1 outcome), else
    with the first alone."""
    every = _swapped(state, swaps)
    if every.ll >= state.ll + (best_rise if state.binary else 0.0) - 1e-9 * max(1.0, abs(state.ll)):
        return every
    return _swapped(state, swaps[:1])


def own_gain(state: _State, i: int) -> float:
    """What the i-th term adds to the model of the others: the log-likelihood it raises (0/1
    outcome), its score statistic's half with each cell's own variance (real outcome)."""
    cells, _, sc = state.others(i)
    if state.binary:
        return state.ll - cells.fit.ll
    return float(sc.gain[state.terms[i]])


def describe(state: _State, key: np.ndarray, level: float) -> tuple[dict, dict]:
    """For the terms of ``state``: their tied names (term → candidate positions, best first) and each
    term's effect given the others ``(effect, low, high)`` at ``level`` (a rate difference for a 0/1
    outcome: the term's rows' fitted rate minus the rate the model gives them without it)."""
    terms = state.terms
    ties: dict = {}
    for i, f in enumerate(terms):
        cells, where, sc = state.others(i)
        room = sc.free.copy()
        room[terms] = False
        mine = own_gain(state, i)
        slack = 1.0 + 0.25 * TIE if state.binary else 0.0
        at = np.nonzero(room & (sc.gain >= mine - TIE - slack))[0]
        if at.size:
            at = at[np.argsort(-sc.gain[at], kind="stable")[:TIES_TRIED]]
            gain = np.array([state.ll_with(cells, where, int(x)) - cells.fit.ll if state.binary else sc.gain[x]
                             for x in at])
            tied = gain >= mine - TIE
            at, gain = at[tied], gain[tied]
            ties[f] = [int(x) for x in at[np.lexsort((key[at], -gain))]]
    return ties, _effects(state, level) if terms else {}


def explain(cells: Cells, c: np.ndarray, lab: np.ndarray, t: np.ndarray, z_own: np.ndarray,
            rows: np.ndarray | None = None) -> np.ndarray:
    """Per candidate (from its entries in the terms' cells), the term that would explain it (-1:
    none): of the terms' parts of its divergence in the model (a term's coefficient times the share
    of the candidate's rows it holds, less its share of all rows) the largest on its own side is that
    term's. It explains the candidate when the candidate's test given every term no longer passes
    the scan's own bar (the caller's to read). ``rows``: each candidate's rows and its rows in each
    term when the score tests summed them (else from the entries)."""
    n_cand = z_own.size
    out = np.full(n_cand, -1, dtype=np.int64)
    k = cells.k
    if k == 0:
        return out
    bits = cells.X[:, 1:]
    if rows is None:
        n = np.bincount(c, weights=t[:, 0], minlength=n_cand)
        share = _shares(c, lab, t[:, 0], bits, n_cand) / np.maximum(n, 1e-300)[:, None]
    else:
        n = rows[:, 0]
        share = rows[:, 1:] / np.maximum(n, 1e-300)[:, None]
    overall = (cells.tot[:, 0] @ bits) / max(float(cells.tot[:, 0].sum()), 1e-300)
    part = np.sign(z_own)[:, None] * cells.fit.beta[1:][None, :] * (share - overall[None, :])
    by = np.argmax(part, axis=1)
    ok = part[np.arange(n_cand), by] > 0
    out[ok] = by[ok]
    return out


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -700.0, 700.0)))


def _effects(state: _State, level: float) -> dict:
    """Each term's effect given the other terms, with its interval at ``level``: a real outcome's
    coefficient (the sandwich variance, each cell's own); a 0/1 outcome's, as the difference its
    rows' fitted rate makes (the log-odds coefficient's interval carried over)."""
    cells = state.cells
    fit = cells.fit
    X = cells.X
    zq = z_two_sided(1.0 - level)
    out = {}
    cov = _covariance(state)
    eta = X @ fit.beta
    n = cells.tot[:, 0]
    for i, f in enumerate(state.terms):
        b = float(fit.beta[i + 1])
        se = math.sqrt(max(float(cov[i + 1, i + 1]), 0.0))
        if not state.binary:
            out[f] = (b, b - zq * se, b + zq * se)
            continue
        inside = X[:, i + 1] > 0.5
        w = n[inside]

        def ame(beta_i: float) -> float:
            e = eta[inside]
            with_ = _expit(e - b + beta_i)
            without = _expit(e - b)
            return float((w * (with_ - without)).sum() / max(w.sum(), 1e-300))

        out[f] = (ame(b), ame(b - zq * se), ame(b + zq * se))
    return out
