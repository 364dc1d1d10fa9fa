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

__all__ = ["Walk", "walk_order", "run_walk", "descend", "descend_rows", "rows_visited", "walk_tallies", "walk_label_tallies", "walk_label_entries", "walk_label_entry_blocks", "by_complement", "COMPLEMENT_SHARE", "RowBits", "walk_boot_means", "QUOTA"]

#: work units (rows visited, times the columns read) per kernel call: a few milliseconds
QUOTA = 1_000_000


@dataclass(frozen=True)
class Walk:
    """A depth-first pre-order of the itemsets, with each one's last attribute, value and length."""

    order: np.ndarray  # int64
    last_attr: np.ndarray  # int64
    last_val: np.ndarray  # int64
    length: np.ndarray  # int64
    parent: np.ndarray  # int64, -1 for the whole dataset


def walk_order(parent: np.ndarray, codes: np.ndarray) -> Walk:
    """The walk of the itemsets: ``parent[i]`` is itemset i without its last item, ``codes`` their
    item codes (-1: no item on an attribute)."""
    n = len(parent)
    present = codes >= 0
    idx = np.arange(codes.shape[1])
    last_attr = np.where(present, idx, -1).max(axis=1) if codes.shape[1] else np.full(n, -1)
    last_val = np.where(last_attr >= 0, codes[np.arange(n), np.maximum(last_attr, 0)], -1)
    length = present.sum(axis=1)
    parent = np.ascontiguousarray(parent, dtype=np.int64)
    order = _preorder(parent)
    return Walk(order, last_attr.astype(np.int64), last_val.astype(np.int64), length.astype(np.int64), parent)


#: an itemset holding more than this share of its parent's rows is summed from the parent's rows
#: outside it (:func:`by_complement`): those and a few of its own, to list its labels in order
COMPLEMENT_SHARE = 0.6


def by_complement(walk: Walk, slot: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The itemsets of ``walk`` whose label sums cost fewer rows read as their parent's less those of
    the parent's rows outside them: wanted (``slot`` >= 0), holding more than
    :data:`COMPLEMENT_SHARE` of their parent's rows (``size``: each itemset's rows, or a measure
    proportional to them), the parent's sums made anyway (wanted too, or the whole dataset)."""
    parent = walk.parent
    has = parent >= 0
    at = np.maximum(parent, 0)
    size = np.asarray(size, dtype=float)
    return has & (slot >= 0) & ((slot[at] >= 0) | (parent[at] < 0)) & (size > COMPLEMENT_SHARE * size[at])


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


def run_walk(step, walk: Walk, row_codes: np.ndarray, *args, on_progress=None) -> None:
    """Run a resumable walk kernel over every itemset, a quota of work per call; the kernel
    writes its results into the arrays in ``args``. ``on_progress``: told the share of the
    itemsets walked after each call."""
    row_codes = np.asfortranarray(row_codes, dtype=np.int32)  # a row's attribute codes, column by column
    arena, f_lo, f_hi = _arena(row_codes, walk)
    k, n = 0, len(walk.order)
    while k < n:
        k = step(k, QUOTA, walk.order, walk.last_attr, walk.last_val, walk.length, row_codes, arena, f_lo, f_hi,
                 *args)
        if on_progress is not None:
            on_progress(k / n)


