"""Item codes in 8 bits when every attribute has at most 127 items (issue 49, memory at scale): the
rows' kept codes, the distinct rows and the miner's tables; the same results as in 32 bits."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import mine as mine_frame
from divergence.mining.mining import mine
from divergence.prepare.grouping import code_type, group_outcomes, narrowed


def test_the_code_type_is_8_bits_up_to_127_items():
    assert code_type(np.array([2, 127, 5])) is np.int8
    assert code_type(np.array([2, 128, 5])) is np.int32
    codes = np.array([[-1, 126], [3, 0]], dtype=np.int32)
    small = narrowed(codes, np.array([4, 127]))
    assert small.dtype == np.int8 and np.array_equal(small, codes)
    assert narrowed(codes, np.array([4, 128])) is codes


@pytest.mark.parametrize("min_count", [1, 900])
def test_8_bit_codes_group_as_32_bit_ones(min_count):
    # 14 attributes of 10 items: the items' counts index 154 slots, past what 8 bits hold
    rng = np.random.default_rng(3)
    n, sizes = 30_000, np.full(14, 10)
    codes = np.column_stack([rng.integers(0, 10, n) for _ in sizes]).astype(np.int32)
    codes[rng.random(n) < 0.9, 13] = 0  # the last attribute's other items are rare (about 330 rows each)
    rate = np.where(rng.random(n) < 0.4, np.nan, (rng.random(n) < 0.3).astype(float))
    args = (sizes, float(min_count), [rate], np.zeros(1), [], np.zeros(0))
    wide, wide_totals = group_outcomes(codes, *args, binary=[True])
    small, small_totals = group_outcomes(codes.astype(np.int8), *args, binary=[True])
    assert small.codes.dtype == np.int8
    np.testing.assert_array_equal(small.codes, wide.codes)
    assert small.weights.tobytes() == wide.weights.tobytes()
    assert small_totals.tobytes() == wide_totals.tobytes()
    assert bool((small.codes[:, 13] == -1).any()) == (min_count == 900)


@pytest.mark.parametrize("exhaustive", [False, True])
def test_the_miner_on_8_bit_codes_finds_what_it_finds_on_32_bit_ones(exhaustive):
    rng = np.random.default_rng(5)
    n = 4_000
    codes = np.column_stack([rng.integers(0, k, n) for k in (3, 4, 2, 5, 3)] + [np.zeros(n, int)]).astype(np.int32)
    codes[:, 2] = codes[:, 0] % 2  # an attribute whose items repeat another's rows
    y = (rng.random(n) < 0.3).astype(float)
    weights = np.column_stack([np.ones(n), np.ones(n), y, y])
    n_values = np.array([3, 4, 2, 5, 3, 1])
    kw = dict(min_support=0.02, exhaustive=exhaustive)
    wide = mine(codes, weights, n_values, **kw)
    small = mine(codes.astype(np.int8), weights, n_values, **kw)
    assert len(wide.codes) > 100
    for field in ("codes", "parent", "tallies", "fingerprints", "group_fp"):
        a, b = getattr(wide, field), getattr(small, field)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tobytes() == b.tobytes(), field


def test_a_scan_keeps_its_rows_codes_in_8_bits_unless_an_attribute_has_more_than_127_items():
    rng = np.random.default_rng(1)
    n = 3_000
    df = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.choice(list("xyz"), n),
                       "many": rng.integers(0, 200, n).astype(str), "y": rng.integers(0, 2, n)})
    roles = dict(target="y", prediction="y", positive=1, metrics=["error"], min_support=0.05)
    table = mine_frame(df, attributes=["a", "b"], **roles)
    assert table.kept_rows.codes.dtype == np.int8
    assert table.rows_of(1).sum() == table.columns["count"][1]
    wide = mine_frame(df, attributes=["a", "b", "many"], **roles)
    assert wide.kept_rows.codes.dtype == np.int32
    assert max(b.n_items for b in wide.bins) > 127
    np.testing.assert_array_equal(wide.kept_rows.codes[:, :2], table.kept_rows.codes)
