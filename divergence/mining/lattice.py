"""Walks over the mined lattice with per-row data: each itemset's rows are its parent's rows
filtered by one item, so a depth-first walk visits every itemset at the cost of its parent's
size. Used for what additive tallies cannot give: tallies of a second table (replication) or of
bootstrap weights per distinct row, and the references behind the verdict.

Each walk is a compiled kernel that resumes where it stopped: the driver (:func:`_walk`) calls it
for a quota of work at a time (a few milliseconds), keeping the rows of the current path in an
arena between calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.compiled import b1, f4, f8, i4, i8, kernel
from ..prepare.tallies import BOOT_BLOCKS

__all__ = ["Walk", "walk_order", "walk_tallies", "walk_label_tallies", "walk_label_entries", "RowBits", "strata_sums", "strata_sums_csr", "split_strata", "update_entries", "pair_z", "walk_verdict", "walk_boot_means", "VERDICT_COLUMNS", "QUOTA"]

#: work units (rows visited, times the columns read) per kernel call: a few milliseconds
QUOTA = 1_000_000
#: columns of :func:`walk_verdict`'s output: per itemset its defined rows, mean error, constant
#: baseline's error, achievable error (any reference) and which reference, the best model-free
#: reference's error and which; then sums over its rows of products of a row's baseline error
#: (beta), model error (err), chosen reference's error (ref) and best model-free reference's error
#: (free), and of the whole dataset's chosen reference's error of the same row (ref0)
VERDICT_COLUMNS = ("n", "error", "baseline", "achievable", "which", "free", "which_free",
                   "beta2", "beta_err", "err2", "ref2", "ref_err", "free2", "free_err",
                   "ref_ref0", "err_ref0", "ref0")


@dataclass(frozen=True)
class Walk:
    """A depth-first pre-order of the itemsets, with each one's last attribute, value and length."""

    order: np.ndarray  # int64
    last_attr: np.ndarray  # int64
    last_val: np.ndarray  # int64
    length: np.ndarray  # int64


def walk_order(parent: np.ndarray, codes: np.ndarray) -> Walk:
    """The walk of the itemsets: ``parent[i]`` is itemset i without its last item, ``codes`` their
    item codes (-1: no item on an attribute)."""
    n = len(parent)
    present = codes >= 0
    idx = np.arange(codes.shape[1])
    last_attr = np.where(present, idx, -1).max(axis=1) if codes.shape[1] else np.full(n, -1)
    last_val = np.where(last_attr >= 0, codes[np.arange(n), np.maximum(last_attr, 0)], -1)
    length = present.sum(axis=1)
    order = _preorder(np.ascontiguousarray(parent, dtype=np.int64))
    return Walk(order, last_attr.astype(np.int64), last_val.astype(np.int64), length.astype(np.int64))


