"""The grouped rows as they stream in from an engine: held narrow while they come, the same table after."""
import numpy as np
import pyarrow as pa

from divergence.engines.engine_scan import _collect, _sorted_rows, _whole


def test_narrow_blocks_give_the_int32_codes_and_float64_tallies():
    # a first batch of small codes (int8), then one needing int16, then whole and fractional tallies
    codes = [np.array([[0, 1], [2, -1]]), np.array([[300, 1], [-1, 0]]), np.array([[5, 5]])]
    tallies = [np.array([[1.0, 0.0], [2.0, 1.0]]), np.array([[3.0, 0.5], [1.0, -0.0]]), np.array([[4.0, 2.0]])]
    batches = [pa.RecordBatch.from_arrays([pa.array(c[:, 0], pa.int32()), pa.array(c[:, 1], pa.int32()),
                                           pa.array(t[:, 0]), pa.array(t[:, 1])], names=["a0", "a1", "t0", "t1"])
               for c, t in zip(codes, tallies)]
    released = []
    out_codes, out_weights, bins = _collect(iter(batches), [("bins", None, None)] * 2, lambda: released.append(1))
    assert released == [1]
    assert out_codes.dtype == np.int32 and out_codes.tolist() == np.vstack(codes).tolist()
    assert out_weights.dtype == np.float64
    want = np.vstack(tallies)
    assert np.array_equal(out_weights, want) and np.array_equal(np.signbit(out_weights), np.signbit(want))
    assert bins == ["bins", "bins"]


def test_whole_tallies_are_held_as_int32_only_when_exact():
    assert _whole(np.array([[1.0, 2.0], [0.0, 7.0]])).dtype == np.int32
    for kept in ([[1.5, 2.0]], [[-0.0, 1.0]], [[-1.0, 1.0]], [[2.0 ** 31, 1.0]], [[np.nan, 1.0]]):
        assert _whole(np.array(kept)).dtype == np.float64


def test_rows_sorted_in_place_as_a_sorted_copy():
    from divergence.prepare.discretize import AttributeBins

    rng = np.random.default_rng(0)
    codes = rng.integers(-1, 4, size=(500, 3)).astype(np.int32)
    weights = rng.normal(size=(500, 4))
    bins = [AttributeBins(name=f"a{j}", kind="categorical", labels=["w", "x", "y", "z"]) for j in range(3)]
    mult = np.array([25, 5, 1])
    order = np.argsort(codes @ mult, kind="stable")
    want_c, want_w = codes[order], weights[order] + 0.0
    got_c, got_w = _sorted_rows(codes.copy(), weights.copy(), bins)
    assert np.array_equal(got_c, want_c) and np.array_equal(got_w, want_w)
