"""The distinct findings' residual tests over strata, compiled: per (candidate, stratum) entry the
Cochran–Mantel–Haenszel terms of a 0/1 outcome or the weighted mean differences of a real one
(:func:`strata_sums`, :func:`strata_sums_csr`), the pairwise z of candidates inside a finding
(:func:`pair_z`), and the entries' updates when a finding's rows leave their strata
(:func:`split_strata`, :func:`update_entries`). Read by :mod:`divergence.stats.findings`."""
from __future__ import annotations

import numpy as np

from ..kernels.compiled import b1, f8, i8, kernel

__all__ = ["strata_sums", "strata_sums_csr", "split_strata", "update_entries", "pair_z"]



@kernel
def _residual_term(n1, s1, q1, big_n, big_s, big_q, binary):
    """One entry's terms of the residual test (a candidate's tallies in a stratum, and the
    stratum's): 0/1 outcome, observed minus expected events and the hypergeometric variance
    (Cochran–Mantel–Haenszel); real outcome, w·(mean₁ − mean₀) and w²·(var₁/n₁ + var₀/n₀),
    w = n₁n₀/(n₁+n₀), var₁ at least var₀. (0, 0) where the stratum holds no other rows or the
    candidate none."""
    n0 = big_n - n1
    if not (n1 > 0.5 and n0 > 0.5):
        return 0.0, 0.0
    if binary:
        m = np.rint(big_s)
        expected = n1 * m / big_n
        var = n1 * n0 * m * (big_n - m) / (big_n * big_n * max(big_n - 1.0, 1.0))
        return np.rint(s1) - expected, var
    s0 = big_s - s1
    q0 = big_q - q1
    mean1 = s1 / n1
    mean0 = s0 / n0
    var0 = max(q0 - s0 * mean0, 0.0) / max(n0 - 1.0, 1.0)
    var1 = max(q1 - s1 * mean1, 0.0) / max(n1 - 1.0, 1.0) if n1 > 1.5 else 0.0
    if var1 != var1 or var1 < var0:  # fmax: the larger, NaN ignored
        var1 = var0
    w = n1 * n0 / (n1 + n0)
    return w * (mean1 - mean0), w * w * (var1 / n1 + var0 / n0)


@kernel(i8[::1], i8[::1], f8[:, ::1], f8[:, ::1], b1, f8[::1], f8[::1], f8[:, ::1])
def _strata_sums(cand, stratum, tallies, totals, binary, num, var, single):
    """Per candidate, the sums over its entries of the residual test's terms into ``num`` and
    ``var``; for a 0/1 outcome also, over the entries that inform the test (rows of the candidate
    and others in the stratum), their count, events, rows, stratum events and stratum rows
    (``single``, one stratum's own when the count is 1)."""
    for e in range(cand.shape[0]):
        c = cand[e]
        h = stratum[e]
        n1 = tallies[e, 0]
        big_n = totals[h, 0]
        a, b = _residual_term(n1, tallies[e, 1], tallies[e, 2], big_n, totals[h, 1], totals[h, 2], binary)
        num[c] += a
        var[c] += b
        if binary and n1 > 0.5 and big_n - n1 > 0.5:
            single[c, 0] += 1.0
            single[c, 1] += np.rint(tallies[e, 1])
            single[c, 2] += n1
            single[c, 3] += np.rint(totals[h, 1])
            single[c, 4] += big_n