def _arena(row_codes: np.ndarray, walk: Walk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of each depth's itemset (``arena[f_lo[d]:f_hi[d]]``), the root (every row) at depth 0."""
    n_rows = row_codes.shape[0]
    max_len = int(walk.length.max(initial=0))
    arena = np.empty(n_rows * (max_len + 1), dtype=np.int32)
    arena[:n_rows] = np.arange(n_rows, dtype=np.int32)
    f_lo = np.zeros(max_len + 2, dtype=np.int64)
    f_hi = np.zeros(max_len + 2, dtype=np.int64)
    f_hi[0] = n_rows
    return arena, f_lo, f_hi


def _walk(step, walk: Walk, row_codes: np.ndarray, *args) -> None:
    """Run a resumable walk kernel over every itemset, a quota of work per call; the kernel
    writes its results into the arrays in ``args``."""
    row_codes = np.asfortranarray(row_codes, dtype=np.int32)  # a row's attribute codes, column by column
    arena, f_lo, f_hi = _arena(row_codes, walk)
    k, n = 0, len(walk.order)
    while k < n:
        k = step(k, QUOTA, walk.order, walk.last_attr, walk.last_val, walk.length, row_codes, arena, f_lo, f_hi,
                 *args)


def walk_tallies(walk: Walk, row_codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per itemset, the sum of ``weights`` (rows x columns) over its rows, e.g. the rows of
    another table with the same bins (``row_codes``, rows x attributes, Fortran order)."""
    out = np.zeros((len(walk.order), weights.shape[1]), dtype=np.float64)
    _walk(_tallies_step, walk, row_codes, np.ascontiguousarray(weights, dtype=np.float64), out)
    return out


def walk_label_tallies(walk: Walk, row_codes: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                       n_labels: int, slot: np.ndarray, n_slots: int) -> np.ndarray:
    """Per itemset of interest and label, the sum of ``weights`` (rows x columns) over its rows of
    that label (``labels``, one per row, 0 to ``n_labels - 1``): ``out[slot[i], l, c]`` for each
    itemset i with ``slot[i] >= 0`` (the others are walked through, not kept). Each row adds only
    to its label's block, so the cost is that of :func:`walk_tallies` whatever the labels."""
    t = weights.shape[1]
    out = np.zeros((int(n_slots), int(n_labels) * t), dtype=np.float64)
    _walk(_label_tallies_step, walk, row_codes, np.ascontiguousarray(labels, dtype=np.int64),
          np.ascontiguousarray(weights, dtype=np.float64), np.ascontiguousarray(slot, dtype=np.int64), out)
    return out.reshape(int(n_slots), int(n_labels), t)


class RowBits:
    """The rows of a table (``row_codes``, rows x attributes) holding each item, as bitsets (row r
    is bit r % 64 of word r // 64): an itemset's rows are its parent's AND its last item's.
    ``items``: the item codes to hold, rows x attributes (-1: none), e.g. the itemsets walked;
    every item of the table when None."""

    def __init__(self, row_codes: np.ndarray, items: np.ndarray | None = None) -> None:
        row_codes = np.asarray(row_codes)
        self.n_rows, n_attr = row_codes.shape
        self.words = max((self.n_rows + 63) // 64, 1)
        src = row_codes if items is None else np.asarray(items)
        top = int(max(src.max(initial=0), row_codes.max(initial=0))) + 1
        #: the bitset of item (a, v): ``bits[index[a, v]]`` (-1: not held)
        self.index = np.full((max(n_attr, 1), top), -1, dtype=np.int64)
        rows = []
        for a in range(n_attr):
            for v in np.unique(src[:, a]):
                if v >= 0:
                    self.index[a, v] = len(rows)
                    rows.append(row_codes[:, a] == v)
        self.bits = np.zeros((max(len(rows), 1), self.words), dtype=np.int64)
        if rows:
            self.bits[:len(rows)] = self.of(np.asarray(rows))

    def of(self, mask: np.ndarray) -> np.ndarray:
        """Boolean row masks (the last axis: rows) as bitsets."""
        mask = np.asarray(mask, dtype=bool)
        padded = np.zeros(mask.shape[:-1] + (self.words * 64,), dtype=bool)
        padded[..., :mask.shape[-1]] = mask
        return np.packbits(padded, axis=-1, bitorder="little").view("<i8").astype(np.int64)


def walk_label_entries(walk: Walk, row_codes: np.ndarray | None, labels: np.ndarray, weights: np.ndarray,
                       n_labels: int, slot: np.ndarray, capacity: int = 0, bits: RowBits | None = None,
                       rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`walk_label_tallies` as entries: for each itemset i with ``slot[i] >= 0`` and each
    label its rows hold, ``(slot[i], label, sums of weights)``; only the labels present are kept,
    so the output is as large as the entries, not the itemsets times the labels. Each itemset's
    entries are consecutive, in the walk's order, its labels in the order of its first row of
    each. ``capacity``: the entries expected (a guess: the output grows past it); ``bits``: the
    rows' :class:`RowBits` (made from ``row_codes`` when None); ``rows``: a mask of the rows to
    walk (all when None; ``labels`` and ``weights`` are read for those only).

    An itemset's rows are a bitset, its parent's and its last item's (one AND per 64 rows):
    finding them costs little next to reading them, however many children a parent has."""
    if bits is None:
        bits = RowBits(row_codes)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    slot = np.ascontiguousarray(slot, dtype=np.int64)
    has = walk.length > 0
    item_of = np.full(walk.length.size, -1, dtype=np.int64)
    item_of[has] = bits.index[walk.last_attr[has], walk.last_val[has]]
    if (item_of[has] < 0).any():
        raise ValueError("an item of the walk has no bitset")
    stack = np.zeros((int(walk.length.max(initial=0)) + 1, bits.words), dtype=np.int64)
    stack[0] = bits.of(np.ones(bits.n_rows, dtype=bool) if rows is None else rows)
    t = weights.shape[1]
    scratch = np.zeros((max(int(n_labels), 1), t))
    stamp = np.full(max(int(n_labels), 1), -1, dtype=np.int64)  # the walk position that last touched a label
    touched = np.zeros(max(int(n_labels), 1), dtype=np.int64)
    cap = max(1024, 8 * int((slot >= 0).sum()), 2 * int(n_labels), int(capacity))
    out_c = np.empty(cap, dtype=np.int64)
    out_l = np.empty(cap, dtype=np.int64)
    out_t = np.empty((cap, t))
    count = np.zeros(1, dtype=np.int64)
    k, n = 0, len(walk.order)
    while k < n:
        if count[0] + int(n_labels) > out_c.size:  # room for one more itemset's labels
            grow = 4 * out_c.size + int(n_labels)
            out_c, out_l, out_t = _grown(out_c, grow, count[0]), _grown(out_l, grow, count[0]), \
                _grown(out_t, grow, count[0])
        k = _label_entries_step(k, QUOTA, walk.order, walk.length, item_of, bits.bits, stack, labels, weights, slot,
                                scratch, stamp, touched, out_c, out_l, out_t, count, _LOWEST_BIT)
    m = int(count[0])
    return out_c[:m], out_l[:m], out_t[:m]


#: de Bruijn's sequence for 64 bits: the place of a word's lowest set bit b is
#: ``_LOWEST_BIT[((b * _DE_BRUIJN) >> 58) & 63]`` (b the word with that bit alone)
_DE_BRUIJN = 0x03F79D71B4CB0A89
_LOWEST_BIT = np.zeros(64, dtype=np.int64)
for _b in range(64):
    _LOWEST_BIT[(((1 << _b) * _DE_BRUIJN) % (1 << 64)) >> 58] = _b
del _b


def _grown(a: np.ndarray, size: int, used: int) -> np.ndarray:
    """``a`` in a larger array (its first ``used`` rows kept, the rest uninitialised)."""
    out = np.empty((size,) + a.shape[1:], dtype=a.dtype)
    out[:used] = a[:used]
    return out


def walk_verdict(walk: Walk, row_codes: np.ndarray, item_codes: np.ndarray, n_values: np.ndarray, err: np.ndarray,
                 target: np.ndarray, pred: np.ndarray, kind: int) -> np.ndarray:
    """Per itemset (columns :data:`VERDICT_COLUMNS`), what tells a defect from a hard cohort (see ``divergence.assess``).

    ``err`` is the model's per-row error (NaN: undefined), ``target`` the true value and
    ``pred`` the model's prediction (its score for Brier); ``item_codes`` the itemsets' codes
    (-1: no item on an attribute) and ``n_values`` the items per attribute. ``kind`` is the
    slice baseline: 1 mean (squared error), 2 median (absolute error), 3 majority class (0/1
    error), 4 base rate (Brier). ``walk`` must visit the whole dataset (itemset 0) first.

    Per itemset: n; the mean error E; the constant baseline's error B (the slice's best
    constant); the achievable error A: the least mean error, leave-one-out (each row predicted
    from the slice's other rows), of three kinds of reference fitted within the slice: its best
    constant, the model with the slice's own offset removed (the median or mean residual; for
    0/1 error, each predicted class relabelled to its majority), and for each attribute the
    slice does not fix, one constant per item of that attribute (the mean target; the majority
    class for 0/1 error), with which reference it is (-2 constant, -1 offset, else the
    attribute); the least of those that do not use the model (the constant and the attributes'),
    with which; and the moment sums over the slice's rows that the delta method's variances
    need: of the squares and products of a row's baseline error, model error, chosen
    reference's and model-free reference's errors, and of the chosen reference's and model
    error with the whole dataset's chosen reference's error of the same row (the slice and the
    whole dataset overlap).

    Rows with an undefined error take no part, so they are dropped first. A 0/1 error walks
    the distinct rows (codes, class, prediction) with their counts: every number it gives is a
    count, so the walk is exact. The other kinds walk the rows, every sum in the rows' order.
    """
    err = np.asarray(err, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    defined = ~np.isnan(err)
    if not defined.all():
        row_codes, err, target, pred = row_codes[defined], err[defined], target[defined], pred[defined]
    row_codes = np.asfortranarray(row_codes, dtype=np.int32)
    item_codes = np.ascontiguousarray(item_codes, dtype=np.int64)
    n_values = np.ascontiguousarray(n_values, dtype=np.int64)
    out = np.full((len(walk.order), len(VERDICT_COLUMNS)), np.nan)
    if len(walk.order) and walk.order[0] != 0:
        raise ValueError("the verdict's walk must visit the whole dataset first")
    grouped = _distinct_01_rows(row_codes, err, target, pred) if int(kind) == 3 else None
    if grouped is not None:
        codes, weight, ye, pc = grouped
        _walk(_verdict_counts_step, walk, codes, item_codes, n_values, weight, ye, pc,
              np.full(len(weight), np.nan), out)
    else:
        _walk(_verdict_rows_step, walk, row_codes, item_codes, n_values, np.ascontiguousarray(err),
              np.ascontiguousarray(target), np.ascontiguousarray(pred), int(kind), np.full(row_codes.shape[0], np.nan),
              out)
    return out


def _distinct_01_rows(row_codes, err, target, pred):
    """Distinct rows of a 0/1 error: (codes, count, class * 2 + error, predicted class); None
    where the rows are not 0/1."""
    n, n_attr = row_codes.shape
    if n == 0 or not (np.isin(err, (0.0, 1.0)).all() and np.isin(target, (0.0, 1.0)).all()):
        return None
    ye = (2 * target + err).astype(np.int64)
    pc = ((pred - target) + target > 0.5).astype(np.int64)  # the offset reference's class, as per row
    radix = row_codes.max(axis=0).astype(np.int64) + 2 if n_attr else np.zeros(0, np.int64)
    if float(np.prod(radix.astype(float))) * 8.0 >= 2.0 ** 62:
        return None
    key = ye * 2 + pc
    for a in range(n_attr):
        key = key * radix[a] + (row_codes[:, a].astype(np.int64) + 1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    weight = np.bincount(inverse.reshape(-1), minlength=len(first)).astype(np.float64)
    return (np.asfortranarray(row_codes[first]), weight, np.ascontiguousarray(ye[first]),
            np.ascontiguousarray(pc[first]))


def walk_boot_means(walk: Walk, row_codes: np.ndarray, wanted: np.ndarray, weights: np.ndarray, replicates: int,
                    shifts: np.ndarray) -> np.ndarray:
    """Bootstrap means of the flagged itemsets, from per-row replicate sums.

    ``weights`` (float32: Poisson counts are exact up to 2**24) holds, per row (here: per
    distinct row) and metric k, ``replicates`` columns of weight sums then ``replicates``
    columns of weighted outcome sums (:func:`divergence.prepare.tallies.boot_columns`).
    Returns, per itemset, metric k's replicate means in columns k * replicates onwards
    (``shifts[k]`` added back; NaN where a replicate holds no row, and for itemsets not
    flagged), as float32.
    """
    out = np.full((len(walk.order), len(shifts) * replicates), np.nan, dtype=np.float32)
    _walk(_boot_step, walk, row_codes, wanted, weights, int(replicates), shifts, out)
    return out


@kernel(i8[::1])
def _preorder(parent):
    """The itemsets in depth-first pre-order, children in index order."""
    n = parent.shape[0]
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n):
        counts[parent[i] + 1] += 1
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        start[i + 1] = start[i] + counts[i + 1]
    fill = start.copy()
    kids = np.empty(max(n - 1, 0), dtype=np.int64)
    for i in range(1, n):
        p = parent[i]
        kids[fill[p]] = i
        fill[p] += 1
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    stack[0] = 0
    top = 1
    k = 0
    while top > 0:
        top -= 1
        node = stack[top]
        order[k] = node
        k += 1
        # push children in reverse so they are visited in order
        for j in range(start[node + 1] - 1, start[node] - 1, -1):
            stack[top] = kids[j]
            top += 1
    return order[:k]


@kernel
def _filter(rows, lo, hi, row_codes, attr, val, dst, out_lo):
    k = out_lo
    for j in range(lo, hi):
        r = rows[j]
        if row_codes[r, attr] == val:
            dst[k] = r
            k += 1
    return k


@kernel
def _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi):
    """Rows of itemset i (visited in pre-order): its parent's rows with its last item; returns depth."""
    d = length[i]
    if d > 0:
        start = f_hi[d - 1]
        end = _filter(arena, f_lo[d - 1], f_hi[d - 1], row_codes, last_attr[i], last_val[i], arena, start)
        f_lo[d] = start
        f_hi[d] = end
    return d


@kernel
def _rows_visited(d, f_lo, f_hi):
    """The rows read to find an itemset's rows at depth d, and its rows."""
    own = f_hi[d] - f_lo[d]
    return own + (f_hi[d - 1] - f_lo[d - 1] if d > 0 else 0)


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], f8[:, ::1], f8[:, ::1])
def _tallies_step(start, quota, order, last_attr, last_val, length, row_codes, arena, f_lo, f_hi, weights, out):
    """:func:`walk_tallies` from the ``start``-th itemset of the walk until ``quota`` units of
    work are done; returns where to resume (the walk's length when done)."""
    n_items = order.shape[0]
    t = weights.shape[1]
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        work += _rows_visited(d, f_lo, f_hi) * t
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            for c in range(t):
                out[i, c] += weights[r, c]
    return n_items


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], i8[::1], f8[:, ::1],
        i8[::1], f8[:, ::1])
