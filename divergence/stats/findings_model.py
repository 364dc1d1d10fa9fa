"""The model the distinct findings are the terms of: the per-row outcome over the distinct rows
(their tallies, identical rows merged) fitted by an intercept plus one indicator per chosen slice.

A 0/1 outcome is binomial (logistic: each term's coefficient a log-odds ratio); a real one is
Gaussian on the metric's own scale (least squares, one variance), the same per query for ranking
metrics. With only indicators of slices in the model, the fitted value is the same on every row of
a *cell* (a pattern of membership in the terms), so a fit reads the cells' tallies only.

Every candidate is tested given the terms by the score test, from its tallies in each cell: one
walk of the candidates' lattice over the distinct rows gives them all (:class:`Rows`), and the
test of a candidate given the terms but one reads the same entries, the cells merged. For a real
outcome the score test's variance is the sandwich one (each cell's own residual variance, a
candidate's rows in a cell taken as at least as variable as the cell), so that a cohort whose rows
vary more (a hard cohort's squared error) does not make its overlap look different; its likelihood
gain is exact (least squares). For a 0/1 outcome the score test is the model's (with the continuity
correction), and its gain the score statistic's half, made exact by refitting where it decides.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..mining.lattice import RowBits, by_complement, walk_label_entries, walk_label_entry_blocks, walk_order
from ..prepare.tallies import metric_columns
from .findings_kernel import binary_score_sums, fit_binary, sum_rows_by
from .stats import log_factorials, normal_quantile

__all__ = ["Rows", "Fit", "fit_cells", "Cells", "Scores", "scores", "fit_with", "candidate_cells", "distinct_rows", "by_cells",
           "z_two_sided", "small_counts", "MAX_CELLS", "MAX_TERMS", "VARIANCE_PRIOR", "SMALL_EXPECTED"]

#: most cells (patterns of membership in the terms): past it no term is added (the terms' overlaps
#: cut the rows into cells too many and too small to test in)
MAX_CELLS = 4096
#: most terms (each a bit of a row's pattern)
MAX_TERMS = 60
#: a 0/1 candidate expecting fewer events (or non-events) than this has its score test checked by
#: the binomial test (:func:`small_counts`)
SMALL_EXPECTED = 30.0
#: the bound of a 0/1 model's coefficients (a log-odds ratio: a rate of e^-40 is a rate of 0)
BOUND = 40.0
#: a 0/1 model's coefficient past this (a rate of e^-8 against its cells' others) that still steps
#: outwards by most of a unit runs off to infinity: it is set to the bound (40) at once
RUNS_OFF = 8.0
#: the longest Newton step of a 0/1 fit's coefficient (log-odds): a longer one is shortened along its
#: line (from no start, a coefficient of little information swung between the bounds and the fit
#: stopped 267 log-likelihood units short of its maximum on Adult)
MAX_STEP = 5.0
#: a real outcome's cell variance is its residual variance shrunk towards the pooled one as if by
#: this many rows at the pooled variance (a small cell's variance is not read alone)
VARIANCE_PRIOR = 10.0
#: a real outcome's residual variance below this share of its mean square (on the tallies' shifted
#: scale) is rounding: an outcome the terms explain exactly (a per-row rate scanned as the outcome)
#: would otherwise read every candidate's rounding-sized score over a variance of 0 as a |z| of 1e150
ROUNDING = 1e-12


def z_two_sided(p: float) -> float:
    """|Z| at which a two-sided normal test has p-value ``p``."""
    p = min(max(float(p), 1e-300), 1.0)
    return float(-normal_quantile(p / 2.0))


#: the last tables' distinct rows (:func:`distinct_rows`), shared by their metrics: (the codes array,
#: held weakly, its distinct rows and each row's place among them)
_DISTINCT_CACHE: list = []


def distinct_rows(codes) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, axis=0, return_inverse=True)``, the same rows in the same (lexicographic)
    order, from one integer key per row where the codes fit one (mixed radix): a sort of a million
    int64 keys instead of a million structured rows. Kept for the table's other metric."""
    u, inverse = _distinct(codes)
    return u, np.arange(u.shape[0]) if inverse is None else inverse