def strata_sums(cand: np.ndarray, stratum: np.ndarray, tallies: np.ndarray, totals: np.ndarray, binary: bool,
                n_cand: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(num, var, single) of the residual tests of ``n_cand`` candidates from their entries
    (``cand``, ``stratum``, ``tallies``) and the strata's ``totals``; see :func:`_strata_sums`."""
    num = np.zeros(int(n_cand))
    var = np.zeros(int(n_cand))
    single = np.zeros((int(n_cand), 5))
    _strata_sums(np.ascontiguousarray(cand, dtype=np.int64), np.ascontiguousarray(stratum, dtype=np.int64),
                 np.ascontiguousarray(tallies, dtype=np.float64), np.ascontiguousarray(totals, dtype=np.float64),
                 bool(binary), num, var, single)
    return num, var, single


@kernel(i8[::1], i8[::1], f8[:, ::1], i8[::1], i8[::1], i8[::1], f8[:, ::1], f8[:, ::1])
def _inside_findings(cand, stratum, tallies, in_start, in_find, row_of, inside, own):
    """Per candidate (its output row ``row_of[cand]``, -1: not wanted), its tallies inside each
    finding (``inside[row, 3 * f + c]``, the entries whose stratum is in finding f: the findings
    of stratum h are ``in_find[in_start[h]:in_start[h + 1]]``) and in all (``own``)."""
    for e in range(cand.shape[0]):
        o = row_of[cand[e]]
        if o < 0:
            continue
        h = stratum[e]
        for c in range(3):
            own[o, c] += tallies[e, c]
        for u in range(in_start[h], in_start[h + 1]):
            f = in_find[u]
            for c in range(3):
                inside[o, 3 * f + c] += tallies[e, c]


@kernel(f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[::1], b1, f8[:, ::1])
def _pair_z(inside, own, f_totals, grand, binary, z):
    """Each candidate's residual statistic given each finding alone: its rows inside the finding
    against the finding's others, and outside against the rest outside (two strata)."""
    n_find = f_totals.shape[0]
    for o in range(inside.shape[0]):
        for f in range(n_find):
            n1 = inside[o, 3 * f]
            s1 = inside[o, 3 * f + 1]
            q1 = inside[o, 3 * f + 2]
            a, b = _residual_term(n1, s1, q1, f_totals[f, 0], f_totals[f, 1], f_totals[f, 2], binary)
            c, d = _residual_term(own[o, 0] - n1, own[o, 1] - s1, own[o, 2] - q1, grand[0] - f_totals[f, 0],
                                  grand[1] - f_totals[f, 1], grand[2] - f_totals[f, 2], binary)
            num = a + c
            var = max(b + d, 0.0)
            if binary:
                num = np.sign(num) * max(abs(num) - 0.5, 0.0)
            den = np.sqrt(var)
            z[o, f] = num / den if den > 1e-12 else 0.0


def pair_z(cand: np.ndarray, stratum: np.ndarray, tallies: np.ndarray, bits: np.ndarray, totals: np.ndarray,
           positions: np.ndarray, n_cand: int, binary: bool) -> np.ndarray:
    """For the candidates ``positions`` (rows of the output), the residual statistic given each
    finding alone (columns: the findings of ``bits``, strata x findings), from the entries under
    the strata of every finding (their ``totals``)."""
    bits = np.ascontiguousarray(bits, dtype=np.bool_)
    n_find = bits.shape[1]
    row_of = np.full(int(n_cand), -1, dtype=np.int64)
    row_of[positions] = np.arange(positions.size)
    inside = np.zeros((positions.size, 3 * n_find))
    own = np.zeros((positions.size, 3))
    in_h, in_find = np.nonzero(bits)  # each stratum's findings, in order
    in_start = np.zeros(bits.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(in_h, minlength=bits.shape[0]), out=in_start[1:])
    _inside_findings(np.ascontiguousarray(cand, dtype=np.int64), np.ascontiguousarray(stratum, dtype=np.int64),
                     np.ascontiguousarray(tallies, dtype=np.float64), in_start, in_find.astype(np.int64), row_of,
                     inside, own)
    totals = np.asarray(totals, dtype=np.float64)
    f_totals = np.ascontiguousarray(bits.T.astype(np.float64) @ totals)
    grand = np.ascontiguousarray(totals.sum(axis=0))
    z = np.zeros((positions.size, n_find))
    _pair_z(inside, own, f_totals, grand, bool(binary), z)
    return z


@kernel(i8[::1], i8[::1], i8[::1], f8[:, ::1], f8[:, ::1], b1, b1[::1], f8[::1], f8[::1], f8[:, ::1])
def _strata_sums_csr(beg, end, stratum, tallies, totals, binary, tracked, num, var, single):
    """:func:`_strata_sums` of entries held per candidate (candidate c's at ``beg[c]:end[c]``),
    for the ``tracked`` candidates (the others read 0)."""
    for c in range(beg.shape[0]):
        a0 = 0.0
        b0 = 0.0
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        s4 = 0.0
        if tracked[c]:
            for e in range(beg[c], end[c]):
                h = stratum[e]
                n1 = tallies[e, 0]
                big_n = totals[h, 0]
                a, b = _residual_term(n1, tallies[e, 1], tallies[e, 2], big_n, totals[h, 1], totals[h, 2], binary)
                a0 += a
                b0 += b
                if binary and n1 > 0.5 and big_n - n1 > 0.5:
                    s0 += 1.0
                    s1 += np.rint(tallies[e, 1])
                    s2 += n1
                    s3 += np.rint(totals[h, 1])
                    s4 += big_n
        num[c] = a0
        var[c] = b0
        single[c, 0] = s0
        single[c, 1] = s1
        single[c, 2] = s2
        single[c, 3] = s3
        single[c, 4] = s4


@kernel(i8[::1], i8[::1], i8[::1], f8[:, ::1], b1[::1], i8[::1], i8[::1], i8, i8[::1], i8[::1], i8[::1],
        f8[:, ::1], i8[::1], i8[::1], i8[::1], i8[::1], f8[:, ::1])
def _split_strata(beg, end, stratum, tallies, tracked, mode, old_index, h, w_beg, w_end, w_j, w_t, stamp, at,
                  out_start, out_stratum, out_tallies):
    """The entries once a finding's rows leave the strata ``old`` (``old_index[s]``: s's place
    among them, -1 for a stratum the finding has no row in) for new strata ``h + j``: per tracked
    candidate (the others lose their entries), ``mode`` 1 (it refines the finding) moves its
    entries there whole; mode 2 takes its rows in the finding (``w_j``/``w_t`` at
    ``w_start[c]:w_start[c + 1]``: the place j of their old stratum and their tallies) out of its
    entries into new ones, after its others, in the order of j; mode 0 keeps its entries. An
    entry left without rows is dropped. Entries are read at ``beg[c]:end[c]`` (``w_beg``/``w_end``
    for the walk's) and written in the order of the candidates (``out_start``). ``stamp``/``at``
    (one per j, stamp -1 at first): scratch. Returns the number of entries."""
    m = 0
    r = beg.shape[0]
    for c in range(r):
        out_start[c] = m
        if not tracked[c]:
            continue
        md = mode[c]
        if md == 2:
            for u in range(w_beg[c], w_end[c]):
                stamp[w_j[u]] = c
                at[w_j[u]] = u
            for e in range(beg[c], end[c]):
                s = stratum[e]
                j = old_index[s] if s < old_index.shape[0] else -1
                n1 = tallies[e, 0]
                t1 = tallies[e, 1]
                t2 = tallies[e, 2]
                if j >= 0 and stamp[j] == c:
                    u = at[j]
                    n1 -= w_t[u, 0]
                    t1 -= w_t[u, 1]
                    t2 -= w_t[u, 2]
                if n1 > 0.5:
                    out_stratum[m] = s
                    out_tallies[m, 0] = n1
                    out_tallies[m, 1] = t1
                    out_tallies[m, 2] = t2
                    m += 1
            # the new entries in the order of j (the walk lists them in the order it met them)
            first = m
            for u in range(w_beg[c], w_end[c]):
                if w_t[u, 0] > 0.5:
                    j = w_j[u]
                    k = m
                    while k > first and out_stratum[k - 1] > h + j:
                        out_stratum[k] = out_stratum[k - 1]
                        for q in range(3):
                            out_tallies[k, q] = out_tallies[k - 1, q]
                        k -= 1
                    out_stratum[k] = h + j
                    for q in range(3):
                        out_tallies[k, q] = w_t[u, q]
                    m += 1
        else:
            for e in range(beg[c], end[c]):
                s = stratum[e]
                j = old_index[s] if s < old_index.shape[0] else -1
                if md == 1 and j >= 0:
                    continue  # moved below, after the entries it keeps
                out_stratum[m] = s
                for q in range(3):
                    out_tallies[m, q] = tallies[e, q]
                m += 1
            if md == 1:
                for e in range(beg[c], end[c]):
                    s = stratum[e]
                    j = old_index[s] if s < old_index.shape[0] else -1
                    if j >= 0:
                        out_stratum[m] = h + j
                        for q in range(3):
                            out_tallies[m, q] = tallies[e, q]
                        m += 1
    out_start[r] = m
    return m


@kernel(i8[::1], i8[::1], i8[::1], f8[:, ::1], b1[::1], i8[::1], i8[::1], i8[::1], f8[:, ::1], i8[::1], i8[::1],
        f8[:, ::1], i8[::1], i8[::1], i8[::1], f8[:, ::1])
def _update_entries(beg, end, stratum, tallies, keep, w_beg, w_end, w_lab, w_t, ancestor, stamp, sub, out_start,
                    out_cand, out_stratum, out_tallies):
    """The entries of the candidates ``keep`` (candidate c's at ``beg[c]:end[c]``) under strata
    split since they were made: each candidate's tallies in the new strata (``w_lab``/``w_t`` at
    ``w_beg[c]:w_end[c]``, a walk over the rows whose stratum changed) leave the stratum they
    were split from (``ancestor[label]``) and become entries of their own, after the others. An
    entry left without rows is dropped. Written in the order of the candidates; returns the
    number of entries."""
    m = 0
    r = beg.shape[0]
    for c in range(r):
        out_start[c] = m
        if not keep[c]:
            continue
        for u in range(w_beg[c], w_end[c]):
            a = ancestor[w_lab[u]]
            if stamp[a] != c:
                stamp[a] = c
                for q in range(3):
                    sub[a, q] = 0.0
            for q in range(3):
                sub[a, q] += w_t[u, q]
        for e in range(beg[c], end[c]):
            s = stratum[e]
            n1 = tallies[e, 0]
            t1 = tallies[e, 1]
            t2 = tallies[e, 2]
            if stamp[s] == c:
                n1 -= sub[s, 0]
                t1 -= sub[s, 1]
                t2 -= sub[s, 2]
            if n1 > 0.5:
                out_cand[m] = c
                out_stratum[m] = s
                out_tallies[m, 0] = n1
                out_tallies[m, 1] = t1
                out_tallies[m, 2] = t2
                m += 1
        for u in range(w_beg[c], w_end[c]):
            if w_t[u, 0] > 0.5:
                out_cand[m] = c
                out_stratum[m] = w_lab[u]
                for q in range(3):
                    out_tallies[m, q] = w_t[u, q]
                m += 1
    out_start[r] = m
    return m


def strata_sums_csr(beg: np.ndarray, end: np.ndarray, stratum: np.ndarray, tallies: np.ndarray, totals: np.ndarray,
                    binary: bool, tracked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`strata_sums` of entries held per candidate (``beg[c]:end[c]``), the ``tracked`` ones."""
    r = beg.size
    num, var, single = np.zeros(r), np.zeros(r), np.zeros((r, 5))
    _strata_sums_csr(beg, end, stratum, tallies, totals, bool(binary), tracked, num, var, single)
    return num, var, single


def split_strata(beg: np.ndarray, end: np.ndarray, stratum: np.ndarray, tallies: np.ndarray, tracked: np.ndarray,
                 mode: np.ndarray, old_index: np.ndarray, h: int, w_beg: np.ndarray, w_end: np.ndarray,
                 w_j: np.ndarray, w_t: np.ndarray, stamp: np.ndarray, at: np.ndarray, out_start: np.ndarray,
                 out_stratum: np.ndarray, out_tallies: np.ndarray) -> int:
    """:func:`_split_strata` (a finding's rows leave their strata; the arguments are its): the
    number of entries written into ``out_start``/``out_stratum``/``out_tallies``."""
    return int(_split_strata(beg, end, stratum, tallies, tracked, mode, old_index, int(h), w_beg, w_end, w_j, w_t,
                             stamp, at, out_start, out_stratum, out_tallies))


def update_entries(beg: np.ndarray, end: np.ndarray, stratum: np.ndarray, tallies: np.ndarray, keep: np.ndarray,
                   w_beg: np.ndarray, w_end: np.ndarray, w_lab: np.ndarray, w_t: np.ndarray, ancestor: np.ndarray,
                   stamp: np.ndarray, sub: np.ndarray, out_start: np.ndarray, out_cand: np.ndarray,
                   out_stratum: np.ndarray, out_tallies: np.ndarray) -> int:
    """:func:`_update_entries` (entries under strata split since; the arguments are its): the
    number of entries written into ``out_start``/``out_cand``/``out_stratum``/``out_tallies``."""
    return int(_update_entries(beg, end, stratum, tallies, keep, w_beg, w_end, w_lab, w_t, ancestor, stamp, sub,
                               out_start, out_cand, out_stratum, out_tallies))