def _label_tallies_step(start, quota, order, last_attr, last_val, length, row_codes, arena, f_lo, f_hi, labels,
                        weights, slot, out):
    """:func:`walk_label_tallies` from the ``start``-th itemset of the walk until ``quota`` units
    of work are done; returns where to resume (the walk's length when done)."""
    n_items = order.shape[0]
    t = weights.shape[1]
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        work += _rows_visited(d, f_lo, f_hi)
        o = slot[i]
        if o < 0:
            continue
        work += (f_hi[d] - f_lo[d]) * t
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            base = labels[r] * t
            for c in range(t):
                out[o, base + c] += weights[r, c]
    return n_items


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[:, ::1], i8[:, ::1], i8[::1], f8[:, ::1], i8[::1], f8[:, ::1], i8[::1],
        i8[::1], i8[::1], i8[::1], f8[:, ::1], i8[::1], i8[::1])
def _label_entries_step(start, quota, order, length, item_of, item_bits, stack, labels, weights, slot, scratch, stamp,
                        touched, out_c, out_l, out_t, count, lowest_bit):
    """:func:`walk_label_entries` from the ``start``-th itemset until ``quota`` units of work are
    done or the output has no room for another itemset's labels; returns where to resume.
    ``stack[d]``: the rows (bits) of the itemset at depth d on the current path; ``stamp[label]``
    is the walk position that last touched the label (a label is listed once per itemset, in the
    order its rows first reach it)."""
    n_items = order.shape[0]
    words = stack.shape[1]
    t = weights.shape[1]
    n_labels = scratch.shape[0]
    work = 0
    for k in range(start, n_items):
        if work >= quota or count[0] + n_labels > out_c.shape[0]:
            return k
        i = order[k]
        d = length[i]
        if d > 0:
            b = item_of[i]
            for j in range(words):
                stack[d, j] = stack[d - 1, j] & item_bits[b, j]
        work += words
        o = slot[i]
        if o < 0:
            continue
        nt = 0
        for j in range(words):
            x = stack[d, j]
            while x != 0:
                low = x & -x
                r = j * 64 + lowest_bit[((low * 0x03F79D71B4CB0A89) >> 58) & 63]
                x ^= low
                lab = labels[r]
                if stamp[lab] != k:
                    stamp[lab] = k
                    touched[nt] = lab
                    nt += 1
                for c in range(t):
                    scratch[lab, c] += weights[r, c]
                work += t
        for u in range(nt):
            lab = touched[u]
            m = count[0]
            out_c[m] = o
            out_l[m] = lab
            for c in range(t):
                out_t[m, c] = scratch[lab, c]
                scratch[lab, c] = 0.0
            count[0] = m + 1
    return n_items


