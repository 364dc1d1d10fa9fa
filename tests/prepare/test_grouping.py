"""The distinct rows from one key per row (divergence.prepare.grouping) are the compiled merge's
(divergence.prepare.compression.compress_outcomes) as the miner sorts them, and the root's tallies
are the sum the miner took over the compiled merge's rows, bit for bit; the miner takes them as they are."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.prepare.compression import compress, compress_outcomes
from divergence.prepare.grouping import fits_one_key, group_outcomes, sequential_sum, sorted_distinct


def _table(rng, n, sizes):
    codes = np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int32)
    codes[rng.random(n) < 0.97, 1] = 0  # the other items of attribute 1 are rare
    real = rng.normal(3.0, 2.0, n) ** 3  # sums whose bits depend on their order
    real[rng.random(n) < 0.2] = np.nan
    rate = np.where(rng.random(n) < 0.4, np.nan, (rng.random(n) < 0.3).astype(float))
    target = np.where(rng.random(n) < 0.1, np.nan, rng.normal(0, 1, n))
    return np.ascontiguousarray(codes), [real, rate], [target]


@pytest.mark.parametrize("min_count", [1, 40, 400])
def test_the_groups_are_the_compiled_merges_sorted_bit_for_bit(min_count):
    rng = np.random.default_rng(7)
    sizes = np.array([3, 7, 2, 12, 5])
    codes, values, aux = _table(rng, 20_000, sizes)
    vshift, tshift = np.array([1.5, 0.0]), np.array([0.25])
    assert fits_one_key(sizes)
    got, totals = group_outcomes(codes, sizes, min_count, values, vshift, aux, tshift)
    merged = compress_outcomes(codes, sizes, min_count, np.column_stack(values), vshift, np.column_stack(aux), tshift)
    want = compress(merged.codes, merged.weights)  # the miner's own merge: sorted by the codes
    assert got.codes.dtype == np.int32 and got.codes.flags.c_contiguous
    np.testing.assert_array_equal(got.codes, want.codes)
    assert got.weights.shape == want.weights.shape and got.weights.tobytes() == want.weights.tobytes()
    assert totals.tobytes() == merged.weights.sum(axis=0).tobytes()  # what the miner summed
    assert sorted_distinct(got.codes) and not sorted_distinct(merged.codes)
    assert bool((got.codes == -1).any()) == (min_count == 400)  # rare items (about 100 rows) dropped, groups merged


def test_a_sum_a_block_at_a_time_is_numpys_sum_of_the_gathered_rows():
    rng = np.random.default_rng(1)
    weights = rng.normal(0, 1, (5_003, 4)) ** 3
    index = rng.permutation(5_003)
    assert sequential_sum(weights, index, block=64).tobytes() == weights[index].sum(axis=0).tobytes()


def test_rows_out_of_order_or_repeated_are_not_taken_as_merged():
    codes = np.array([[-1, 1], [0, -1], [0, 2], [1, 0]], dtype=np.int32)
    assert sorted_distinct(codes)
    assert not sorted_distinct(codes[[0, 2, 1, 3]]) and not sorted_distinct(codes[[0, 1, 1, 3]])


def test_a_key_too_wide_for_one_int64_is_left_to_the_compiled_merge():
    assert fits_one_key(np.array([10] * 17))
    assert not fits_one_key(np.array([10] * 19)) and not fits_one_key(np.array([], dtype=np.int64))


def test_the_miner_mines_the_sorted_groups_as_the_compiled_merges_rows():
    from divergence.mining.mining import mine

    rng = np.random.default_rng(3)
    sizes = np.array([4, 3, 5, 2])
    codes, values, _ = _table(rng, 5_000, sizes)
    got, totals = group_outcomes(codes, sizes, 1, values, np.array([0.5, 0.0]), [], np.zeros(0))
    merged = compress_outcomes(codes, sizes, 1, np.column_stack(values), np.array([0.5, 0.0]), np.empty((5_000, 0)),
                               np.zeros(0))
    for exhaustive in (False, True):
        a = mine(got.codes, got.weights, sizes, min_support=0.01, exhaustive=exhaustive, total=totals)
        b = mine(merged.codes, merged.weights, sizes, min_support=0.01, exhaustive=exhaustive)
        np.testing.assert_array_equal(a.codes, b.codes)
        assert a.tallies.tobytes() == b.tallies.tobytes()
