"""The label-entries walk (lattice.walk_label_entries): every wanted itemset's sums per label of
its rows, in label order, read from its rows or (whole-number weights) as its parent's less the
parent's rows outside it; both ways give the same entries, and the entries are the brute force's."""
import numpy as np
import pytest
from lattice_cases import lattice_of, rows_of

from divergence.mining.lattice import RowBits, by_complement, walk_label_entries, walk_label_entry_blocks, walk_order


def _brute(codes, row_codes, labels, weights, slot):
    """(slot, label, sums) of every wanted itemset, its labels in order."""
    c, lab, t = [], [], []
    for i in np.argsort(slot, kind="stable"):
        if slot[i] < 0:
            continue
        mask = rows_of(codes[i], row_codes)
        for label in np.unique(labels[mask]):
            c.append(slot[i])
            lab.append(label)
            t.append(weights[mask & (labels == label)].sum(axis=0))
    return np.array(c), np.array(lab), np.array(t).reshape(len(t), weights.shape[1])


def _case(seed: int, n_rows: int):
    rng = np.random.default_rng(seed)
    n_values = [3, 2, 4, 3, 2]
    row_codes = np.column_stack([rng.choice(k, n_rows, p=np.r_[0.7, np.full(k - 1, 0.3 / (k - 1))])
                                 for k in n_values]).astype(np.int32)
    codes, parent = lattice_of(row_codes, n_values, 3)
    labels = rng.integers(0, 7, n_rows)
    weights = np.column_stack([rng.integers(1, 4, n_rows), rng.integers(0, 3, n_rows), rng.integers(0, 3, n_rows)])
    slot = np.where(rng.random(len(codes)) < 0.8, 0, -1)
    slot[0] = -1
    slot[slot >= 0] = np.arange(int((slot >= 0).sum()))
    return row_codes, codes, parent, labels, weights.astype(float), slot


@pytest.mark.parametrize("seed,n_rows", [(0, 40), (1, 300), (2, 1000), (3, 130)])
def test_entries_from_the_parent_are_those_from_the_rows(seed, n_rows):
    row_codes, codes, parent, labels, weights, slot = _case(seed, n_rows)
    walk = walk_order(parent, codes)
    bits = RowBits(row_codes, codes)
    size = np.array([rows_of(c, row_codes).sum() for c in codes])
    outside = by_complement(walk, slot, size)
    assert outside.any() and not outside.all()  # both ways are taken
    # every wanted itemset above the share whose parent is summed, and only those
    assert np.all(outside <= (slot >= 0)) and not outside[0]
    direct = walk_label_entries(walk, None, labels, weights, 7, slot, bits=bits)
    via = walk_label_entries(walk, None, labels, weights, 7, slot, bits=bits, outside=outside)
    brute = _brute(codes, row_codes, labels, weights, slot)
    # the walk lists the itemsets in its own order: compare per itemset
    for got in (direct, via):
        order = np.argsort(got[0], kind="stable")
        for x, y in zip((a[order] for a in got), brute):
            assert np.array_equal(x, y)
    for x, y in zip(direct, via):
        assert np.array_equal(x, y)


def test_in_blocks_the_same_entries():
    row_codes, codes, parent, labels, weights, slot = _case(5, 600)
    walk = walk_order(parent, codes)
    bits = RowBits(row_codes, codes)
    size = np.array([rows_of(c, row_codes).sum() for c in codes])
    outside = by_complement(walk, slot, size)
    whole = walk_label_entries(walk, None, labels, weights, 7, slot, bits=bits)
    parts = list(zip(*[tuple(a.copy() for a in b) for b in
                       walk_label_entry_blocks(walk, None, labels, weights, 7, slot, 40, bits=bits, outside=outside)]))
    assert len(parts[0]) > 2
    for x, y in zip(whole, (np.concatenate(p) for p in parts)):
        assert np.array_equal(x, y)


def test_over_some_rows_only_the_same_entries_either_way():
    """A walk over a mask of the rows (a new term's) sums a slice from its parent as well: the
    slices' sizes over every row only choose which way reads fewer rows."""
    row_codes, codes, parent, labels, weights, slot = _case(7, 500)
    walk = walk_order(parent, codes)
    bits = RowBits(row_codes, codes)
    size = np.array([rows_of(c, row_codes).sum() for c in codes])
    outside = by_complement(walk, slot, size)
    rows = np.random.default_rng(7).random(500) < 0.3
    direct = walk_label_entries(walk, None, labels, weights, 7, slot, bits=bits, rows=rows)
    via = walk_label_entries(walk, None, labels, weights, 7, slot, bits=bits, rows=rows, outside=outside)
    brute = _brute(codes, row_codes[rows], labels[rows], weights[rows], slot)
    for got in (direct, via):
        order = np.argsort(got[0], kind="stable")
        for x, y in zip((a[order] for a in got), brute):
            assert np.array_equal(x, y)