@kernel
def _descend_rows(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi):
    """:func:`_descend` without a branch per row (the test's outcome is a coin flip to the
    CPU's branch predictor): every row is written, the end advances on a match."""
    d = length[i]
    if d > 0:
        attr = last_attr[i]
        val = last_val[i]
        k = f_hi[d - 1]
        f_lo[d] = k
        for j in range(f_lo[d - 1], f_hi[d - 1]):
            r = arena[j]
            arena[k] = r
            k += row_codes[r, attr] == val
        f_hi[d] = k
    return d


@kernel
def _cell_offsets(n_values):
    """Start of each attribute's cells (its items, then one for rows without an item)."""
    n_attr = n_values.shape[0]
    offs = np.zeros(n_attr + 1, dtype=np.int64)
    for a in range(n_attr):
        offs[a + 1] = offs[a] + n_values[a] + 1
    return offs


@kernel
def _free_attributes(item_codes, i, free):
    """The attributes itemset i does not fix, into ``free``; returns their count."""
    nf = 0
    for a in range(item_codes.shape[1]):
        if item_codes[i, a] < 0:
            free[nf] = a
            nf += 1
    return nf


@kernel
def _middle(x, m):
    """(x[h-1], x[h], x[h+1]) of sorted x[:m], h = m // 2 (NaN outside): all a median, with
    or without one row, needs."""
    h = m // 2
    s = np.partition(x[:m], h)
    lo = np.nan
    hi = np.nan
    if h > 0:
        lo = s[0]
        for j in range(1, h):
            if s[j] > lo:
                lo = s[j]
    if h + 1 < m:
        hi = s[h + 1]
        for j in range(h + 2, m):
            if s[j] < hi:
                hi = s[j]
    return lo, s[h], hi


