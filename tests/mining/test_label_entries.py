"""walk_label_entries: the entries of each itemset's labels, the dense tallies' nonzero cells, in
arrays no larger than they need (the findings' final walks hold them on Adult: issue 49)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import scan
from divergence.mining.lattice import walk_label_entries, walk_label_tallies, walk_order


@pytest.mark.parametrize("n_labels", [1, 7, 300])
def test_entries_are_the_dense_tallies_and_hold_no_spare_room(n_labels):
    rng = np.random.default_rng(n_labels)
    n = 3_000
    df = pd.DataFrame({f"a{j}": rng.integers(0, 3 + j, n) for j in range(4)})
    df["y"] = rng.integers(0, 2, n)
    table = scan(df, outcome="y", attributes=[f"a{j}" for j in range(4)], min_support=0.001, exhaustive=True)
    codes = table.kept_rows.codes
    walk = walk_order(table.lattice.parent, table.codes)
    labels = rng.integers(0, n_labels, codes.shape[0])
    weights = np.column_stack([np.ones(codes.shape[0]), rng.random(codes.shape[0])])
    slot = np.where(rng.random(len(table)) < 0.8, np.arange(len(table)), -1)
    dense = walk_label_tallies(walk, codes, labels, weights, n_labels, slot, len(table))
    # capacity 1: the arrays grow many times on the way
    c, lab, tallies = walk_label_entries(walk, codes, labels, weights, n_labels, slot, capacity=1)
    rebuilt = np.zeros_like(dense)
    np.add.at(rebuilt, (c, lab), tallies)
    np.testing.assert_allclose(rebuilt, dense, rtol=1e-12, atol=0)
    assert np.all(dense[c, lab, 0] > 0) and c.size == int((dense[:, :, 0] > 0).sum())
    for a in (c, lab, tallies):
        held = a.base.nbytes if a.base is not None else a.nbytes
        assert held <= a.nbytes * 8 / 7 + 64, (held, a.nbytes)
