"""The shrinkage's one-item-shorter subsets found from the lattice's parents are the rows the
hash lookup (``index_of``) finds, whatever the lattice holds (issue 49: the lookup was most of the
shrinkage's time)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import scan
from divergence.prepare.tallies import metric_tallies
from divergence.stats.shrinkage import shrink_lattice


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 4_000
    df = pd.DataFrame({f"a{j}": rng.integers(0, 2 + j, n) for j in range(5)})
    df["y"] = (rng.random(n) < 0.2 + 0.2 * (df["a0"] == 1) + 0.1 * (df["a2"] == 0)).astype(int)
    df["p"] = (rng.random(n) < 0.3).astype(int)
    return df


@pytest.mark.parametrize("exhaustive", [True, False])
@pytest.mark.parametrize("spoil", ["none", "shuffled parents"])
def test_subsets_from_parents_are_the_lookups(data, exhaustive, spoil):
    table = scan(data, target="y", prediction="p", positive=1, metrics=["fpr", "fnr"], min_support=0.002,
                 exhaustive=exhaustive, attributes=[f"a{j}" for j in range(5)])
    parent = np.asarray(table.lattice.parent).copy()
    if spoil != "none":  # wrong parents: every subset they give is checked and looked up again
        parent[1:] = np.random.default_rng(0).permutation(parent[1:])
    asked = []

    def index_of(codes):
        asked.append(len(codes))
        return table.index_of(codes)

    n, s, q = metric_tallies(table.tallies, 0)
    by_lookup, by_parents = {}, {}
    plain = shrink_lattice(table.codes, n, s, q, True, table.index_of, subsets=by_lookup)
    fast = shrink_lattice(table.codes, n, s, q, True, index_of, subsets=by_parents, parent=parent)
    np.testing.assert_array_equal(fast, plain)
    lengths = [k for k in by_lookup if isinstance(k, int)]
    assert len(lengths) >= 3
    for k in lengths:
        np.testing.assert_array_equal(by_parents[k][0], by_lookup[k][0])
        np.testing.assert_array_equal(by_parents[k][1], by_lookup[k][1])
    if spoil == "none":
        assert sum(asked) == 0  # the lattice holds every subset: nothing looked up
    else:
        assert sum(asked) > 0