@kernel
def _median_of(m, lo, mid):
    """Median of m values from :func:`_middle`'s pieces."""
    if m % 2 == 1:
        return mid
    return 0.5 * (lo + mid)


@kernel
def _loo_median(v, m, lo, mid, hi):
    """Median of m values (pieces from :func:`_middle`) without one row of value v (m >= 2):
    the same whichever tied row is left out, so the value decides."""
    if m % 2 == 0:  # m - 1 odd: the middle of the rest is sorted position h - 1 or h
        return lo if v > lo else mid
    a = mid if v > mid else hi
    b = lo if v > lo else mid
    return 0.5 * (a + b)


@kernel
def _row_reference(which, kind, y, rr, e, cell, cell_n, cell_s, ysum, m, c, rsum, n1, o1, n0, o0,
                   ylo, ymid, yhi, rlo, rmid, rhi):
    """A row's leave-one-out error under reference ``which`` (-2 constant, -1 offset, else a
    cell of an attribute); the formulas of the per-reference passes, term for term."""
    if which == -2:
        if kind == 2:
            return abs(y - _loo_median(y, m, ylo, ymid, yhi))
        if kind == 3:
            p = _loo_majority(ysum, m - ysum, y, c)
            return 1.0 if p != y else 0.0
        p = (ysum - y) / (m - 1.0)
        return (y - p) * (y - p)
    if which == -1:
        if kind == 2:
            return abs(rr - _loo_median(rr, m, rlo, rmid, rhi))
        if kind == 3:
            if rr + y > 0.5:
                p = _loo_majority(o1, n1 - o1, y, 1.0)
            else:
                p = _loo_majority(o0, n0 - o0, y, 0.0)
            return 1.0 if p != y else 0.0
        off = (rsum - rr) / (m - 1.0)
        return (rr - off) * (rr - off)
    if cell_n[cell] > 1.0:
        if kind == 3:
            p = _loo_majority(cell_s[cell], cell_n[cell] - cell_s[cell], y, c)
        else:
            p = (cell_s[cell] - y) / (cell_n[cell] - 1.0)
    else:
        if kind == 3:
            p = _loo_majority(ysum, m - ysum, y, c)
        else:
            p = (ysum - y) / (m - 1.0)
    if kind == 3:
        return 1.0 if p != y else 0.0
    if kind == 2:
        return abs(y - p)
    return (y - p) * (y - p)


@kernel
def _constant_or_offset(tot_c, tot_o, m):
    """The lesser mean error of a slice's first two references and which it is (-2 the constant,
    -1 the offset; -3 when neither is defined); a tie keeps the constant."""
    best_mean = np.inf
    which = -3
    if tot_c / m < best_mean:
        best_mean = tot_c / m
        which = -2
    if tot_o / m < best_mean:
        best_mean = tot_o / m
        which = -1
    return best_mean, which


@kernel
def _loo_majority(ones, zeros, y, tie):
    """The class the other rows of a cell hold most, for a row of class y (``tie`` on a tie).
    Within one of a tie the cell's own majority decides (with the row): plain leave-one-out
    would predict the other class for every row of a balanced cell, an error of 1 where a coin
    errs half the time."""
    o = ones - (1.0 if y > 0.5 else 0.0)
    z = zeros - (0.0 if y > 0.5 else 1.0)
    if o - z >= 2.0:
        return 1.0
    if z - o >= 2.0:
        return 0.0
    if ones > zeros:
        return 1.0
    if ones < zeros:
        return 0.0
    return tie


@kernel
def _add_moments(out, i, w, beta, e, b, bf, r0, has_ref, has_free):
    """Add ``w`` rows' baseline error ``beta``, model error ``e``, chosen reference's error ``b``
    and best model-free reference's error ``bf`` (and the whole dataset's chosen reference's
    error ``r0`` of the same rows) to itemset i's moment sums (:data:`VERDICT_COLUMNS` 7 onwards)."""
    out[i, 7] += w * (beta * beta)
    out[i, 8] += w * (beta * e)
    out[i, 9] += w * (e * e)
    if has_ref:
        out[i, 10] += w * (b * b)
        out[i, 11] += w * (b * e)
        out[i, 14] += w * (b * r0)
        out[i, 15] += w * (e * r0)
        out[i, 16] += w * r0
    if has_free:
        out[i, 12] += w * (bf * bf)
        out[i, 13] += w * (bf * e)


