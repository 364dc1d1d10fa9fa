"""The canonical order of itemsets (length, then items in attribute order, a missing item last) and
each set of rows' first itemset in it: the fast paths give what the definition gives."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.mining import canonical


def _lattice(rng, attrs: int, longest: int):
    n_values = rng.integers(1, 6, attrs)
    rows = []
    for _ in range(int(rng.integers(1, 400))):
        row = np.full(attrs, -1, np.int32)
        for a in rng.choice(attrs, int(rng.integers(0, min(attrs, longest) + 1)), replace=False):
            row[a] = rng.integers(0, n_values[a])
        rows.append(row)
    codes = np.unique(np.array(rows), axis=0)
    return codes[rng.permutation(len(codes))], n_values


def _by_definition(codes, n_values):
    length = (codes >= 0).sum(axis=1)
    digits = np.where(codes >= 0, codes, n_values[None, :]).astype(np.int64)
    return np.lexsort(tuple(digits[:, j] for j in range(codes.shape[1] - 1, -1, -1)) + (length,))


@pytest.mark.parametrize("attrs,longest", [(3, 3), (12, 4), (45, 4), (60, 6)])
def test_the_order_is_the_definitions(attrs, longest):
    rng = np.random.default_rng(attrs)
    for _ in range(40):
        codes, n_values = _lattice(rng, attrs, longest)
        expected = _by_definition(codes, n_values)
        np.testing.assert_array_equal(canonical.canonical_permutation(codes, n_values), expected)
        fast = canonical._by_item_sequence(codes, n_values, (codes >= 0).sum(axis=1))
        assert fast is not None and np.array_equal(fast, expected)


def test_each_set_of_rows_keeps_its_first_itemset():
    rng = np.random.default_rng(7)
    for _ in range(40):
        codes, n_values = _lattice(rng, 8, 4)
        fp = rng.integers(0, 4, (len(codes), 2)).astype(np.int64)  # few values: many shared sets of rows
        counts = rng.integers(1, 3, (len(codes), 1)).astype(float)
        order = _by_definition(codes, n_values)
        seen, expected = set(), []
        for i in order:
            key = (int(fp[i, 0]), int(fp[i, 1]), float(counts[i, 0]))
            if key not in seen:
                seen.add(key)
                expected.append(i)
        np.testing.assert_array_equal(canonical.keep_first_of_each_rows(codes, counts, fp, n_values), expected)
