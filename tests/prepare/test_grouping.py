"""The distinct rows from one key per row (divergence.prepare.grouping) are the compiled merge's
(divergence.prepare.compression.compress_outcomes), row order and tallies bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.prepare.compression import compress_outcomes
from divergence.prepare.grouping import fits_one_key, group_outcomes


def _table(rng, n, sizes):
    codes = np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int32)
    codes[rng.random(n) < 0.97, 1] = 0  # the other items of attribute 1 are rare
    real = rng.normal(3.0, 2.0, n) ** 3  # sums whose bits depend on their order
    real[rng.random(n) < 0.2] = np.nan
    rate = np.where(rng.random(n) < 0.4, np.nan, (rng.random(n) < 0.3).astype(float))
    target = np.where(rng.random(n) < 0.1, np.nan, rng.normal(0, 1, n))
    return np.ascontiguousarray(codes), [real, rate], [target]


@pytest.mark.parametrize("min_count", [1, 40, 400])
def test_the_groups_are_the_compiled_merges_bit_for_bit(min_count):
    rng = np.random.default_rng(7)
    sizes = np.array([3, 7, 2, 12, 5])
    codes, values, aux = _table(rng, 20_000, sizes)
    vshift, tshift = np.array([1.5, 0.0]), np.array([0.25])
    assert fits_one_key(sizes)
    got = group_outcomes(codes, sizes, min_count, values, vshift, aux, tshift)
    want = compress_outcomes(codes, sizes, min_count, np.column_stack(values), vshift, np.column_stack(aux), tshift)
    assert got.codes.dtype == np.int32 and got.codes.flags.c_contiguous
    np.testing.assert_array_equal(got.codes, want.codes)
    assert got.weights.shape == want.weights.shape and got.weights.tobytes() == want.weights.tobytes()
    assert bool((got.codes == -1).any()) == (min_count == 400)  # rare items (about 100 rows) dropped, groups merged


def test_a_key_too_wide_for_one_int64_is_left_to_the_compiled_merge():
    assert fits_one_key(np.array([10] * 17))
    assert not fits_one_key(np.array([10] * 19)) and not fits_one_key(np.array([], dtype=np.int64))