@kernel
def _clear_moments(out, i, has_ref, has_free):
    for j in range(7, 10):
        out[i, j] = 0.0
    if has_ref:
        for j in (10, 11, 14, 15, 16):
            out[i, j] = 0.0
    if has_free:
        out[i, 12] = 0.0
        out[i, 13] = 0.0


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], i8[:, ::1], i8[::1],
        f8[::1], f8[::1], f8[::1], i8, f8[::1], f8[:, ::1])
def _verdict_rows_step(start, quota, order, last_attr, last_val, length, row_codes, arena, f_lo, f_hi, item_codes,
                       n_values, err, target, pred, kind, whole, out):
    """:func:`walk_verdict` over the rows, from the ``start``-th itemset of the walk until ``quota``
    units of work are done; returns where to resume (the walk's length when done). Three passes
    over a slice's rows: its tallies (and each row's cell per attribute the slice does not fix),
    every reference's leave-one-out error, each row's errors into the moment sums. The whole
    dataset (the walk's first itemset) writes its rows' chosen reference's errors into
    ``whole``, which every later itemset's cross sums read."""
    n_rows = row_codes.shape[0]
    n_attr = row_codes.shape[1]
    n_items = order.shape[0]
    ys = np.empty(n_rows)
    rs = np.empty(n_rows)
    es = np.empty(n_rows)
    rid = np.empty(n_rows, dtype=np.int64)
    scratch = np.empty(n_rows)
    cells = np.empty(n_rows * max(n_attr, 1), dtype=np.int32)
    offs = _cell_offsets(n_values)
    cell_n = np.zeros(offs[n_attr])
    cell_s = np.zeros(offs[n_attr])
    free = np.empty(max(n_attr, 1), dtype=np.int64)
    tots = np.empty(max(n_attr, 1))
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = _descend_rows(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        nf = _free_attributes(item_codes, i, free)
        work += _rows_visited(d, f_lo, f_hi) + (f_hi[d] - f_lo[d]) * (3 + nf)
        for t in range(nf):
            a = free[t]
            for v in range(offs[a], offs[a + 1]):
                cell_n[v] = 0.0
                cell_s[v] = 0.0
        # ---- pass 1: the rows' values, sums in row order, each row's cells
        m = 0
        ysum = 0.0
        e_sum = 0.0
        rsum = 0.0
        n1 = 0.0
        o1 = 0.0
        n0 = 0.0
        o0 = 0.0
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            e = err[r]
            if np.isnan(e):
                continue
            y = target[r]
            rr = pred[r] - y
            ys[m] = y
            rs[m] = rr
            es[m] = e
            rid[m] = r
            ysum += y
            e_sum += e
            rsum += rr
            if rr + y > 0.5:
                n1 += 1.0
                o1 += y
            else:
                n0 += 1.0
                o0 += y
            base = m * nf
            for t in range(nf):
                a = free[t]
                v = row_codes[r, a]
                if v < 0:
                    v = n_values[a]
                cell = offs[a] + v
                cells[base + t] = cell
                cell_n[cell] += 1.0
                cell_s[cell] += y
            m += 1
        if m == 0:
            out[i, 0] = 0.0
            continue
        ymean = ysum / m
        ylo = ymid = yhi = rlo = rmid = rhi = np.nan
        if kind == 2:
            for j in range(m):
                scratch[j] = ys[j]
            ylo, ymid, yhi = _middle(scratch, m)
            c = _median_of(m, ylo, ymid)
            if m >= 2:
                for j in range(m):
                    scratch[j] = rs[j]
                rlo, rmid, rhi = _middle(scratch, m)
        elif kind == 3:
            c = 1.0 if ymean > 0.5 else 0.0
        else:
            c = ymean
        # ---- pass 2: the baseline's error and every reference's leave-one-out error
        b_sum = 0.0
        tot_c = 0.0
        tot_o = 0.0
        for t in range(nf):
            tots[t] = 0.0
        for j in range(m):
            y = ys[j]
            if kind == 2:
                b_sum += abs(y - c)
            elif kind == 3:
                b_sum += 1.0 if y != c else 0.0
            else:
                b_sum += (y - c) * (y - c)
            if m < 2:
                continue
            tot_c += _row_reference(-2, kind, y, rs[j], es[j], 0, cell_n, cell_s, ysum, m, c, rsum, n1, o1, n0,
                                    o0, ylo, ymid, yhi, rlo, rmid, rhi)
            tot_o += _row_reference(-1, kind, y, rs[j], es[j], 0, cell_n, cell_s, ysum, m, c, rsum, n1, o1, n0,
                                    o0, ylo, ymid, yhi, rlo, rmid, rhi)
            base = j * nf
            for t in range(nf):
                tots[t] += _row_reference(0, kind, y, rs[j], es[j], cells[base + t], cell_n, cell_s, ysum, m, c,
                                          rsum, n1, o1, n0, o0, ylo, ymid, yhi, rlo, rmid, rhi)
        big_e = e_sum / m
        big_b = min(ymean, 1.0 - ymean) if kind == 3 else b_sum / m
        out[i, 0] = m
        out[i, 1] = big_e
        out[i, 2] = big_b
        # the reference with the least error; on a tie the first (constant, offset, attributes);
        # and the least of those that do not use the model (constant, attributes)
        best_mean = np.inf
        which = -3
        pick = -1
        free_mean = np.inf
        which_free = -3
        pick_free = -1
        if m >= 2:
            best_mean, which = _constant_or_offset(tot_c, tot_o, m)
            if tot_c / m < free_mean:
                free_mean = tot_c / m
                which_free = -2
            for t in range(nf):
                if tots[t] / m < best_mean:
                    best_mean = tots[t] / m
                    which = free[t]
                    pick = t
                if tots[t] / m < free_mean:
                    free_mean = tots[t] / m
                    which_free = free[t]
                    pick_free = t
        has_ref = which != -3
        has_free = which_free != -3
        if has_ref:
            out[i, 3] = best_mean
            out[i, 4] = which
        if has_free:
            out[i, 5] = free_mean
            out[i, 6] = which_free
        # ---- pass 3: each row's errors (the whole dataset's first: every later itemset reads them)
        _clear_moments(out, i, has_ref, has_free)
        for j in range(m):
            y = ys[j]
            r = rid[j]
            if kind == 2:
                beta = abs(y - c)
            elif kind == 3:
                beta = 1.0 if y != c else 0.0
            else:
                beta = (y - c) * (y - c)
            b = 0.0
            bf = 0.0
            if has_ref:
                cell = cells[j * nf + pick] if pick >= 0 else 0
                b = _row_reference(which if pick < 0 else 0, kind, y, rs[j], es[j], cell, cell_n, cell_s, ysum, m,
                                   c, rsum, n1, o1, n0, o0, ylo, ymid, yhi, rlo, rmid, rhi)
            if has_free:
                cell = cells[j * nf + pick_free] if pick_free >= 0 else 0
                bf = _row_reference(-2 if pick_free < 0 else 0, kind, y, rs[j], es[j], cell, cell_n, cell_s, ysum,
                                    m, c, rsum, n1, o1, n0, o0, ylo, ymid, yhi, rlo, rmid, rhi)
            if d == 0:
                whole[r] = b if has_ref else np.nan
            _add_moments(out, i, 1.0, beta, es[j], b, bf, whole[r], has_ref, has_free)
    return n_items


@kernel
def _majority_error(ones, zeros, y, tie):
    """1 when the leave-one-out majority of a cell (``ones``, ``zeros``) misses class y, else 0."""
    return 1.0 if _loo_majority(ones, zeros, y, tie) != y else 0.0


@kernel
def _count_reference(which, y, p, cell, cc, ysum, m, c, ones_o, n_o):
    """A row's leave-one-out 0/1 error under reference ``which`` (-2 the constant, -1 the offset:
    its predicted class ``p`` relabelled, else attribute ``which``'s cell ``cell``), from the
    slice's counts."""
    if which == -2:
        return _majority_error(ysum, m - ysum, y, c)
    if which == -1:
        return _majority_error(ones_o[p], n_o[p] - ones_o[p], y, float(p))
    cn = cc[cell, 0] + cc[cell, 1] + cc[cell, 2] + cc[cell, 3]
    if cn > 1.0:
        cs = cc[cell, 2] + cc[cell, 3]
        return _majority_error(cs, cn - cs, y, c)
    return _majority_error(ysum, m - ysum, y, c)


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], i8[:, ::1], i8[::1],
        f8[::1], i8[::1], i8[::1], f8[::1], f8[:, ::1])
