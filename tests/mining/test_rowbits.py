"""RowBits: each held item's rows as a bitset, row r being bit r % 64 of word r // 64."""
import numpy as np
import pytest

from divergence.mining.lattice import RowBits


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000, 4097])
def test_each_items_bits_are_its_rows(n):
    rng = np.random.default_rng(n)
    codes = rng.integers(-1, 5, size=(n, 3)).astype(np.int32)
    bits = RowBits(codes)
    for a in range(3):
        for v in range(5):
            k = bits.index[a, v] if v < bits.index.shape[1] else -1
            held = bool(np.any(codes[:, a] == v))
            assert (k >= 0) == held
            if not held:
                continue
            word = bits.bits[k]
            rows = [r for r in range(bits.words * 64) if (int(word[r // 64]) >> (r % 64)) & 1]
            assert rows == np.nonzero(codes[:, a] == v)[0].tolist()
    # the items are numbered in attribute order, then value order
    held = bits.index[bits.index >= 0]
    assert sorted(held.tolist()) == list(range(held.size)) and np.all(np.diff(held) > 0)


def test_only_the_items_asked_for_are_held():
    codes = np.array([[0, 1], [1, 1], [2, 0]], dtype=np.int32)
    bits = RowBits(codes, items=np.array([[1, -1], [-1, 0]], dtype=np.int32))
    assert bits.index[0, 1] == 0 and bits.index[1, 0] == 1
    assert bits.index[0, 0] == -1 and bits.index[0, 2] == -1 and bits.index[1, 1] == -1
    assert bits.bits.shape == (2, 1)
    assert bits.bits[0, 0] == 0b010 and bits.bits[1, 0] == 0b100
