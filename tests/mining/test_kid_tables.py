"""The miner's ways of reading a table give the same itemsets and the same tallies bit for bit (issue
49, memory at scale): a kid that copies its rows' tallies as they come (small), one that refers to
them where they are until rows merge (large), and a root read whole for each kid instead of sorted
(large); forced here on a small table with real-valued tallies whose sums depend on their order."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.mining import mining_driver
from divergence.mining.mining import mine


def _table(seed: int):
    rng = np.random.default_rng(seed)
    n = 6_000
    codes = np.column_stack([rng.integers(0, k, n) for k in (3, 4, 2, 5, 3, 6)]).astype(np.int8)
    codes[rng.random(n) < 0.8, 5] = 0  # the other items of the last attribute are rare: set to -1 in kids
    x = rng.normal(3.0, 2.0, n) ** 3  # sums whose bits depend on their order
    weights = np.column_stack([np.ones(n), np.ones(n), x, x * x])
    return codes, weights, np.array([3, 4, 2, 5, 3, 6])


@pytest.mark.parametrize("exhaustive", [False, True])
@pytest.mark.parametrize("codes_type", [np.int8, np.int32])
def test_every_way_of_reading_a_table_gives_the_same_bits(exhaustive, codes_type, monkeypatch):
    codes, weights, n_values = _table(11)
    kw = dict(min_support=0.03, exhaustive=exhaustive)
    want = mine(codes.astype(codes_type), weights, n_values, **kw)
    assert len(want.codes) > 200
    for eager, root_scan in ((0, 1 << 20), (1 << 19, 0), (0, 0), (40, 1000)):
        monkeypatch.setattr(mining_driver, "SIZES", {"eager": eager, "root_scan": root_scan})
        got = mine(codes.astype(codes_type), weights, n_values, **kw)
        for field in ("codes", "parent", "tallies", "fingerprints"):
            a, b = getattr(want, field), getattr(got, field)
            assert (a is None) == (b is None)
            if a is not None:
                assert a.tobytes() == b.tobytes(), (field, eager, root_scan)