def _verdict_counts_step(start, quota, order, last_attr, last_val, length, codes, arena, f_lo, f_hi, item_codes,
                         n_values, weight, ye, pc, whole, out):
    """:func:`walk_verdict` of a 0/1 error over distinct rows (``codes``, ``weight`` rows of
    class * 2 + error ``ye``, predicted class ``pc``), from the ``start``-th itemset of the walk
    until ``quota`` units of work are done; returns where to resume. One pass over a slice's
    distinct rows counts them per (class, error), per predicted class and per cell of each
    attribute the slice does not fix; every reference's error follows from those counts, and a
    second pass adds each distinct row's errors, times its count, to the moment sums (every term
    0 or 1: exact). The whole dataset writes each distinct row's chosen reference's error into
    ``whole`` first."""
    n_attr = codes.shape[1]
    n_items = order.shape[0]
    offs = _cell_offsets(n_values)
    cc = np.zeros((offs[n_attr], 4))  # per cell, rows per (class, error)
    cnt = np.zeros(8)  # rows per (predicted class, class, error)
    n_ye = np.zeros(4)  # rows per (class, error)
    n_o = np.zeros(2)  # rows per predicted class
    ones_o = np.zeros(2)  # ... of class 1
    free = np.empty(max(n_attr, 1), dtype=np.int64)
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = _descend_rows(i, last_attr, last_val, length, codes, arena, f_lo, f_hi)
        nf = _free_attributes(item_codes, i, free)
        work += _rows_visited(d, f_lo, f_hi) * (2 + nf)
        for t in range(nf):
            a = free[t]
            for v in range(offs[a], offs[a + 1]):
                for q in range(4):
                    cc[v, q] = 0.0
        cnt[:] = 0.0
        for j in range(f_lo[d], f_hi[d]):
            g = arena[j]
            w = weight[g]
            q = ye[g]
            cnt[pc[g] * 4 + q] += w
            for t in range(nf):
                a = free[t]
                v = codes[g, a]
                if v < 0:
                    v = n_values[a]
                cc[offs[a] + v, q] += w
        for q in range(4):
            n_ye[q] = cnt[q] + cnt[4 + q]
        m = n_ye[0] + n_ye[1] + n_ye[2] + n_ye[3]
        if m == 0:
            out[i, 0] = 0.0
            continue
        ysum = n_ye[2] + n_ye[3]
        ymean = ysum / m
        c = 1.0 if ymean > 0.5 else 0.0
        out[i, 0] = m
        out[i, 1] = (n_ye[1] + n_ye[3]) / m
        out[i, 2] = min(ymean, 1.0 - ymean)
        for p in range(2):
            n_o[p] = cnt[p * 4] + cnt[p * 4 + 1] + cnt[p * 4 + 2] + cnt[p * 4 + 3]
            ones_o[p] = cnt[p * 4 + 2] + cnt[p * 4 + 3]
        which = -3
        which_free = -3
        if m >= 2:
            # (1) the constant, (2) the offset: each predicted class relabelled to its majority
            tot_c = 0.0
            tot_o = 0.0
            for q in range(4):
                y = 1.0 if q >= 2 else 0.0
                tot_c += n_ye[q] * _majority_error(ysum, m - ysum, y, c)
                for p in range(2):
                    tot_o += cnt[p * 4 + q] * _majority_error(ones_o[p], n_o[p] - ones_o[p], y, float(p))
            best_mean, which = _constant_or_offset(tot_c, tot_o, m)
            free_mean = tot_c / m
            which_free = -2
            # (3) one majority class per item of each attribute the slice does not fix
            for t in range(nf):
                a = free[t]
                tot = 0.0
                for v in range(offs[a], offs[a + 1]):
                    cn = cc[v, 0] + cc[v, 1] + cc[v, 2] + cc[v, 3]
                    if cn == 0.0:
                        continue
                    cs = cc[v, 2] + cc[v, 3]
                    for q in range(4):
                        y = 1.0 if q >= 2 else 0.0
                        if cn > 1.0:
                            tot += cc[v, q] * _majority_error(cs, cn - cs, y, c)
                        else:
                            tot += cc[v, q] * _majority_error(ysum, m - ysum, y, c)
                if tot / m < best_mean:
                    best_mean = tot / m
                    which = a
                if tot / m < free_mean:
                    free_mean = tot / m
                    which_free = a
            out[i, 3] = best_mean
            out[i, 4] = which
            out[i, 5] = free_mean
            out[i, 6] = which_free
        has_ref = which != -3
        has_free = which_free != -3
        # each distinct row's errors, times its count (the whole dataset's first)
        _clear_moments(out, i, has_ref, has_free)
        for j in range(f_lo[d], f_hi[d]):
            g = arena[j]
            q = ye[g]
            y = 1.0 if q >= 2 else 0.0
            e = float(q % 2)
            beta = 1.0 if y != c else 0.0
            b = 0.0
            bf = 0.0
            if has_ref:
                cell = 0
                if which >= 0:
                    v = codes[g, which]
                    cell = offs[which] + (v if v >= 0 else n_values[which])
                b = _count_reference(which, y, pc[g], cell, cc, ysum, m, c, ones_o, n_o)
            if has_free:
                cell = 0
                if which_free >= 0:
                    v = codes[g, which_free]
                    cell = offs[which_free] + (v if v >= 0 else n_values[which_free])
                bf = _count_reference(which_free, y, 0, cell, cc, ysum, m, c, ones_o, n_o)
            if d == 0:
                whole[g] = b if has_ref else np.nan
            _add_moments(out, i, weight[g], beta, e, b, bf, whole[g], has_ref, has_free)
    return n_items


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], b1[::1], f4[:, ::1], i8,
        f8[::1], f4[:, ::1])
