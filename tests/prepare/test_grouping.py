"""The distinct rows from one key per row (divergence.prepare.grouping) are the compiled merge's
(divergence.prepare.compression.compress_outcomes) as the miner sorts them, and the root's tallies
are the sum the miner took over the compiled merge's rows, bit for bit; the miner takes them as they are."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.prepare import grouping
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


def _keys_by(how, monkeypatch):
    """Every key space too wide to count directly (the keys sorted), or too wide to sort with the rows'
    positions as well (pandas' hash of the keys)."""
    if how != "counted":
        monkeypatch.setattr(grouping, "DIRECT_PER_ROW", 0)
        monkeypatch.setattr(grouping, "DIRECT_MIN", 0)
    if how == "hashed":
        monkeypatch.setattr(grouping, "SORT_BITS", 0)


@pytest.mark.parametrize("how", ["counted", "sorted", "hashed"])
@pytest.mark.parametrize("min_count", [1, 40, 400])
def test_the_groups_are_the_compiled_merges_sorted_bit_for_bit(min_count, how, monkeypatch):
    _keys_by(how, monkeypatch)
    rng = np.random.default_rng(7)
    sizes = np.array([3, 7, 2, 12, 5])
    codes, values, aux = _table(rng, 20_000, sizes)
    vshift, tshift = np.array([1.5, 0.0]), np.array([0.25])
    assert fits_one_key(sizes)
    got, totals = group_outcomes(codes, sizes, min_count, values, vshift, aux, tshift)
    merged = compress_outcomes(codes, sizes, min_count, np.column_stack(values), vshift, np.column_stack(aux), tshift)
    want = compress(merged.codes, merged.weights)  # the miner's own merge: sorted by the codes
    assert got.codes.dtype == np.int8 and got.codes.flags.c_contiguous  # every attribute of <= 127 items
    np.testing.assert_array_equal(got.codes, want.codes)
    assert got.weights.shape == want.weights.shape and got.weights.tobytes() == want.weights.tobytes()
    assert totals.tobytes() == merged.weights.sum(axis=0).tobytes()  # what the miner summed
    assert sorted_distinct(got.codes) and not sorted_distinct(merged.codes)
    assert bool((got.codes == -1).any()) == (min_count == 400)  # rare items (about 100 rows) dropped, groups merged


@pytest.mark.parametrize("how", ["counted", "sorted", "hashed"])
def test_rates_sum_to_whole_numbers_in_any_order_and_their_squares_are_their_sums(how, monkeypatch):
    _keys_by(how, monkeypatch)
    rng = np.random.default_rng(11)
    sizes = np.array([4, 9, 3, 6])
    codes, (_, rate), _ = _table(rng, 30_000, sizes)
    count = np.where(rng.random(30_000) < 0.5, np.nan, rng.integers(0, 5, 30_000).astype(float))  # whole, not 0/1
    values, vshift = [rate, count], np.array([0.0, 0.0])
    got, totals = group_outcomes(codes, sizes, 25, values, vshift, [], np.zeros(0), binary=[True, False])
    merged = compress_outcomes(codes, sizes, 25, np.column_stack(values), vshift, np.empty((30_000, 0)), np.zeros(0))
    want = compress(merged.codes, merged.weights)
    np.testing.assert_array_equal(got.codes, want.codes)
    assert got.weights.tobytes() == want.weights.tobytes()
    assert totals.tobytes() == merged.weights.sum(axis=0).tobytes()
    got, totals = group_outcomes(codes, sizes, 25, [rate], vshift[:1], [], np.zeros(0), binary=[True])  # counts only
    merged = compress_outcomes(codes, sizes, 25, rate[:, None], vshift[:1], np.empty((30_000, 0)), np.zeros(0))
    assert got.weights.tobytes() == compress(merged.codes, merged.weights).weights.tobytes()
    assert totals.tobytes() == merged.weights.sum(axis=0).tobytes()


@pytest.mark.parametrize("how", ["counted", "sorted", "hashed"])
def test_codes_given_with_items_already_dropped_group_as_the_miners_merge(how, monkeypatch):
    _keys_by(how, monkeypatch)
    rng = np.random.default_rng(5)
    sizes = np.array([3, 5, 4])
    codes, values, aux = _table(rng, 8_000, sizes)
    codes[rng.random(8_000) < 0.2, 2] = -1  # an item dropped upstream
    got, _ = group_outcomes(codes, sizes, 1, values, np.array([1.5, 0.0]), aux, np.array([0.25]))
    weights = np.column_stack([np.ones(8_000)] + [w for v, s in zip(values, (1.5, 0.0))
                                                   for w in _metric(v, s)] + list(_metric(aux[0], 0.25))[1:])
    want = compress(codes, weights)
    np.testing.assert_array_equal(got.codes, want.codes)
    assert got.weights.tobytes() == want.weights.tobytes()
    assert (got.codes[:, 2] == -1).any() and sorted_distinct(got.codes)


def _metric(v, shift):
    defined = ~np.isnan(v)
    x = np.where(defined, v - shift, 0.0)
    return defined.astype(float), x, x * x


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