def walk_tallies(walk: Walk, row_codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per itemset, the sum of ``weights`` (rows x columns) over its rows, e.g. the rows of
    another table with the same bins (``row_codes``, rows x attributes, Fortran order)."""
    out = np.zeros((len(walk.order), weights.shape[1]), dtype=np.float64)
    run_walk(_tallies_step, walk, row_codes, np.ascontiguousarray(weights, dtype=np.float64), out)
    return out


def walk_label_tallies(walk: Walk, row_codes: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                       n_labels: int, slot: np.ndarray, n_slots: int) -> np.ndarray:
    """Per itemset of interest and label, the sum of ``weights`` (rows x columns) over its rows of
    that label (``labels``, one per row, 0 to ``n_labels - 1``): ``out[slot[i], l, c]`` for each
    itemset i with ``slot[i] >= 0`` (the others are walked through, not kept). Each row adds only
    to its label's block, so the cost is that of :func:`walk_tallies` whatever the labels."""
    t = weights.shape[1]
    out = np.zeros((int(n_slots), int(n_labels) * t), dtype=np.float64)
    run_walk(_label_tallies_step, walk, row_codes, np.ascontiguousarray(labels, dtype=np.int64),
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
        # the items held, attribute by attribute, each attribute's values in order
        values = []
        for a in range(n_attr):
            col = src[:, a]
            values.append(np.flatnonzero(np.bincount(col[col >= 0].astype(np.int64), minlength=top) > 0))
        self.bits = np.zeros((max(sum(v.size for v in values), 1), self.words), dtype=np.int64)
        as_bytes = self.bits.view(np.uint8).reshape(self.bits.shape[0], self.words * 8)
        k = 0
        for a, vals in enumerate(values):
            # an attribute's values' row masks packed a few at a time (at most about 2^24 flags held)
            step = max(1, (1 << 24) // max(self.n_rows, 1))
            for i in range(0, vals.size, step):
                part = vals[i:i + step]
                masks = row_codes[:, a][None, :] == part[:, None]
                as_bytes[k:k + part.size, :(self.n_rows + 7) // 8] = np.packbits(masks, axis=1, bitorder="little")
                self.index[a, part] = np.arange(k, k + part.size)
                k += part.size

    def of(self, mask: np.ndarray) -> np.ndarray:
        """Boolean row masks (the last axis: rows) as bitsets."""
        mask = np.asarray(mask, dtype=bool)
        padded = np.zeros(mask.shape[:-1] + (self.words * 64,), dtype=bool)
        padded[..., :mask.shape[-1]] = mask
        return np.packbits(padded, axis=-1, bitorder="little").view("<i8").astype(np.int64)


def walk_label_entries(walk: Walk, row_codes: np.ndarray | None, labels: np.ndarray, weights: np.ndarray,
                       n_labels: int, slot: np.ndarray, capacity: int = 0, bits: RowBits | None = None,
                       rows: np.ndarray | None = None, outside: np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`walk_label_tallies` as entries: for each itemset i with ``slot[i] >= 0`` and each
    label its rows hold, ``(slot[i], label, sums of weights)``; only the labels present are kept,
    so the output is as large as the entries, not the itemsets times the labels. Each itemset's
    entries are consecutive, in the walk's order, its labels in label order.
    ``capacity``: the entries expected (a guess: the output grows past it); ``bits``: the
    rows' :class:`RowBits` (made from ``row_codes`` when None); ``rows``: a mask of the rows to
    walk (all when None; ``labels`` and ``weights`` are read for those only); ``outside``: the
    itemsets summed as their parent's less the parent's rows outside them (:func:`by_complement`).

    An itemset's rows are a bitset, its parent's and its last item's (one AND per 64 rows):
    finding them costs little next to reading them, however many children a parent has."""
    return next(walk_label_entry_blocks(walk, row_codes, labels, weights, n_labels, slot, None, capacity, bits,
                                        rows, outside))


def walk_label_entry_blocks(walk: Walk, row_codes: np.ndarray | None, labels: np.ndarray, weights: np.ndarray,
                            n_labels: int, slot: np.ndarray, block: int | None, capacity: int = 0,
                            bits: RowBits | None = None, rows: np.ndarray | None = None,
                            outside: np.ndarray | None = None):
    """:func:`walk_label_entries` in blocks of about ``block`` entries (each itemset's entries in
    one block, the blocks in the walk's order: one walk, the entries held at once a block's), or in
    one block when ``block`` is None. A block's arrays are reused for the next: read each before
    asking for the next. ``outside``: the itemsets whose sums are taken as their parent's less those
    of the parent's rows outside them (:func:`by_complement`; whole-number weights only, where the
    difference is exact): the same entries, in the same order, from fewer rows read."""
    if bits is None:
        assert row_codes is not None  # the rows' codes make the bitsets when none are given
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
    nonzero = np.zeros(stack.shape, dtype=np.int64)  # per depth, the words of its rows not 0, in order
    first = np.flatnonzero(stack[0])
    nonzero[0, :first.size] = first
    held = np.zeros(stack.shape[0], dtype=np.int64)
    held[0] = first.size
    t = weights.shape[1]
    mode = (slot >= 0).astype(np.int64)
    if outside is not None and outside.any():
        mode[walk.parent[outside]] = 1  # a parent's sums are read
        mode[outside] = 2
    labels_at = max(int(n_labels), 1)
    scratch = np.zeros((labels_at, t))
    stamp = np.full(labels_at, -1, dtype=np.int64)  # the walk position that last touched a label
    touched = np.zeros(labels_at, dtype=np.int64)
    sums = np.zeros((stack.shape[0], labels_at, t))
    listed = np.zeros((stack.shape[0], labels_at), dtype=np.int64)
    n_listed = np.zeros(stack.shape[0], dtype=np.int64)
    if block is None:
        cap = max(1024, 8 * int((slot >= 0).sum()), 2 * int(n_labels), int(capacity))
    else:
        cap = max(int(block), 1) + max(int(n_labels), 1)
    out_c = np.empty(cap, dtype=np.int64)
    out_l = np.empty(cap, dtype=np.int64)
    out_t = np.empty((cap, t))
    count = np.zeros(1, dtype=np.int64)
    k, n = 0, len(walk.order)
    while k < n:
        if count[0] + int(n_labels) > out_c.size:  # room for one more itemset's labels
            if block is not None:
                m = int(count[0])
                yield out_c[:m], out_l[:m], out_t[:m]
                count[0] = 0
            else:
                grow = 4 * out_c.size + int(n_labels)
                out_c, out_l, out_t = _grown(out_c, grow, count[0]), _grown(out_l, grow, count[0]), \
                    _grown(out_t, grow, count[0])
        k = _label_entries_step(k, QUOTA, walk.order, walk.length, item_of, mode, bits.bits, stack, nonzero, held,
                                labels, weights, slot, sums, listed, n_listed, scratch, stamp, touched, out_c, out_l,
                                out_t, count, _LOWEST_BIT)
    m = int(count[0])
    yield out_c[:m], out_l[:m], out_t[:m]


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


def walk_boot_means(walk: Walk, row_codes: np.ndarray, wanted: np.ndarray, weights: np.ndarray, replicates: int,
                    shifts: np.ndarray, on_progress=None) -> np.ndarray:
    """Bootstrap means of the flagged itemsets, from per-row replicate sums.

    ``weights`` (float32: Poisson counts are exact up to 2**24) holds, per row (here: per
    distinct row) and metric k, ``replicates`` columns of weight sums then ``replicates``
    columns of weighted outcome sums (:func:`divergence.prepare.tallies.boot_columns`).
    Returns, per itemset, metric k's replicate means in columns k * replicates onwards
    (``shifts[k]`` added back; NaN where a replicate holds no row, and for itemsets not
    flagged), as float32.
    """
    out = np.full((len(walk.order), len(shifts) * replicates), np.nan, dtype=np.float32)
    run_walk(_boot_step, walk, row_codes, wanted, weights, int(replicates), shifts, out, on_progress=on_progress)
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
def descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi):
    """Rows of itemset i (visited in pre-order): its parent's rows with its last item; returns depth."""
    d = length[i]
    if d > 0:
        start = f_hi[d - 1]
        end = _filter(arena, f_lo[d - 1], f_hi[d - 1], row_codes, last_attr[i], last_val[i], arena, start)
        f_lo[d] = start
        f_hi[d] = end
    return d


@kernel
def rows_visited(d, f_lo, f_hi):
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
        d = descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        work += rows_visited(d, f_lo, f_hi) * t
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
        d = descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        work += rows_visited(d, f_lo, f_hi)
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


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i8[:, ::1], i8[:, ::1], i8[:, ::1], i8[::1], i8[::1], f8[:, ::1],
        i8[::1], f8[:, :, ::1], i8[:, ::1], i8[::1], f8[:, ::1], i8[::1], i8[::1], i8[::1], i8[::1], f8[:, ::1], i8[::1],
        i8[::1])
def _label_entries_step(start, quota, order, length, item_of, mode, item_bits, stack, nonzero, held, labels, weights,
                        slot, sums, listed, n_listed, scratch, stamp, touched, out_c, out_l, out_t, count, lowest_bit):
    """:func:`walk_label_entries` from the ``start``-th itemset until ``quota`` units of work are
    done or the output has no room for another itemset's labels; returns where to resume.

    ``stack[d]``: the rows (bits) of the itemset at depth d on the current path, of which only the
    words ``nonzero[d, :held[d]]`` (in order) are read: the others are 0, and a child ANDs and reads
    only its parent's. ``mode[i]``: 0, itemset i's rows are not read (not wanted, no child reads
    its sums); 1, they are; 2, its sums are its parent's less those of the parent's rows outside it
    (fewer rows read; whole tallies only, where the difference is exact). ``sums[d, label]`` holds
    the sums of the itemset at depth d (mode 1 or 2) for its labels ``listed[d, :n_listed[d]]``, in
    label order, and 0 for every other label. ``stamp[label]``: the last walk position that listed
    the label (-2 - k while the rows outside itemset k are summed)."""
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
            m = 0
            for u in range(held[d - 1]):
                j = nonzero[d - 1, u]
                x = stack[d - 1, j] & item_bits[b, j]
                if x != 0:
                    stack[d, j] = x
                    nonzero[d, m] = j
                    m += 1
            held[d] = m
        work += words
        how = mode[i]
        if how == 0:
            continue
        for u in range(n_listed[d]):  # the sums of the itemset this depth held before: back to 0
            lab = listed[d, u]
            for c in range(t):
                sums[d, lab, c] = 0.0
        nt = 0
        if how == 1:
            for u in range(held[d]):
                j = nonzero[d, u]
                x = stack[d, j]
                while x != 0:
                    low = x & -x
                    r = j * 64 + lowest_bit[((low * 0x03F79D71B4CB0A89) >> 58) & 63]
                    x ^= low
                    lab = labels[r]
                    if stamp[lab] != k:
                        stamp[lab] = k
                        listed[d, nt] = lab
                        nt += 1
                    for c in range(t):
                        sums[d, lab, c] += weights[r, c]
                    work += t
            # in label order (as the parent's less the rest's come): by insertion when few, else by a pass
            if nt <= 32:
                for u in range(1, nt):
                    lab = listed[d, u]
                    v = u - 1
                    while v >= 0 and listed[d, v] > lab:
                        listed[d, v + 1] = listed[d, v]
                        v -= 1
                    listed[d, v + 1] = lab
            else:
                m = 0
                for lab in range(n_labels):
                    if stamp[lab] == k:
                        listed[d, m] = lab
                        m += 1
                work += n_labels
        else:
            # the parent's rows outside the itemset, summed per label in scratch
            b = item_of[i]
            nout = 0
            for u in range(held[d - 1]):
                j = nonzero[d - 1, u]
                x = stack[d - 1, j] & ~item_bits[b, j]
                while x != 0:
                    low = x & -x
                    r = j * 64 + lowest_bit[((low * 0x03F79D71B4CB0A89) >> 58) & 63]
                    x ^= low
                    lab = labels[r]
                    if stamp[lab] != -2 - k:
                        stamp[lab] = -2 - k
                        touched[nout] = lab
                        nout += 1
                    for c in range(t):
                        scratch[lab, c] += weights[r, c]
                    work += t
            for u in range(n_listed[d - 1]):  # the parent's labels, in label order: so are the itemset's
                lab = listed[d - 1, u]
                if sums[d - 1, lab, 0] - scratch[lab, 0] > 0.5:
                    for c in range(t):
                        sums[d, lab, c] = sums[d - 1, lab, c] - scratch[lab, c]
                    listed[d, nt] = lab
                    nt += 1
            for u in range(nout):
                lab = touched[u]
                for c in range(t):
                    scratch[lab, c] = 0.0
            work += n_listed[d - 1]
        n_listed[d] = nt
        o = slot[i]
        if o < 0:
            continue
        for u in range(nt):
            lab = listed[d, u]
            m = count[0]
            out_c[m] = o
            out_l[m] = lab
            for c in range(t):
                out_t[m, c] = sums[d, lab, c]
            count[0] = m + 1
    return n_items


@kernel
def descend_rows(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi):
    """:func:`descend` without a branch per row (the test's outcome is a coin flip to the
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
        d = descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        work += rows_visited(d, f_lo, f_hi)
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