def _boot_step(start, quota, order, last_attr, last_val, length, row_codes, arena, f_lo, f_hi, wanted, weights,
               replicates, shifts, out):
    """:func:`walk_boot_means` from the ``start``-th itemset of the walk until ``quota`` units of
    work are done; returns where to resume (the walk's length when done)."""
    n_items = order.shape[0]
    t = weights.shape[1]
    n_met = shifts.shape[0]
    acc = np.zeros(t, dtype=np.float32)
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        work += _rows_visited(d, f_lo, f_hi)
        if not wanted[i]:
            continue
        work += (f_hi[d] - f_lo[d]) * t
        acc[:] = 0.0
        for j in range(f_lo[d], f_hi[d]):
            acc += weights[arena[j]]
        for m in range(n_met):
            base = BOOT_BLOCKS * m * replicates  # tallies.boot_columns
            for b in range(replicates):
                den = acc[base + b]
                if den > 0:
                    out[i, m * replicates + b] = shifts[m] + acc[base + replicates + b] / den
    return n_items


# ----------------------------------------------------------------------------- the residual tests' sums
# (divergence.stats.findings): one term per (candidate, stratum) entry, the stratum's totals beside it

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


def split_strata(*args) -> int:
    """:func:`_split_strata` (a finding's rows leave their strata): the number of entries written."""
    return int(_split_strata(*args))


def update_entries(*args) -> int:
    """:func:`_update_entries` (entries under strata split since): the number of entries written."""
    return int(_update_entries(*args))