def _distinct(codes) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`distinct_rows`, with None for the inverse (and the codes themselves, not a copy) when the
    rows are already distinct and in order, as the in-memory miner hands them over: no sort, no index."""
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
                key *= radix[a]
                key += arr[:, a]
                key -= low[a]
            if bool(np.all(key[1:] > key[:-1])):
                out = (arr, None)
            else:
                _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
                out = (arr[first], inverse.reshape(-1))
            del key
    if out is None:
        u, inverse = np.unique(arr, axis=0, return_inverse=True)
        out = (u, inverse.reshape(-1))
    try:
        _DISTINCT_CACHE.insert(0, (weakref.ref(codes), out))
        del _DISTINCT_CACHE[2:]
    except TypeError:  # not an array that can be held weakly: not kept
        pass
    return out


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


#: rows read at once by :func:`_whole_numbers`
_WHOLE_BLOCK = 1 << 20


def _whole_numbers(w: np.ndarray) -> bool:
    """Whether every tally is a whole number and their sizes sum below 2^52 (sums of them are then
    exact in any order), a block of rows at a time (no copy of every row's tallies)."""
    total = 0.0
    for a in range(0, w.shape[0], _WHOLE_BLOCK):
        block = w[a:a + _WHOLE_BLOCK]
        if not np.all(block == np.rint(block)):
            return False
        total += float(np.abs(block).sum())
    return total < 2.0 ** 52


class Rows:
    """The distinct rows with a weight for metric ``k`` (their tallies: defined count, shifted sum,
    sum of squares) and the walk that tallies every candidate's rows per cell."""

    def __init__(self, table, cand: np.ndarray, k: int) -> None:
        # identical rows merged (an engine may hand over every row): the same findings from any engine
        codes, inverse = _distinct(table.lattice.distinct_codes)
        tallies = np.asarray(table.lattice.distinct_tallies, dtype=float)
        cols = list(metric_columns(k))
        if inverse is None:  # already distinct: the sums are the rows' own (+0.0 as a sum of zeros reads)
            # the rows where the metric is measured, taken at once (a copy of every row's three
            # tallies and then of the used ones was 400 MB at 10^7 distinct rows)
            used = tallies[:, cols[0]] > 0
            at = None if used.all() else np.flatnonzero(used)
            del used
            w = tallies[:, cols] if at is None else tallies[np.ix_(at, np.asarray(cols))]
            w += 0.0
            self.codes = np.ascontiguousarray(codes if at is None else codes[at])
            self.w = np.ascontiguousarray(w)
            del w, at
        else:
            merged = np.zeros((codes.shape[0], 3))
            np.add.at(merged, inverse.ravel(), tallies[:, cols])
            used = merged[:, 0] > 0
            if used.all():
                self.codes, self.w = np.ascontiguousarray(codes), merged
            else:
                self.codes = np.ascontiguousarray(codes[used])
                self.w = np.ascontiguousarray(merged[used])
        #: whether every row's tallies are whole numbers (a 0/1 outcome's counts): then a cell's
        #: entries less a part of them are exact, in any order
        self.whole_tallies = _whole_numbers(self.w)
        self.bits = RowBits(self.codes, table.codes)
        self._parent = np.asarray(table.lattice.parent)
        self._table_codes = np.asarray(table.codes)
        #: each slice's measured rows (the metric's count), which tell a walk what to sum from a parent
        self._size = np.asarray(table.tallies)[:, cols[0]]
        self._members: dict = {}
        self._capacity = 0
        #: the work done: itemsets walked, rows read, entries written
        self.work = 0
        self._walk_for(np.asarray(cand, dtype=np.int64))

    def _walk_for(self, cand: np.ndarray) -> None:
        self.cand = cand
        self.cand_codes = self._table_codes[cand]
        parent = self._parent
        needed = _with_ancestors(parent, cand)
        remap = np.full(len(parent), -1, dtype=np.int64)
        remap[needed] = np.arange(needed.size)
        sub_parent = np.where(parent[needed] >= 0, remap[np.maximum(parent[needed], 0)], -1)
        self._walk = walk_order(sub_parent, self._table_codes[needed])
        self._slot = np.full(needed.size, -1, dtype=np.int64)
        self._slot[remap[cand]] = np.arange(cand.size)
        self._n_itemsets = int(needed.size)
        # with whole tallies a large slice's sums are its parent's less the rest's, exactly (over any
        # rows: the slices' sizes over every row only choose which way reads fewer)
        self._outside = by_complement(self._walk, self._slot, self._size[needed]) if self.whole_tallies else None

    def restricted(self, cand: np.ndarray) -> Rows:
        """The same rows, walking only the slices ``cand`` (table rows)."""
        out = Rows.__new__(Rows)
        out.__dict__.update(self.__dict__)
        out._members = {}
        out._capacity = 0
        out._walk_for(np.asarray(cand, dtype=np.int64))
        return out

    def mask_of(self, table_row: int) -> np.ndarray:
        """The rows of slice ``table_row`` (a mask over the distinct rows)."""
        c = self._table_codes[table_row]
        items = np.nonzero(c >= 0)[0]
        return np.all(self.codes[:, items] == c[items], axis=1) if items.size else np.ones(self.n, bool)

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    def member(self, position: int) -> np.ndarray:
        """Candidate ``position``'s rows (a mask over the distinct rows)."""
        got = self._members.get(position)
        if got is None:
            c = self.cand_codes[position]
            items = np.nonzero(c >= 0)[0]
            got = np.all(self.codes[:, items] == c[items], axis=1) if items.size else np.ones(self.n, bool)
            self._members[position] = got
        return got

    def walk_work(self, entries: int) -> int:
        """The work a walk of every candidate over every row that writes ``entries`` entries is charged."""
        return self._n_itemsets + self.n + int(entries)

    def entries(self, labels: np.ndarray, n_labels: int, rows: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidate position, label, tallies) for every candidate and label its rows hold: one
        walk of their lattice over every distinct row, or over ``rows`` (a mask) only (each
        candidate's entries consecutive)."""
        c, lab, t = walk_label_entries(self._walk, None, labels, self.w, n_labels, self._slot,
                                       self._capacity if rows is None else 0, bits=self.bits, rows=rows,
                                       outside=self._outside)
        if rows is None:
            self._capacity = max(self._capacity, int(c.size))
        self.work += self._n_itemsets + (self.n if rows is None else int(np.count_nonzero(rows))) + int(c.size)
        keep = t[:, 0] > 0.5
        if not keep.all():
            c, lab, t = c[keep], lab[keep], t[keep]
        return c, lab, t

    def entry_blocks(self, labels: np.ndarray, n_labels: int, block: int):
        """:meth:`entries` of every candidate over every distinct row, in blocks of about ``block``
        entries (each candidate's in one block): one walk, the entries held at once a block's. Each
        block's arrays are reused for the next (read each before asking for the next). The work is
        not charged here (the caller charges the walk's)."""
        for c, lab, t in walk_label_entry_blocks(self._walk, None, labels, self.w, n_labels, self._slot, block,
                                                 bits=self.bits, outside=self._outside):
            keep = t[:, 0] > 0.5
            yield (c, lab, t) if keep.all() else (c[keep], lab[keep], t[keep])


@dataclass(frozen=True)
class Fit:
    """A model fitted on cells: coefficients (intercept first), each cell's fitted value (a rate, or
    a mean on the shifted scale), the log-likelihood, the inverse information (binomial) or
    ``(X'NX)⁻¹`` (Gaussian), and (Gaussian) the residual sum of squares and each cell's."""

    beta: np.ndarray
    mu: np.ndarray
    ll: float
    hinv: np.ndarray
    rss: float = 0.0
    resid: np.ndarray | None = None
    #: (Gaussian) each cell's weight, the inverse of its variance
    weight: np.ndarray | None = None
    #: (Gaussian) the per-row variance below which a residual is rounding (:data:`ROUNDING`)
    floor: float = 0.0

    def sandwich_resid(self, n: np.ndarray) -> np.ndarray:
        """(Gaussian) each cell's residual sum of squares as the sandwich variance reads it: at least
        its ``n`` rows' rounding (:data:`ROUNDING`), so that a cell the terms explain exactly does
        not make a candidate's variance 0."""
        assert self.resid is not None
        return np.maximum(self.resid, n * self.floor)


def fit_cells(X: np.ndarray, n: np.ndarray, s: np.ndarray, q: np.ndarray, binary: bool,
              start: np.ndarray | None = None, information: bool = True) -> Fit:
    """The model with design ``X`` (cells x terms, the intercept first) on the cells' tallies.
    ``start``: coefficients to start a 0/1 fit from (a related model's: the same maximum, reached
    in a few steps instead of tens when a coefficient runs off towards a cell without events);
    ``information``: whether a 0/1 fit's inverse information is wanted (a refit read for its
    log-likelihood alone has an empty one)."""
    keep = n > 0.5
    if not keep.all():
        X, n, s, q = X[keep], n[keep], s[keep], q[keep]
    p = X.shape[1]
    ridge = 1e-9 * np.eye(p)
    if not binary:
        # weighted least squares, each cell weighted by the inverse of its own residual variance
        # (shrunk towards the pooled one by VARIANCE_PRIOR rows), refitted until the weights settle
        weight = np.ones(n.size)
        floor = ROUNDING * float(q.sum()) / max(float(n.sum()), 1.0)
        for _ in range(4):
            h = X.T @ (X * (n * weight)[:, None]) + ridge * max(float((n * weight).sum()), 1e-300)
            hinv = np.linalg.pinv(h)
            beta = hinv @ (X.T @ (s * weight))
            mu = X @ beta
            resid = np.maximum(q - 2.0 * mu * s + n * mu * mu, 0.0)
            pooled = max(float(resid.sum()) / max(float(n.sum()), 1.0), floor, 1e-300)
            new = 1.0 / np.maximum((resid + VARIANCE_PRIOR * pooled) / (n + VARIANCE_PRIOR), max(floor, 1e-300))
            if np.allclose(new, weight, rtol=1e-3):
                break
            weight = new
        var = 1.0 / weight
        ll = float(-0.5 * (n * np.log(2.0 * math.pi * var) + resid / var).sum())
        return Fit(beta, mu, ll, hinv, float(resid.sum()), resid, weight, floor)
    events = np.clip(np.rint(s), 0.0, n)
    # Newton's method with a halving line search, compiled (findings_kernel.fit_binary): a fit of a few
    # cells and terms is a few microseconds there, against half a millisecond of numpy calls
    beta = np.zeros(p)
    use = start is not None and start.shape == beta.shape
    ll = fit_binary(np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(n, dtype=np.float64), events,
                    np.ascontiguousarray(start if use else beta, dtype=np.float64), int(use), beta,
                    BOUND, RUNS_OFF, MAX_STEP)
    eta = X @ beta
    mu = 1.0 / (1.0 + np.exp(-np.clip(eta, -700.0, 700.0)))
    if not information:
        return Fit(beta, mu, ll, np.empty((0, 0)))
    h = X.T @ (X * (n * mu * (1.0 - mu))[:, None]) + ridge
    return Fit(beta, mu, ll, np.linalg.pinv(h))


class Cells:
    """The cells of a set of terms on the distinct rows: each row's cell (``label``), the cells'
    patterns of membership (``uniq``: bits, one column per term), their tallies, the design and the
    model's fit. A model without one of a search's terms (:meth:`without`) has no ``label`` (None):
    its fit and its tests read the cells' tallies only, and each row's cell is 80 MB at 10^7 rows."""

    def __init__(self, rows: Rows, terms: list, binary: bool, start: np.ndarray | None = None) -> None:
        if not terms:  # one cell (np.unique's answer without sorting every row's 0)
            self._init(np.zeros(1, dtype=np.int64), np.zeros(rows.n, dtype=np.int64), rows.w, 0, binary, start)
            return
        pattern = np.zeros(rows.n, dtype=np.int64)
        for i, t in enumerate(terms):
            pattern |= rows.member(t).astype(np.int64) << i
        uniq, label = np.unique(pattern, return_inverse=True)
        del pattern
        self._init(uniq, label.ravel(), rows.w, len(terms), binary, start)

    def _init(self, uniq, label, w, k, binary, start=None, tot=None) -> None:
        self.uniq, self.label, self.k, self.binary = uniq, label, k, binary
        h = uniq.size
        self.tot = np.column_stack([np.bincount(label, weights=w[:, j], minlength=h) for j in range(3)]) \
            if tot is None else tot
        self.X = np.column_stack([np.ones(h)] + [((uniq >> i) & 1).astype(float) for i in range(k)])
        self.fit = fit_cells(self.X, self.tot[:, 0], self.tot[:, 1], self.tot[:, 2], binary, start)
        self.mu = self.X @ self.fit.beta if not binary else 1.0 / (1.0 + np.exp(-np.clip(self.X @ self.fit.beta, -700.0, 700.0)))

    def adding(self, inside: np.ndarray, w: np.ndarray, start: np.ndarray | None = None) -> Cells:
        """The cells of these terms and one more, whose rows are ``inside`` (a mask): each cell split
        in its rows out of the term and in it. The same cells, in the same order, as building them
        from every term's rows: the new term's bit is above the others', so the cells out of it come
        first, each part in its old cell's order (no sort of the rows' patterns)."""
        h, k = len(self), self.k
        key = inside.astype(np.int64)  # each row's cell among the 2h, in place (a row's array is 80 MB at 10^7)
        key *= h
        key += self.label
        present = np.bincount(key, minlength=2 * h) > 0
        label = (np.cumsum(present) - 1)[key]
        del key
        uniq = np.concatenate([self.uniq[present[:h]], self.uniq[present[h:]] | (np.int64(1) << k)])
        out = Cells.__new__(Cells)
        out._init(uniq, label, w, k + 1, self.binary, start)
        return out

    def __len__(self) -> int:
        return int(self.uniq.size)

    def without(self, i: int, w: np.ndarray, whole: bool = False) -> tuple[Cells, np.ndarray]:
        """The cells of the terms but the i-th, and each of these cells' place among them. ``whole``:
        the rows' tallies are whole numbers, so the merged cells' tallies are these cells' summed (the
        same sums in any order) rather than their rows' again."""
        low = (np.int64(1) << i) - 1
        merge = lambda p: (p & low) | ((p >> (i + 1)) << i)  # noqa: E731
        uniq, where = np.unique(merge(self.uniq), return_inverse=True)
        where = where.ravel()
        if whole:
            tot = np.column_stack([np.bincount(where, weights=self.tot[:, j], minlength=uniq.size) for j in range(3)])
        else:
            label = where[self.label]
            tot = np.column_stack([np.bincount(label, weights=w[:, j], minlength=uniq.size) for j in range(3)])
            del label
        out = Cells.__new__(Cells)
        out._init(uniq, None, w, self.k - 1, self.binary, np.delete(self.fit.beta, i + 1), tot)
        return out, where


@dataclass(frozen=True)
class Scores:
    """Each candidate's score test given a model: signed z (the bar's test), the likelihood gain of
    adding it (the score statistic's half: for a 0/1 outcome made exact by refitting where it
    decides; for a real one with each cell's own variance), and whether the model leaves it anything
    to add (not a combination of the terms)."""

    z: np.ndarray
    gain: np.ndarray
    free: np.ndarray


def scores(cells: Cells, cell_of: np.ndarray, c: np.ndarray, lab: np.ndarray, t: np.ndarray, n_cand: int,
           checked: np.ndarray | None = None, floor: float = 0.0, rows: np.ndarray | None = None,
           counts: np.ndarray | None = None) -> Scores:
    """The score tests of every candidate given the model of ``cells``, from the candidates'
    entries (``c``, ``lab``, tallies ``t``) whose labels ``cell_of`` maps to these cells.
    ``checked``: the candidates whose z is read (a mask; all when None): only theirs are checked
    by the binomial test where few events are expected (the others' gains are read, not their z);
    ``floor``: a |z| below which only the sign is read (those are not checked either); ``rows``
    (a 0/1 outcome's; candidates x 1 + terms): filled with each candidate's rows, then its rows in
    each term (:func:`explain` reads them), in the same pass; ``counts`` (a 0/1 outcome's; candidates
    x 3): filled with each candidate's rows, events and expected events (:func:`small_counts` reads
    them: a caller that checks the small candidates itself, later, passes ``floor`` infinite)."""
    h = cell_of[lab]
    X, mu, fit = cells.X, cells.mu, cells.fit
    N = cells.tot[:, 0]
    if cells.binary:
        sums = np.zeros((n_cand, 6))
        a = np.zeros((n_cand, X.shape[1]))
        rows_by = np.zeros((0, 0)) if rows is None else np.zeros((n_cand, X.shape[1] - 1))
        binary_score_sums(np.ascontiguousarray(c, dtype=np.int64), np.ascontiguousarray(h, dtype=np.int64),
                          np.ascontiguousarray(t, dtype=np.float64), np.ascontiguousarray(mu, dtype=np.float64),
                          np.ascontiguousarray(mu * (1.0 - mu)), np.ascontiguousarray(X, dtype=np.float64),
                          np.ascontiguousarray(N, dtype=np.float64), sums, a, rows_by)
        if rows is not None:
            rows[:, 0] = sums[:, 0]
            rows[:, 1:] = rows_by
        n, events, expected, u, icc = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3], sums[:, 4]
        if counts is not None:
            counts[:] = sums[:, :3]
        # a candidate made of whole cells (the rows of some terms and not others: an intersection of
        # findings) is the findings' own rows: no term of its own
        whole = sums[:, 5] == 0
        var = icc - _quadratic(a, fit.hinv)
        del a
        free = (var > 1e-9 * np.maximum(icc, 1e-12)) & ~whole
        var = np.where(free, var, 1.0)
        uc = np.sign(u) * np.maximum(np.abs(u) - 0.5, 0.0)
        z = np.where(free, uc / np.sqrt(var), 0.0)
        gain = np.where(free, 0.5 * u * u / var, 0.0)
        read = (free if checked is None else free & checked) & (np.abs(z) >= floor)
        return Scores(small_counts(z, read, n, events, expected), gain, free)
    n_e, s_e, q_e = t[:, 0], t[:, 1], t[:, 2]

    def per_cand(weights):
        return np.bincount(c, weights=weights, minlength=n_cand)

    seen = np.bincount(c, minlength=n_cand) > 0
    present = np.flatnonzero(seen)
    compact = (np.cumsum(seen) - 1)[c]

    def per_cand_design(weights):  # candidates x terms: the weights times each term's column, summed
        out = np.zeros((n_cand, X.shape[1]))
        out[present] = by_cells(compact, h, weights, present.size, X)
        return out

    # a candidate made of whole cells (the rows of some terms and not others: an intersection of
    # findings) is the findings' own rows: no term of its own
    whole = per_cand((n_e < N[h] - 0.5).astype(float)) == 0

    assert fit.weight is not None  # a real outcome's fit is weighted
    om = fit.weight
    u = per_cand(om[h] * (s_e - n_e * mu[h]))
    wn = om[h] * n_e
    icc = per_cand(wn)
    a = per_cand_design(wn)
    var = icc - ((a @ fit.hinv) * a).sum(axis=1)
    free = (var > 1e-9 * np.maximum(icc, 1e-12)) & ~whole
    # the sandwich variance of the efficient score: a row of the candidate weighs ω(1 - a·x), another -ωa·x
    coef = a @ fit.hinv  # candidates x terms
    resid_cell = fit.sandwich_resid(N)
    m = X.T @ (X * (om * om * resid_cell)[:, None])
    t_e = np.einsum("ij,ij->i", coef[c], X[h])
    own = np.maximum(q_e - 2.0 * mu[h] * s_e + n_e * mu[h] ** 2, 0.0)
    guarded = np.maximum(own, n_e * resid_cell[h] / np.maximum(N[h], 1.0))  # at least the cell's variance
    vrob = ((coef @ m) * coef).sum(axis=1) + per_cand(om[h] ** 2 * ((1.0 - t_e) ** 2 * guarded
                                                                             - t_e ** 2 * own))
    vrob = np.maximum(vrob, 1e-300)
    z = np.where(free, u / np.sqrt(vrob), 0.0)
    # the gain read with each cell's own variance (the sandwich score statistic's half): one variance
    # for every row would let a noisy cohort's lucky parts outweigh a defect on quiet rows
    return Scores(z, 0.5 * z * z, free)


#: candidates whose quadratic form is taken at once (:func:`_quadratic`)
_QUADRATIC_BLOCK = 8192


def _quadratic(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Each row's ``a_i' M a_i``, a block of rows at a time (the products of every candidate at
    once held two more candidates-by-terms arrays: 24 MB on Adult)."""
    out = np.empty(a.shape[0])
    for i in range(0, a.shape[0], _QUADRATIC_BLOCK):
        block = a[i:i + _QUADRATIC_BLOCK]
        out[i:i + _QUADRATIC_BLOCK] = ((block @ m) * block).sum(axis=1)
    return out


def by_cells(c: np.ndarray, h: np.ndarray, weights: np.ndarray, n_cand: int, M: np.ndarray) -> np.ndarray:
    """Per candidate, its entries' weights times their cells' rows of ``M`` (cells x columns),
    summed: one pass over the entries (no candidates-by-cells block)."""
    out = np.zeros((n_cand, M.shape[1]))
    if np.size(c):
        sum_rows_by(np.ascontiguousarray(c, dtype=np.int64), np.ascontiguousarray(h, dtype=np.int64),
                    np.ascontiguousarray(weights, dtype=np.float64), np.ascontiguousarray(M, dtype=np.float64), out)
    return out


def small_counts(z: np.ndarray, free: np.ndarray, n: np.ndarray, events: np.ndarray, expected: np.ndarray
                 ) -> np.ndarray:
    """The score z of a 0/1 candidate with few expected events (or non-events), taken no larger
    than the binomial test's of its events against those the model expects on its rows: the normal
    approximation overstates a small slice's upper tail (as Fisher's test corrects the scan's own)."""
    small = free & (np.minimum(expected, n - expected) < SMALL_EXPECTED) & (np.abs(z) > 2.0)
    if not small.any():
        return z
    at = np.nonzero(small)[0]
    nn = np.rint(n[at])
    p_exact = _binomial_p_many(np.rint(events[at]), nn, expected[at] / np.maximum(n[at], 1e-300))
    # the exact test caps |z| only where it is the weaker: its p-value above the normal one of |z|,
    # its z below |z| (compared as z-values: the p-values of the normal one are not computed, except
    # past the quantile's range, below 1e-300, where they are compared as p-values)
    exact = -normal_quantile(np.clip(p_exact, 1e-300, 1.0) / 2.0)
    weaker = exact < np.abs(z[at])
    tiny = np.nonzero(p_exact < 1e-300)[0]
    if tiny.size:
        weaker[tiny] = p_exact[tiny] > np.array([math.erfc(abs(float(v)) / math.sqrt(2.0)) for v in z[at[tiny]]])
    out = z.copy()
    if weaker.any():
        j = at[weaker]
        out[j] = np.sign(z[j]) * np.minimum(np.abs(z[j]), exact[weaker])
    return out


#: the terms of a binomial tail summed per pass (:func:`_binomial_p_many`)
_TAIL_BLOCK = 16


#: the tests :func:`_binomial_p_many` works on at once (each test's terms are its own: the same
#: p-values in any grouping; a bound on the blocks of terms held)
_TESTS_AT_ONCE = 4096


def _binomial_p_many(x: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """:func:`_binomial_p` of many tests at once: each tail's terms from its first, in blocks of
    :data:`_TAIL_BLOCK`, each term the last times the pmf's ratio, until the terms no longer count."""
    if np.size(x) > _TESTS_AT_ONCE:
        x, n, p = np.asarray(x), np.asarray(n), np.asarray(p)
        return np.concatenate([_binomial_p_many(x[i:i + _TESTS_AT_ONCE], n[i:i + _TESTS_AT_ONCE],
                                                p[i:i + _TESTS_AT_ONCE]) for i in range(0, x.size, _TESTS_AT_ONCE)])
    x, n = np.asarray(x, dtype=float), np.asarray(n, dtype=float)
    p = np.clip(np.asarray(p, dtype=float), 1e-12, 1.0 - 1e-12)
    lp, lq = np.log(p), np.log1p(-p)
    table = log_factorials(int(n.max(initial=0.0))) if np.all(n == np.rint(n)) and np.all(n >= 0) else None
    if table is not None:  # whole counts: math.lgamma's own values, looked up (the same bits)
        xi, ni = x.astype(np.int64), n.astype(np.int64)
        log_choose = table[ni] - table[xi] - table[ni - xi]
    else:
        log_choose = np.array([math.lgamma(b + 1) - math.lgamma(a + 1) - math.lgamma(b - a + 1)
                               for a, b in zip(x.tolist(), n.tolist())])
    first = log_choose + x * lp + (n - x) * lq
    up = x >= n * p
    tail = np.ones(x.size)  # the tail over its first term
    last = np.zeros(x.size)  # the log of the last term summed, over the first
    done = np.zeros(x.size, dtype=bool)
    d0 = 1
    while not done.all():
        act = np.nonzero(~done)[0]
        d = np.arange(d0, d0 + _TAIL_BLOCK, dtype=float)[None, :]
        xa, na, u = x[act, None], n[act, None], up[act, None]
        i = np.where(u, xa + d - 1.0, xa - d + 1.0)  # the term the ratio steps from
        valid = np.where(u, xa + d <= na, xa - d >= 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(u, np.log(na - i) - np.log(i + 1.0) + (lp - lq)[act, None],
                            np.log(i) - np.log(na - i + 1.0) + (lq - lp)[act, None])
        step = np.where(valid, step, -np.inf)
        logs = last[act, None] + np.cumsum(step, axis=1)
        terms = np.exp(logs)
        tail[act] += terms.sum(axis=1)
        last[act] = logs[:, -1]
        beyond = np.where(up[act], x[act] + d0 + _TAIL_BLOCK - 1 > n[act] * p[act],
                          x[act] - d0 - _TAIL_BLOCK + 1 < n[act] * p[act])
        finished = ~valid[:, -1] | ((terms[:, -1] < 1e-17 * tail[act]) & beyond)
        done[act[finished]] = True
        d0 += _TAIL_BLOCK
    return np.minimum(1.0, 2.0 * np.exp(first) * tail)


def _binomial_p(x: int, n: int, p: float) -> float:
    """The two-sided binomial test's p-value (twice the smaller tail, at most 1) of ``x`` events in
    ``n`` trials at rate ``p`` (no scipy for a scan of 0/1 outcomes)."""
    return float(_binomial_p_many(np.array([x]), np.array([n]), np.array([p]))[0])


def candidate_cells(cells: Cells, cell_of: np.ndarray, lab: np.ndarray, t: np.ndarray) -> np.ndarray:
    """One candidate's tallies in each of ``cells`` (from its entries ``lab``, ``t``)."""
    h = cell_of[lab]
    return np.column_stack([np.bincount(h, weights=t[:, j], minlength=len(cells)) for j in range(3)])


def fit_with(cells: Cells, inside: np.ndarray, information: bool = True) -> Fit:
    """The model of ``cells`` with one more term whose tallies in each cell are ``inside``
    (``information``: as :func:`fit_cells`)."""
    out = cells.tot - inside
    X = np.vstack([np.column_stack([cells.X, np.zeros(len(cells))]), np.column_stack([cells.X, np.ones(len(cells))])])
    tal = np.vstack([out, inside])
    first = 0.0
    if cells.binary:  # the new coefficient's one step from 0 (its score over its information)
        mu = cells.mu
        info = float((inside[:, 0] * mu * (1.0 - mu)).sum())
        if info > 1e-12:
            first = float(np.clip((np.rint(inside[:, 1]) - inside[:, 0] * mu).sum() / info, -5.0, 5.0))
    return fit_cells(X, tal[:, 0], tal[:, 1], tal[:, 2], cells.binary, np.append(cells.fit.beta, first), information)
